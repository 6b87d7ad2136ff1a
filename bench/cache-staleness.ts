// How stale another instance's representation cache can be: two `threadline serve` on one store
// (PostgreSQL with Redis beside it, and two processes on one SQLite file), the shipped defaults.
// For each of --writes writes: B reads a user (so its cache holds it), A answers a PATCH of that
// user, and B is asked again and again until it answers the new representation. The figure is the
// time from A's answer to B's first new answer; B's polls go one after another, so it includes
// the poll's own time: the SQLite figure, where B checks the file's data version on every request
// and is never stale, is that floor. Also counted: the old answers B gave after A's answer.
//
//   npm run bench:cache-staleness [-- --writes 300]
import { parseArgs } from 'node:util'
import { benchDatabase, BENCH_REDIS_URL, build, type RunningServer, startServe, stats, threadline } from './lib.js'

const { values: args } = parseArgs({ options: { writes: { type: 'string', default: '300' } } })
const WRITES = Number(args.writes)
const database = benchDatabase('threadline_bench_staleness')

/** The delays, in ms, from A's answer to a PATCH to B's first answer showing it, and B's old answers meanwhile. */
async function measure(env: Record<string, string>): Promise<{ delays: number[]; staleAnswers: number }> {
  threadline(['migrate'], env)
  threadline(['seed', '--users', '200', '--posts', '0', '--comments', '0', '--todos', '0'], env)
  const token = threadline(['tokens', 'create', '--user', '1'], env).trim()
  const serverEnv = { ...env, RATE_LIMIT_MAX: '1000000000', RATE_LIMIT_AUTHENTICATED_MAX: '1000000000' }
  const servers: RunningServer[] = []
  try {
    servers.push(await startServe(serverEnv), await startServe(serverEnv))
    const [a, b] = servers as [RunningServer, RunningServer]
    const delays: number[] = []
    let staleAnswers = 0
    for (let i = 0; i < WRITES; i++) {
      const path = `/api/v1/users/${2 + (i % 199)}`
      const name = `Renamed ${i}`
      await (await fetch(`${b.url}${path}`)).text()
      const written = await fetch(`${a.url}${path}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      })
      const answeredAt = performance.now()
      if (written.status !== 200) throw new Error(`PATCH ${path}: ${written.status} ${await written.text()}`)
      for (;;) {
        const body = (await (await fetch(`${b.url}${path}`)).json()) as { data: { name: string } }
        if (body.data.name === name) break
        staleAnswers++
        if (performance.now() - answeredAt > 10_000) throw new Error(`B still answers the old ${path} 10 s after the write`)
      }
      delays.push(performance.now() - answeredAt)
    }
    return { delays, staleAnswers }
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
  }
}

const show = (what: string, { delays, staleAnswers }: { delays: number[]; staleAnswers: number }) => {
  const s = stats(delays)
  console.log(`${what}: p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms, max ${s.max.toFixed(2)} ms over ${s.n} writes; ${staleAnswers} old answers`)
}

build()
await database.create()
try {
  show(
    'PostgreSQL + Redis, from A answering a PATCH to B answering it',
    await measure({ DATABASE_URL: database.url, REDIS_URL: BENCH_REDIS_URL, REDIS_KEY_PREFIX: `staleness-${process.pid}:` }),
  )
} finally {
  await database.drop()
}
const file = `bench/.data/staleness-${process.pid}.db`
show('SQLite, two processes on one file, the same', await measure({ DATABASE_URL: `sqlite:${file}` }))
