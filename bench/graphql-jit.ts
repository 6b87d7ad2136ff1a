// What graphql-jit buys: the same GraphQL operations against two real servers on the same data,
// one compiling documents with graphql-jit (the default) and one with graphql-js's interpreter,
// measured by autocannon in interleaved rounds (jit, interpreter, jit, interpreter, ...).
//
//   npm run bench:graphql-jit [-- --rounds 3 --seconds 5 --connections 10]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { build, formatSummary, interleave, type Load, machine, type Round, startServe, summarize, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
  },
})

const graphqlLoad = (query: string, variables?: Record<string, unknown>): Load => ({
  path: '/graphql',
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query, variables }),
})

const SCENARIOS: Record<string, Load> = {
  'user(id) { id name email }': graphqlLoad('query($id: ID!) { user(id: $id) { id name email } }', { id: '1' }),
  'users { id name posts { id title } }': graphqlLoad('{ users { id name posts { id title } } }'),
}

async function main(): Promise<void> {
  build()
  const dir = join('bench', '.data')
  mkdirSync(dir, { recursive: true })
  const dbPath = join(dir, 'graphql-jit.db')
  rmSync(dbPath, { force: true })
  const env = { DATABASE_URL: `sqlite:${dbPath}`, LOG_LEVEL: 'info', RATE_LIMIT_MAX: '0' }
  threadline(['migrate'], env)
  threadline(['seed'], env)

  const servers = {
    jit: await startServe({ ...env, GRAPHQL_JIT: 'true' }),
    interpreter: await startServe({ ...env, GRAPHQL_JIT: 'false' }),
  }
  const options = { rounds: Number(args.rounds), seconds: Number(args.seconds), connections: Number(args.connections) }
  const results: Record<string, Record<string, Round[]>> = {}
  try {
    for (const [scenario, load] of Object.entries(SCENARIOS)) results[scenario] = await interleave(servers, load, options)
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()))
  }

  console.log(`\nPOST /graphql, ${args.connections} connections, ${args.rounds} rounds of ${args.seconds} s, medians (min-max)`)
  const summary: Record<string, Record<string, ReturnType<typeof summarize>>> = {}
  for (const [scenario, rounds] of Object.entries(results)) {
    console.log(`\n${scenario}`)
    summary[scenario] = Object.fromEntries(Object.entries(rounds).map(([name, r]) => [name, summarize(r)]))
    for (const [name, s] of Object.entries(summary[scenario])) console.log(formatSummary(name, s))
    const jit = summary[scenario].jit?.requestsPerSecond ?? 0
    const interpreter = summary[scenario].interpreter?.requestsPerSecond ?? 1
    console.log(`jit / interpreter: ${(jit / interpreter).toFixed(2)}x`)
  }
  mkdirSync(join('bench', 'results'), { recursive: true })
  writeFileSync(
    join('bench', 'results', 'graphql-jit.json'),
    `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), options, results, summary }, null, 2)}\n`,
  )
  console.log('\nwritten to bench/results/graphql-jit.json')
}

await main()
