// A bulk write against the single creates it replaces: the time of one POST of 1,000 posts (an
// array, one transaction) beside 1,000 POSTs of one post each, sent one after another and 10 at a
// time, against a real server on SQLite and on PostgreSQL (when one answers at BENCH_POSTGRES_URL).
// Each figure is the median of --rounds rounds; every round starts from the same user.
//
//   npm run bench:bulk [-- --rounds 2 --posts 1000 --concurrency 10 --sqlite-only]
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { benchDatabase, build, median, startServe, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    posts: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '10' },
    'sqlite-only': { type: 'boolean', default: false },
  },
})
const ROUNDS = Number(args.rounds)
const POSTS = Number(args.posts)
const CONCURRENCY = Number(args.concurrency)

const post = (i: number) => ({ title: `Bulk bench post ${i}`, content: 'A sentence or two of content, as a loaded post would have.' })

interface Store {
  name: string
  /** The server's environment: its database, made and migrated, user 1 in it. */
  prepare(): Promise<Record<string, string>>
  cleanUp(): Promise<void>
}

/** Sends one POST of `body` as the token's user; fails the bench on anything but 201. */
async function create(base: string, token: string, body: unknown): Promise<void> {
  const response = await fetch(new URL('/api/v1/users/1/posts', base), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', prefer: 'return=minimal' },
    body: JSON.stringify(body),
  })
  await response.arrayBuffer()
  if (response.status !== 201) throw new Error(`POST answered ${response.status}`)
}

/** The milliseconds `run` takes. */
async function timed(run: () => Promise<void>): Promise<number> {
  const started = performance.now()
  await run()
  return performance.now() - started
}

/** The three ways of writing POSTS posts, each timed ROUNDS times, in turns. */
async function measure(base: string, token: string): Promise<Record<string, number>> {
  const ways: Record<string, () => Promise<void>> = {
    [`1 bulk POST of ${POSTS}`]: () =>
      create(
        base,
        token,
        Array.from({ length: POSTS }, (_, i) => post(i)),
      ),
    [`${POSTS} POSTs, one at a time`]: async () => {
      for (let i = 0; i < POSTS; i++) await create(base, token, post(i))
    },
    [`${POSTS} POSTs, ${CONCURRENCY} at a time`]: async () => {
      let next = 0
      const worker = async () => {
        while (next < POSTS) await create(base, token, post(next++))
      }
      await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    },
  }
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((name) => [name, []]))
  // One of each first, unmeasured: the server's first requests compile what later ones reuse.
  await create(base, token, [post(0)])
  await create(base, token, post(0))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(ways)) times[name]!.push(await timed(run))
  }
  return Object.fromEntries(Object.entries(times).map(([name, samples]) => [name, median(samples)]))
}

const sqlite: Store = {
  name: 'SQLite',
  async prepare() {
    const dir = join('bench', '.data')
    mkdirSync(dir, { recursive: true })
    const path = join(dir, 'bulk.db')
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true })
    return { DATABASE_URL: `sqlite:${path}` }
  },
  async cleanUp() {},
}

const postgresDatabase = benchDatabase('threadline_bench_bulk')
const postgres: Store = {
  name: 'PostgreSQL',
  async prepare() {
    await postgresDatabase.create()
    return { DATABASE_URL: postgresDatabase.url }
  },
  cleanUp: () => postgresDatabase.drop(),
}

async function benchStore(store: Store): Promise<Record<string, number>> {
  const env = await store.prepare()
  try {
    threadline(['migrate'], env)
    threadline(['seed', '--users', '1', '--posts', '0', '--comments', '0', '--todos', '0', '--albums', '0', '--photos', '0'], env)
    const token = threadline(['tokens', 'create', '--user', '1'], env).trim()
    const server = await startServe({ ...env, LOG_LEVEL: 'warn', RATE_LIMIT_AUTHENTICATED_MAX: '1000000000' })
    try {
      return await measure(server.url, token)
    } finally {
      await server.stop()
    }
  } finally {
    await store.cleanUp()
  }
}

async function main(): Promise<void> {
  build()
  const stores = [sqlite]
  if (!args['sqlite-only']) {
    try {
      await postgresDatabase.create()
      await postgresDatabase.drop()
      stores.push(postgres)
    } catch (error) {
      console.log(`PostgreSQL left out: ${(error as Error).message}`)
    }
  }
  console.log(`\nCreating ${POSTS} posts (Prefer: return=minimal), medians of ${ROUNDS} rounds\n`)
  for (const store of stores) {
    const results = await benchStore(store)
    const bulk = Object.values(results)[0]!
    for (const [name, ms] of Object.entries(results)) {
      const ratio = name === Object.keys(results)[0] ? '' : `  (${(ms / bulk).toFixed(1)}× the bulk's time)`
      console.log(`${store.name.padEnd(11)} ${name.padEnd(32)} ${ms.toFixed(0).padStart(7)} ms${ratio}`)
    }
    console.log('')
  }
}

await main()
