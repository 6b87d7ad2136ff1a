// Soak: a real `threadline serve` (SQLite, demo data, logging at info) under a mixed load for a set
// time: readers (one user, a page of users, a GraphQL query with nested posts), writers (comments,
// which are published as events), WebSocket subscribers to those comments that stay, and others
// that come and go (one opened and one closed every 200 ms). Reports errors (any
// answer but the expected status, any failed request, any comment a staying subscriber never got:
// must be 0), p50/p99 latency per operation, the server's resident memory sampled every second and
// its V8 heap in use (from /metrics) every 5 s: at the end of the warm-up, at the end, and the
// trend in between per minute (flat: growing no more than --flat-mb-per-min, for both; giving
// memory back is fine; the first --warmup seconds are not judged).
//
//   npm run bench:soak [-- --seconds 60 --warmup 15 --workers 8 --subscribers 50 --flat-mb-per-min 10]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { openSubscribers, type Subscriber } from './deliveries.js'
import { build, machine, rssOf, startServe, stats, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '15' },
    workers: { type: 'string', default: '8' },
    subscribers: { type: 'string', default: '50' },
    'flat-mb-per-min': { type: 'string', default: '10' },
  },
})

interface Operation {
  name: string
  /** Share of the requests. */
  weight: number
  request(token: string, n: number): { method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string }
  status: number
}

const json = { 'content-type': 'application/json' }
const OPERATIONS: Operation[] = [
  { name: 'GET one user', weight: 4, status: 200, request: (_t, n) => ({ method: 'GET', path: `/api/v1/users/${(n % 10) + 1}` }) },
  {
    name: 'GET a page of users',
    weight: 2,
    status: 200,
    request: (_t, n) => ({ method: 'GET', path: `/api/v2/users?limit=20&sort=name&page=${(n % 3) + 1}` }),
  },
  {
    name: 'GraphQL users { posts }',
    weight: 2,
    status: 200,
    request: () => ({
      method: 'POST',
      path: '/graphql',
      headers: json,
      body: JSON.stringify({ query: '{ users(limit: 5) { name posts(limit: 3) { title } } }' }),
    }),
  },
  {
    name: 'POST a comment',
    weight: 1,
    status: 201,
    request: (token, n) => ({
      method: 'POST',
      path: '/api/v1/users/1/posts/1/comments',
      headers: { ...json, authorization: `Bearer ${token}` },
      body: JSON.stringify({ content: `soak ${n}` }),
    }),
  },
]

