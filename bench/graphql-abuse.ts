// How long a real `threadline serve` (default limits, demo data) takes to refuse each kind of abusive
// GraphQL document: deep nesting, a costly query, wide aliasing, a directive flood, a fragment cycle,
// huge documents (many tokens, deep brackets, a megabyte of them), a batch past the limit, a batch of
// abusive operations, an introspection flood, and 1,000 fields in one selection set (each request a
// fresh document, by a comment, so no cache of parses helps: graphql's validation compares such
// fields in pairs, and the fields-per-selection limit must refuse them before it runs). Each is sent --times times, one after another over
// one connection, and timed from the client (so the figures include the round trip); every answer
// must be the refusal (400, BAD_REQUEST; a batch within the limit: 200 with each operation refused). Fails if any refusal took longer than --max-ms
// (30 ms for the documents of 1,000 fields in one selection set).
// test/graphql/abuse.test.ts shows each refusal happens before anything runs; this shows how fast.
//
//   npm run bench:graphql-abuse [-- --times 200 --max-ms 50]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { build, machine, startServe, stats } from './lib.js'

const { values: args } = parseArgs({ options: { times: { type: 'string', default: '200' }, 'max-ms': { type: 'string', default: '50' } } })

/** `{ viewer { posts { author { posts ... { id } } } } }`, `levels` deep. */
const nested = (levels: number) => {
  const names = Array.from({ length: levels - 1 }, (_, i) => (i === 0 ? 'viewer' : i % 2 === 1 ? 'posts' : 'author'))
  return `{ ${names.join(' { ')} { id ${'} '.repeat(levels - 1)}}`
}
const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: users { id }`).join(' ')} }`
const introspectionFlood = '{ __schema { types { fields { type { fields { type { fields { type { fields { type { fields { name } } } } } } } } } } } }'

/** `{ viewer { id } viewer { id } ... }`, 975 times (4,000 tokens hold no more), or `{ viewer { id id ... } }`, 1,000 times; a fresh comment each time. */
const sameFields = (i: number) => ({ query: `# ${i}\n{ ${'viewer { id } '.repeat(975)}}` })
const sameLeaves = (i: number) => ({ query: `# ${i}\n{ viewer { ${'id '.repeat(1000)}} }` })

/**
 * Each abuse as the JSON body POSTed to /graphql (given the request's number, a body of its own each
 * time), and its own bound where it is tighter than --max-ms: the documents of 1,000 fields in a
 * selection set must be refused within 30 ms, since graphql's validation would spend far more on them.
 */
const ABUSES: { name: string; body: unknown; maxMs?: number }[] = [
  { name: 'depth 11', body: { query: nested(11) } },
  { name: 'depth 1,330', body: { query: nested(1330) } },
  { name: 'cost (3 lists of 100)', body: { query: '{ users(limit: 100) { posts(limit: 100) { comments(limit: 100) { id } } } }' } },
  { name: '16 aliases', body: { query: aliases(16) } },
  { name: '2,000 aliases', body: { query: aliases(2000) } },
  { name: 'directive flood', body: { query: `query Q($t: Boolean = true) { users { id ${'@include(if: $t) '.repeat(200)} } }` } },
  { name: 'fragment cycle', body: { query: '{ users { ...A } } fragment A on User { name ...B } fragment B on User { id ...A }' } },
  { name: '4,200 tokens', body: { query: `{ ${Array.from({ length: 2100 }, (_, i) => `f${i}: __typename`).join(' ')} }` } },
  { name: '~800 KB document', body: { query: `{ ${Array.from({ length: 45_000 }, (_, i) => `f${i}: __typename`).join(' ')} }` } },
  { name: 'introspection flood', body: { query: introspectionFlood } },
  { name: 'batch of 11', body: Array.from({ length: 11 }, () => ({ query: '{ viewer { id } }' })) },
  { name: 'batch of 10 floods', body: Array.from({ length: 10 }, () => ({ query: introspectionFlood })) },
  { name: '975 × viewer, fresh', body: sameFields, maxMs: 30 },
  { name: '1,000 × id, fresh', body: sameLeaves, maxMs: 30 },
]

