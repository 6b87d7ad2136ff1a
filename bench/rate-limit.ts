// What the rate limiter costs: the same request (GET one user, anonymous) against two real
// servers on the same data, one with the limiter on (an allowance too large to run out) and one
// with it off, measured by autocannon in interleaved rounds (on, off, on, off, ...).
//
//   npm run bench:rate-limit [-- --rounds 3 --seconds 5 --connections 10]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { build, machine, median, startServe, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
  },
})

interface Round {
  requestsPerSecond: number
  p50: number
  p99: number
  errors: number
}

async function load(url: string): Promise<Round> {
  const result = await autocannon({
    url: `${url}/api/v1/users/1`,
    connections: Number(args.connections),
    duration: Number(args.seconds),
  })
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  }
}

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
  const rounds: Record<string, Round[]> = { 'limiter on': [], 'limiter off': [] }
  try {
    for (const server of Object.values(servers)) await load(server.url) // warm up
    for (let round = 0; round < Number(args.rounds); round++) {
      for (const [name, server] of Object.entries(servers)) rounds[name]?.push(await load(server.url))
    }
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()))
  }

  console.log(`\nGET /api/v1/users/1, ${args.connections} connections, ${args.rounds} rounds of ${args.seconds} s, medians (min-max)\n`)
  const summary: Record<string, { requestsPerSecond: number; p50: number; p99: number; errors: number }> = {}
  for (const [name, results] of Object.entries(rounds)) {
    const rps = results.map((r) => r.requestsPerSecond)
    summary[name] = {
      requestsPerSecond: median(rps),
      p50: median(results.map((r) => r.p50)),
      p99: median(results.map((r) => r.p99)),
      errors: results.reduce((sum, r) => sum + r.errors, 0),
    }
    const s = summary[name]
    console.log(
      `${name.padEnd(12)} ${Math.round(s.requestsPerSecond).toString().padStart(7)} req/s (${Math.round(Math.min(...rps))}-${Math.round(Math.max(...rps))})` +
        `  p50 ${s.p50} ms  p99 ${s.p99} ms  errors ${s.errors}`,
    )
  }
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
