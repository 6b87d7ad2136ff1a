// What one caller alone gets from the shipped defaults, against the same server with the scheduler
// off (HTTP_MAX_IN_FLIGHT=0): GET one user, GraphQL user(id) and the window's end page (GET
// /api/v1/users?sort=-age,name&page=100&limit=100), from one address, interleaved. On SQLite
// (--store sqlite, the default) the data is bench:abuse's database (200,000 users); on PostgreSQL
// (--store postgres) a database of 10,000 users and 100,000 posts made by `threadline seed` on
// BENCH_DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432/postgres), dropped at the
// end. With --old-dir, a third server runs another checkout's build with its defaults (the code
// before a change).
//
// The servers raise the rate limit's allowance (one address sends more than a minute's in a
// second) and keep no representation cache (the same URL repeated would be answered from memory).
//
//   npm run bench:lone-caller [-- --store postgres --rounds 2 --seconds 5 --connections 50 --old-dir /tmp/old --skip-build]
import { closeSync, copyFileSync, fsyncSync, mkdirSync, openSync, rmSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort } from '../test/helpers/private-redis.js'
import { withClient } from '../test/helpers/test-store.js'
import { abuseDatabase } from './abuse-data.js'
import { build, formatSummary, interleave, type Load, machine, pinServersApart, type RunningServer, startServer, summarize, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    'old-dir': { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
    'skip-build': { type: 'boolean', default: false },
  },
})

const DATA = join('bench', '.data')
const LOADS: (Load & { name: string })[] = [
  { name: 'GET one user', path: '/api/v1/users/1' },
  {
    name: 'GraphQL user(id)',
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'query($id: ID!) { user(id: $id) { id name email } }', variables: { id: '1' } }),
    verifyBody: (body) => !body.includes('"errors"'),
  },
  { name: "window's end page", path: '/api/v1/users?sort=-age,name&page=100&limit=100' },
]
const ADMIN_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const POSTGRES_DATABASE = 'threadline_lone_caller'
const ENV = {
  SEED_DEMO_DATA: 'false',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_MAX: '1000000000',
  RATE_LIMIT_AUTHENTICATED_MAX: '1000000000',
  HTTP_REPRESENTATION_CACHE_MB: '0',
}

async function serve(dir: string, databaseUrl: string, env: Record<string, string>): Promise<RunningServer> {
  const port = await freePort()
  return startServer(
    [join(dir, 'dist', 'main.js'), 'serve'],
    { ...ENV, DATABASE_URL: databaseUrl, ...env, PORT: String(port), HOST: '127.0.0.1' },
    `http://127.0.0.1:${port}/health`,
  )
}

/** The database both servers read: a fresh copy of bench:abuse's SQLite file, or a seeded PostgreSQL database; and how to be rid of it. */
async function database(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (args.store === 'postgres') {
    const drop = () =>
      withClient(ADMIN_DATABASE_URL, (client) => client.query(`drop database if exists ${POSTGRES_DATABASE} with (force)`)).then(() => undefined)
    await drop()
    await withClient(ADMIN_DATABASE_URL, (client) => client.query(`create database ${POSTGRES_DATABASE}`))
    const url = new URL(ADMIN_DATABASE_URL)
    url.pathname = `/${POSTGRES_DATABASE}`
    threadline(['migrate'], { DATABASE_URL: url.toString() })
    threadline(['seed', '--users', '10000', '--posts', '100000', '--comments', '0', '--todos', '0'], { DATABASE_URL: url.toString() })
    return { url: url.toString(), drop }
  }
  if (args.store !== 'sqlite') throw new Error(`--store is sqlite or postgres, not ${args.store}`)
  const seeded = await abuseDatabase('.', DATA, { users: 200_000, posts: 1_000_000, comments: 100_000 })
  mkdirSync(DATA, { recursive: true })
  const db = join(DATA, 'lone-caller.db')
  copyFileSync(seeded, db)
  const fd = openSync(db, 'r+')
  fsyncSync(fd)
  closeSync(fd)
  return { url: `sqlite:${db}`, drop: async () => ['', '-wal', '-shm'].forEach((part) => rmSync(`${db}${part}`, { force: true })) }
}

async function main(): Promise<void> {
  if (!args['skip-build']) build()
  const pinned = pinServersApart()
  const db = await database()
  const servers: Record<string, RunningServer> = {}
  try {
    servers['defaults'] = await serve('.', db.url, {})
    servers['scheduler off'] = await serve('.', db.url, { HTTP_MAX_IN_FLIGHT: '0' })
    if (args['old-dir'] !== undefined) servers['old defaults'] = await serve(resolve(args['old-dir']), db.url, {})
    const options = { rounds: Number(args.rounds), seconds: Number(args.seconds), connections: Number(args.connections) }
    console.log(
      `${new Date().toISOString()}, ${args.store}, ${machine().cpus} cores, Node ${process.version}${pinned ? ', servers pinned to core 0' : ''};` +
        ` one address, ${options.connections} connections, ${options.rounds} interleaved rounds of ${options.seconds} s, medians (min-max)`,
    )
    for (const load of LOADS) {
      const load1m = loadavg()[0]?.toFixed(2)
      const rounds = await interleave(servers, load, options)
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
    await db.drop()
  }
}

await main()