function codesOf(body: unknown): unknown[] {
  const answers = Array.isArray(body) ? body : [body]
  return answers.flatMap((answer: { error?: { code?: unknown }; errors?: { extensions?: { code?: unknown } }[] }) =>
    answer.error !== undefined ? [answer.error.code] : (answer.errors ?? [{}]).map((error) => error.extensions?.code),
  )
}

async function main(): Promise<void> {
  build()
  const data = join('bench', '.data')
  mkdirSync(data, { recursive: true })
  const db = join(data, 'graphql-abuse.db')
  for (const part of ['', '-wal', '-shm']) rmSync(`${db}${part}`, { force: true })
  const server = await startServe({ DATABASE_URL: `sqlite:${db}`, SEED_DEMO_DATA: 'true', RATE_LIMIT_MAX: '1000000000' })
  const pool = new Pool(server.url, { connections: 1 })
  const times = Number(args.times)
  const maxMs = Number(args['max-ms'])
  const results: { abuse: string; bytes: number; p50: number; p99: number; max: number; maxMs: number; wrongAnswers: number }[] = []
  try {
    for (const abuse of ABUSES) {
      const bodyOf = (i: number): unknown => (typeof abuse.body === 'function' ? (abuse.body as (i: number) => unknown)(i) : abuse.body)
      const payload = JSON.stringify(bodyOf(0))
      const latencies: number[] = []
      let wrongAnswers = 0
      for (let i = 0; i < times + 10; i++) {
        const body = JSON.stringify(bodyOf(i))
        const started = performance.now()
        const response = await pool.request({
          method: 'POST',
          path: '/graphql',
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
          body,
        })
        const answer = await response.body.json()
        // The first ten warm the route up; every answer is checked.
        if (i >= 10) latencies.push(performance.now() - started)
        const codes = codesOf(answer)
        // A batch is answered 200 with one answer per operation: each must be the refusal.
        const status = Array.isArray(abuse.body) && Array.isArray(answer) ? 200 : 400
        if (response.statusCode !== status || codes.length === 0 || codes.some((code) => code !== 'BAD_REQUEST')) {
          wrongAnswers++
          if (wrongAnswers === 1) console.error(`${abuse.name}: answered ${response.statusCode} ${JSON.stringify(answer).slice(0, 300)}`)
        }
      }
      const s = stats(latencies)
      const round = (ms: number) => Math.round(ms * 100) / 100
      results.push({
        abuse: abuse.name,
        bytes: Buffer.byteLength(payload),
        p50: round(s.p50),
        p99: round(s.p99),
        max: round(s.max),
        maxMs: Math.min(maxMs, abuse.maxMs ?? maxMs),
        wrongAnswers,
      })
    }
  } finally {
    await pool.close()
    await server.stop()
  }
  console.log(`${'abuse'.padEnd(22)} ${'bytes'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'max ms'.padStart(7)}  (${times} refusals each)`)
  for (const r of results) {
    console.log(
      `${r.abuse.padEnd(22)} ${String(r.bytes).padStart(8)} ${r.p50.toFixed(2).padStart(7)} ${r.p99.toFixed(2).padStart(7)} ${r.max.toFixed(2).padStart(7)}${r.wrongAnswers > 0 ? `  ${r.wrongAnswers} not refused` : ''}`,
    )
  }
  mkdirSync(join('bench', 'results'), { recursive: true })
  writeFileSync(
    join('bench', 'results', 'graphql-abuse.json'),
    `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), args, results }, null, 2)}\n`,
  )
  console.log('written to bench/results/graphql-abuse.json')
  const problems = [
    ...results.filter((r) => r.wrongAnswers > 0).map((r) => `${r.abuse}: ${r.wrongAnswers} answers were not a BAD_REQUEST refusal`),
    ...results.filter((r) => r.max > r.maxMs).map((r) => `${r.abuse}: a refusal took ${r.max} ms, over ${r.maxMs} ms`),
  ]
  if (problems.length > 0) {
    console.error(problems.join('\n'))
    process.exitCode = 1
  } else {
    console.log(`every refusal within ${maxMs} ms (the documents of 1,000 fields within 30)`)
  }
}

await main()
