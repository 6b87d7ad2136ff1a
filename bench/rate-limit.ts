// What the rate limiter costs: the same request (GET one user, anonymous) against two real
// servers on the same data, one with the limiter on (an allowance too large to run out) and one
// with it off, measured by autocannon in interleaved rounds (on, off, on, off, ...).
//
//   npm run bench:rate-limit [-- --rounds 3 --seconds 5 --connections 10]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { build, formatSummary, interleave, machine, startServe, summarize, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
  },
})

async function main(): Promise<void> {
  build()
  const dir = join('bench', '.data')
  mkdirSync(dir, { recursive: true })
  const dbPath = join(dir, 'rate-limit.db')
  rmSync(dbPath, { force: true })
  const env = { DATABASE_URL: `sqlite:${dbPath}`, LOG_LEVEL: 'info' }
  threadline(['migrate'], env)
  threadline(['seed'], env)

  const servers = {
    'limiter on': await startServe({ ...env, RATE_LIMIT_MAX: '1000000000' }),
    'limiter off': await startServe({ ...env, RATE_LIMIT_MAX: '0' }),
  }
  const options = { rounds: Number(args.rounds), seconds: Number(args.seconds), connections: Number(args.connections) }
  let rounds
  try {
    rounds = await interleave(servers, { path: '/api/v1/users/1' }, options)
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()))
  }

  console.log(`\nGET /api/v1/users/1, ${args.connections} connections, ${args.rounds} rounds of ${args.seconds} s, medians (min-max)\n`)
  const summary = Object.fromEntries(Object.entries(rounds).map(([name, results]) => [name, summarize(results)]))
  for (const [name, s] of Object.entries(summary)) console.log(formatSummary(name, s))
  const on = summary['limiter on']?.requestsPerSecond ?? 0
  const off = summary['limiter off']?.requestsPerSecond ?? 1
  console.log(`\nthe limiter costs ${((1 - on / off) * 100).toFixed(1)}% of throughput`)
  mkdirSync(join('bench', 'results'), { recursive: true })
  writeFileSync(
    join('bench', 'results', 'rate-limit.json'),
    `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), rounds, summary }, null, 2)}\n`,
  )
  console.log('written to bench/results/rate-limit.json')
}

await main()
