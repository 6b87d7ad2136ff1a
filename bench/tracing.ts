// What tracing costs: GET one user and a GraphQL query against two real servers on the same data,
// one with tracing off (the default: no OTEL_* variable) and one with it on, exporting every span
// (the default sampler, each request a new trace) by OTLP/HTTP protobuf to a local receiver that
// reads and discards them; measured by autocannon in interleaved rounds (off, on, off, on, ...).
//
//   npm run bench:tracing [-- --rounds 3 --seconds 5 --connections 10]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { build, discardingOtlpReceiver, formatSummary, interleave, type Load, machine, pinServersApart, startServe, summarize, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
  },
})

const LOADS: Record<string, Load> = {
  'GET one user': { path: '/api/v1/users/1' },
  'GraphQL user(id)': {
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'query($id: ID!) { user(id: $id) { id name email } }', variables: { id: '1' } }),
    verifyBody: (body) => !body.includes('"errors"'),
  },
}

async function main(): Promise<void> {
  build()
  const pinned = pinServersApart()
  const dir = join('bench', '.data')
  mkdirSync(dir, { recursive: true })
  const dbPath = join(dir, 'tracing.db')
  rmSync(dbPath, { force: true })
  const env = { DATABASE_URL: `sqlite:${dbPath}`, LOG_LEVEL: 'info', RATE_LIMIT_MAX: '1000000000' }
  threadline(['migrate'], env)
  threadline(['seed'], env)

  const receiver = await discardingOtlpReceiver()
  const servers = {
    'tracing off': await startServe(env),
    'tracing on': await startServe({ ...env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url }),
  }
  const options = { rounds: Number(args.rounds), seconds: Number(args.seconds), connections: Number(args.connections) }
  const results: Record<string, Record<string, ReturnType<typeof summarize>>> = {}
  try {
    for (const [name, load] of Object.entries(LOADS)) {
      const rounds = await interleave(servers, load, options)
      results[name] = Object.fromEntries(Object.entries(rounds).map(([server, measured]) => [server, summarize(measured)]))
    }
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()))
    await receiver.close()
  }

  console.log(
    `\n${args.connections} connections, ${args.rounds} rounds of ${args.seconds} s, interleaved, medians (min-max)${pinned ? ', servers pinned to core 0' : ''}`,
  )
  for (const [name, summary] of Object.entries(results)) {
    console.log(`\n${name}`)
    for (const [server, s] of Object.entries(summary)) console.log(formatSummary(server, s))
    const off = summary['tracing off']?.requestsPerSecond ?? 1
    const on = summary['tracing on']?.requestsPerSecond ?? 0
    console.log(`tracing on costs ${((1 - on / off) * 100).toFixed(1)}% of throughput`)
  }
  const { exports, bytes } = receiver.received()
  console.log(`\nthe receiver took ${exports} exports, ${(bytes / 2 ** 20).toFixed(1)} MiB of spans`)
  mkdirSync(join('bench', 'results'), { recursive: true })
  writeFileSync(join('bench', 'results', 'tracing.json'), `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), results }, null, 2)}\n`)
  console.log('written to bench/results/tracing.json')
}

await main()