async function main(): Promise<void> {
  build()
  const seconds = Number(args.seconds)
  const warmup = Number(args.warmup)
  const data = join('bench', '.data')
  mkdirSync(data, { recursive: true })
  const db = join(data, 'soak.db')
  for (const part of ['', '-wal', '-shm']) rmSync(`${db}${part}`, { force: true })
  const env = {
    DATABASE_URL: `sqlite:${db}`,
    SEED_DEMO_DATA: 'true',
    RATE_LIMIT_MAX: '1000000000',
    RATE_LIMIT_AUTHENTICATED_MAX: '1000000000',
    GRAPHQL_MAX_CONNECTIONS_PER_CALLER: '100000',
  }
  const server = await startServe(env)
  const token = threadline(['tokens', 'create', '--user', '2'], { DATABASE_URL: env.DATABASE_URL }).trim()
  const subscribers: Subscriber[] = []
  const pool = new Pool(server.url, { connections: Number(args.workers) })
  const latencies = new Map(OPERATIONS.map((op) => [op.name, [] as number[]]))
  const errors: string[] = []
  const comments: string[] = []
  const memory: { second: number; rssMb: number }[] = []
  const heap: { second: number; rssMb: number }[] = []
  let churned = 0
  const deck = OPERATIONS.flatMap((op) => Array.from({ length: op.weight }, () => op))
  let n = 0
  try {
    await openSubscribers(subscribers, server.url, '1', Number(args.subscribers))
    const started = performance.now()
    const second = () => Math.round((performance.now() - started) / 1000)
    const sampler = setInterval(() => memory.push({ second: second(), rssMb: rssOf(server.pid) / 2 ** 20 }), 1000)
    const heapSampler = setInterval(() => {
      void fetch(`${server.url}/metrics`)
        .then((response) => response.text())
        .then((text) => {
          const used = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1]
          if (used !== undefined) heap.push({ second: second(), rssMb: Number(used) / 2 ** 20 })
        })
        .catch(() => undefined)
    }, 5000)
    // Subscribers that come and go: the subscribe and unsubscribe paths, where a leak would sit.
    const passing: Subscriber[] = []
    const churn = setInterval(() => {
      passing.shift()?.socket.terminate()
      void openSubscribers(passing, server.url, '1', 1).then(
        () => churned++,
        () => undefined,
      )
    }, 200)
    console.log(`soak: ${seconds} s, ${args.workers} workers, ${subscribers.length} subscribers, against ${server.url} ...`)
    await Promise.all(
      Array.from({ length: Number(args.workers) }, async () => {
        while (performance.now() - started < seconds * 1000) {
          const i = n++
          const op = deck[i % deck.length] as Operation
          const sent = performance.now()
          try {
            const response = await pool.request(op.request(token, i))
            await response.body.arrayBuffer()
            if (response.statusCode !== op.status) errors.push(`${op.name}: ${response.statusCode}`)
            else if (op.name === 'POST a comment') comments.push(`soak ${i}`)
          } catch (error) {
            errors.push(`${op.name}: ${(error as Error).message}`)
          }
          latencies.get(op.name)?.push(performance.now() - sent)
        }
      }),
    )
    clearInterval(sampler)
    clearInterval(heapSampler)
    clearInterval(churn)
    for (const s of passing) s.socket.terminate()
    // Every comment reaches every subscriber (they were all open before the first).
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline && subscribers.some((s) => comments.some((c) => !s.arrivals.has(c)))) await sleep(50)
  } finally {
    for (const s of subscribers) s.socket.terminate()
    await pool.close()
    await server.stop()
  }

  const lost = subscribers.reduce((sum, s) => sum + comments.filter((c) => !s.arrivals.has(c)).length, 0)
  const round = (x: number) => Math.round(x * 10) / 10
  const rows = OPERATIONS.map((op) => {
    const s = stats(latencies.get(op.name) ?? [])
    return { operation: op.name, requests: s.n, p50: round(s.p50), p99: round(s.p99) }
  })
  /** Least-squares slope of the samples after warm-up, in MB per minute: one sample cannot make it. */
  const trend = (samples: { second: number; rssMb: number }[]) => {
    const judged = samples.filter((m) => m.second >= warmup)
    const xs = judged.map((m) => m.second)
    const ys = judged.map((m) => m.rssMb)
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length
    const my = ys.reduce((a, b) => a + b, 0) / ys.length
    const sxy = xs.reduce((sum, x, i) => sum + (x - mx) * ((ys[i] as number) - my), 0)
    const sxx = xs.reduce((sum, x) => sum + (x - mx) ** 2, 0)
    return { atWarm: judged[0]?.rssMb ?? Number.NaN, atEnd: judged.at(-1)?.rssMb ?? Number.NaN, slope: (sxy / sxx) * 60 }
  }
  const { atWarm, atEnd, slope } = trend(memory)
  const heapTrend = trend(heap)
  const peak = Math.max(...memory.map((m) => m.rssMb))

  console.log(`${'operation'.padEnd(26)} ${'requests'.padStart(9)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)}`)
  for (const r of rows)
    console.log(`${r.operation.padEnd(26)} ${String(r.requests).padStart(9)} ${r.p50.toFixed(1).padStart(7)} ${r.p99.toFixed(1).padStart(7)}`)
  console.log(`comments delivered: ${comments.length} x ${subscribers.length} subscribers, ${lost} lost; ${churned} more subscribers came and went`)
  console.log(`errors: ${errors.length}${errors.length > 0 ? ` (first: ${errors[0]})` : ''}`)
  console.log(
    `server RSS: ${round(memory[0]?.rssMb ?? Number.NaN)} MB at 1 s, ${round(atWarm)} MB after the ${warmup} s warm-up, ${round(atEnd)} MB at the end, peak ${round(peak)} MB; trend after warm-up ${round(slope)} MB/min`,
  )
  console.log(
    `server V8 heap in use: ${round(heapTrend.atWarm)} MB after the warm-up, ${round(heapTrend.atEnd)} MB at the end; trend ${round(heapTrend.slope)} MB/min`,
  )
  mkdirSync(join('bench', 'results'), { recursive: true })
  writeFileSync(
    join('bench', 'results', 'soak.json'),
    `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), args, operations: rows, comments: comments.length, subscribers: subscribers.length, churnedSubscribers: churned, lost, errors: errors.length, firstErrors: errors.slice(0, 5), memory: { afterWarmupMb: round(atWarm), endMb: round(atEnd), peakMb: round(peak), trendMbPerMin: round(slope), samples: memory.map((m) => ({ ...m, rssMb: round(m.rssMb) })) }, heapUsed: { afterWarmupMb: round(heapTrend.atWarm), endMb: round(heapTrend.atEnd), trendMbPerMin: round(heapTrend.slope), samples: heap.map((m) => ({ second: m.second, mb: round(m.rssMb) })) } }, null, 2)}\n`,
  )
  console.log('written to bench/results/soak.json')
  const problems = [
    ...(errors.length > 0 ? [`${errors.length} errors`] : []),
    ...(lost > 0 ? [`${lost} deliveries lost`] : []),
    // Growth is what a leak looks like; memory given back after the warm-up's peak is not.
    ...(!(slope <= Number(args['flat-mb-per-min'])) ? [`memory grows ${round(slope)} MB/min after warm-up, over ${args['flat-mb-per-min']}`] : []),
    ...(!(heapTrend.slope <= Number(args['flat-mb-per-min']))
      ? [`heap grows ${round(heapTrend.slope)} MB/min after warm-up, over ${args['flat-mb-per-min']}`]
      : []),
  ]
  if (problems.length > 0) {
    console.error(problems.join('\n'))
    process.exitCode = 1
  }
}

await main()
