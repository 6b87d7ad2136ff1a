// What one caller alone gets from the shipped defaults, against the same server with the scheduler
// off (HTTP_MAX_IN_FLIGHT=0): GET one user and the window's end page (GET /api/v1/users?sort=-age,name
// &page=100&limit=100) on bench:abuse's database, from one address, interleaved. With --old-dir, a
// third server runs another checkout's build with its defaults (the code before a change).
//
// Both servers raise the rate limit's allowance (one address sends more than a minute's in a
// second) and keep no representation cache (the same URL repeated would be answered from memory).
//
//   npm run bench:lone-caller [-- --rounds 2 --seconds 5 --connections 50 --old-dir /tmp/old --skip-build]
import { closeSync, copyFileSync, fsyncSync, mkdirSync, openSync, rmSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort } from '../test/helpers/private-redis.js'
import { abuseDatabase } from './abuse-data.js'
import { build, formatSummary, interleave, machine, pinServersApart, type RunningServer, startServer, summarize } from './lib.js'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    'old-dir': { type: 'string' },
    'skip-build': { type: 'boolean', default: false },
  },
})

const DATA = join('bench', '.data')
const LOADS = [
  { name: 'GET one user', path: '/api/v1/users/1' },
  { name: "window's end page", path: '/api/v1/users?sort=-age,name&page=100&limit=100' },
]
const ENV = {
  SEED_DEMO_DATA: 'false',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_MAX: '1000000000',
  RATE_LIMIT_AUTHENTICATED_MAX: '1000000000',
  HTTP_REPRESENTATION_CACHE_MB: '0',
}

async function serve(dir: string, db: string, env: Record<string, string>): Promise<RunningServer> {
  const port = await freePort()
  return startServer(
    [join(dir, 'dist', 'main.js'), 'serve'],
    { ...ENV, DATABASE_URL: `sqlite:${db}`, ...env, PORT: String(port), HOST: '127.0.0.1' },
    `http://127.0.0.1:${port}/health`,
  )
}

async function main(): Promise<void> {
  if (!args['skip-build']) build()
  const pinned = pinServersApart()
  const seeded = await abuseDatabase('.', DATA, { users: 200_000, posts: 1_000_000, comments: 100_000 })
  mkdirSync(DATA, { recursive: true })
  const db = join(DATA, 'lone-caller.db')
  copyFileSync(seeded, db)
  const fd = openSync(db, 'r+')
  fsyncSync(fd)
  closeSync(fd)
  const servers: Record<string, RunningServer> = {}
  try {
    servers['defaults'] = await serve('.', db, {})
    servers['scheduler off'] = await serve('.', db, { HTTP_MAX_IN_FLIGHT: '0' })
    if (args['old-dir'] !== undefined) servers['old defaults'] = await serve(resolve(args['old-dir']), db, {})
    const options = { rounds: Number(args.rounds), seconds: Number(args.seconds), connections: Number(args.connections) }
    console.log(
      `${new Date().toISOString()}, ${machine().cpus} cores, Node ${process.version}${pinned ? ', servers pinned to core 0' : ''};` +
        ` one address, ${options.connections} connections, ${options.rounds} interleaved rounds of ${options.seconds} s, medians (min-max)`,
    )
    for (const load of LOADS) {
      const load1m = loadavg()[0]?.toFixed(2)
      const rounds = await interleave(servers, { path: load.path }, options)
      const summaries = Object.fromEntries(Object.entries(rounds).map(([name, r]) => [name, summarize(r)]))
      console.log(`\n${load.name} (${load.path}), load average ${load1m} at the start, ${loadavg()[0]?.toFixed(2)} at the end`)
      for (const [name, summary] of Object.entries(summaries)) console.log(`  ${formatSummary(name, summary)}`)
      const off = summaries['scheduler off']?.requestsPerSecond ?? Number.NaN
      for (const name of Object.keys(summaries).filter((n) => n !== 'scheduler off')) {
        console.log(`  ${name} / scheduler off: ${((summaries[name]?.requestsPerSecond ?? Number.NaN) / off).toFixed(2)}`)
      }
    }
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()))
    for (const part of ['', '-wal', '-shm']) rmSync(`${db}${part}`, { force: true })
  }
}

await main()
