// Aggregates at scale: 1,000 users, 100,000 posts and their comments, served by a real
// `threadline serve` (SQLite, the representation cache off: the uncached path). Measures with
// autocannon, each load for a few seconds:
//   - comments per post of one user's posts: `/comments?select=postId,count()` over the 100 posts
//     one user wrote (a range of post ids: posts are seeded in blocks per user), 100 groups;
//   - posts per author over a range of 5,000 posts: `/posts?select=userId,count(),createdAt.max()`,
//     50 groups;
// and prints req/s and p99 for each (both within the aggregate's bounds: 10,000 rows, 1,000 groups).
//
//   npm run bench:aggregates [-- --posts 100000 --comments-per-post 3 --seconds 8 --fresh]
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { build, type Load, machine, measure, startServe, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    posts: { type: 'string', default: '100000' },
    'comments-per-post': { type: 'string', default: '3' },
    seconds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '10' },
    fresh: { type: 'boolean', default: false },
  },
})
const POSTS = Number(args.posts)
const USERS = Math.max(1, Math.floor(POSTS / 100))
const COMMENTS = POSTS * Number(args['comments-per-post'])
const SECONDS = Number(args.seconds)
const CONNECTIONS = Number(args.connections)

const dataDir = join('bench', '.data')
const dbPath = join(dataDir, `aggregates-${POSTS}-${COMMENTS}.db`)
const env = { DATABASE_URL: `sqlite:${dbPath}`, LOG_LEVEL: 'warn' }

function prepareData(): void {
  if (args.fresh) rmSync(dbPath, { force: true })
  if (existsSync(dbPath)) return
  mkdirSync(dataDir, { recursive: true })
  console.log(`Seeding ${USERS} users, ${POSTS.toLocaleString('en')} posts and ${COMMENTS.toLocaleString('en')} comments into ${dbPath} ...`)
  threadline(['migrate'], env)
  const seeded = threadline(
    ['seed', '--users', String(USERS), '--posts', String(POSTS), '--comments', String(COMMENTS), '--todos', '0', '--albums', '0', '--photos', '0'],
    env,
  )
  process.stdout.write(seeded)
}

/** The post ids of the user in the middle: posts are seeded in blocks of POSTS / USERS per user. */
const perUser = Math.floor(POSTS / USERS)
const firstPost = Math.floor(USERS / 2) * perUser + 1
const lastPost = firstPost + perUser - 1

/** An answer of at least one group (an error's body counts as a failure). */
const answersGroups = (body: string): boolean => ((JSON.parse(body) as { data?: unknown[] }).data?.length ?? 0) > 0

const LOADS: Record<string, Load> = {
  'comments per post of one user': {
    path: `/api/v1/comments?select=postId,count()&postId[gte]=${firstPost}&postId[lte]=${lastPost}`,
    verifyBody: answersGroups,
  },
  'posts per author, 5,000 posts': {
    path: `/api/v1/posts?select=userId,count(),createdAt.max()&id[gte]=${firstPost}&id[lt]=${firstPost + 5_000}`,
    verifyBody: answersGroups,
  },
}

async function main(): Promise<void> {
  build()
  prepareData()
  const server = await startServe({ ...env, RATE_LIMIT_MAX: '1000000000', HTTP_REPRESENTATION_CACHE_MB: '0' })
  try {
    console.log(`\n${POSTS.toLocaleString('en')} posts, ${COMMENTS.toLocaleString('en')} comments; ${CONNECTIONS} connections, ${SECONDS} s each`)
    console.log(JSON.stringify(machine()))
    for (const [name, load] of Object.entries(LOADS)) {
      await measure(server.url, load, { connections: CONNECTIONS, seconds: 1 }) // warm up
      const round = await measure(server.url, load, { connections: CONNECTIONS, seconds: SECONDS, pid: server.pid })
      console.log(
        `${name.padEnd(32)} ${Math.round(round.requestsPerSecond).toString().padStart(6)} req/s  p50 ${round.p50} ms  p99 ${round.p99} ms  errors ${round.errors}`,
      )
    }
  } finally {
    await server.stop()
  }
}

await main()
