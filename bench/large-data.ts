// A large SQLite database, fast, and the cost of the expensive reads on it: searches that match
// nothing and almost everything, counting `total`, a deep offset page and a sort no index serves,
// each timed in-process through the real app (buildApp + inject), so the figure is the time the
// event loop is held by one request.
//
// seedLargeDatabase() is exported for other benchmarks (bench/abuse.ts): it migrates a new file and
// fills it with prepared INSERTs in one transaction (about 1,000,000 rows in 30 s here), bypassing
// the services (no hashing, no events), which is what makes it fast.
//
//   npx tsx bench/large-data.ts [-- --users 200000 --posts 1000000 --runs 5 --fresh]
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import SqliteDatabase from 'better-sqlite3'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/create-database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { createRandom, fakeEmail, fakeName, sentence, words } from '../src/fake-data.js'

export interface LargeCounts {
  users: number
  posts: number
}

/**
 * Creates (or replaces) the SQLite database at `path`, migrated to the latest schema, with `users`
 * users (ages 18–90 or none, 1 in 50 an admin) and `posts` posts spread over them. Deterministic.
 */
export async function seedLargeDatabase(path: string, counts: LargeCounts): Promise<void> {
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true })
  const database = openDatabase({ dialect: 'sqlite', path })
  try {
    await migrateToLatest(database)
  } finally {
    await database.close()
  }
  const db = new SqliteDatabase(path)
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = OFF')
    const random = createRandom(7)
    const start = Date.parse('2024-01-01T00:00:00.000Z')
    const at = (i: number, total: number) => new Date(start + Math.floor((i / Math.max(total, 1)) * 700 * 86_400_000)).toISOString()
    const insertUser = db.prepare(
      'insert into users (name, email, age, avatar, role, password_hash, created_at, updated_at) values (?, ?, ?, null, ?, null, ?, ?)',
    )
    const insertPost = db.prepare('insert into posts (user_id, title, content, status, published_at, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)')
    // The full-text indexes' triggers (migration 0004) would index row by row; they are set aside
    // and each index rebuilt once at the end, several times faster, then the triggers put back.
    const triggers = db.prepare("select sql from sqlite_master where type = 'trigger' and name like '%\\_search\\_%' escape '\\'").pluck().all() as string[]
    const indexes = db.prepare("select name from sqlite_master where type = 'table' and sql like 'create virtual table%fts5%'").pluck().all() as string[]
    db.transaction(() => {
      for (const name of db
        .prepare("select name from sqlite_master where type = 'trigger' and name like '%\\_search\\_%' escape '\\'")
        .pluck()
        .all() as string[]) {
        db.exec(`drop trigger "${name}"`)
      }
      for (let i = 1; i <= counts.users; i++) {
        const name = fakeName(random, i)
        const age = random.next() < 0.1 ? null : random.int(18, 90)
        const created = at(i, counts.users)
        insertUser.run(name, fakeEmail(name, i), age, random.next() < 0.02 ? 'admin' : 'user', created, created)
      }
      for (let i = 1; i <= counts.posts; i++) {
        const created = at(i, counts.posts)
        const draft = random.next() < 0.1
        const content = `${sentence(random)} ${sentence(random)}`
        insertPost.run(random.int(1, counts.users), words(random, 3, 7), content, draft ? 'draft' : 'published', draft ? null : created, created, created)
      }
      for (const index of indexes) db.exec(`insert into "${index}" ("${index}") values ('rebuild')`)
      for (const trigger of triggers) db.exec(trigger)
    })()
    db.pragma('wal_checkpoint(TRUNCATE)')
    db.exec('analyze')
  } finally {
    db.close()
  }
}

/** The reads timed, as a client sends them. */
const READS: readonly [name: string, method: 'GET' | 'POST', url: string, body?: unknown][] = [
  ['search, no match (v1, with total)', 'GET', '/api/v1/users?q=zz-nomatch&limit=1'],
  ['search, no match (v2, no total)', 'GET', '/api/v2/users?q=zz-nomatch&limit=1'],
  ['search, common (v1)', 'GET', '/api/v1/users?q=example&limit=20'],
  ['search, rare (v1)', 'GET', '/api/v1/users?q=.199999@&limit=20'],
  ['search, over 1,000 index matches (v1, q=lovelace.1)', 'GET', '/api/v1/users?q=lovelace.1&limit=20'],
  ['search, 2 characters (v1)', 'GET', '/api/v1/users?q=zq&limit=20'],
  ["a user's posts, search common (v1)", 'GET', '/api/v1/users/7/posts?q=lorem&limit=20'],
  ["a user's posts, search no match (v1)", 'GET', '/api/v1/users/7/posts?q=zz-nomatch&limit=20'],
  ['count, all users (v1 page 1)', 'GET', '/api/v1/users?limit=1'],
  ['count, filtered users (v1, age=30)', 'GET', '/api/v1/users?age=30&limit=1'],
  ['deep page (page=2000, limit=100, sort=-age,name)', 'GET', '/api/v1/users?sort=-age,name&page=2000&limit=100'],
  ['deep page at the window (page=100, limit=100, sort=-age,name)', 'GET', '/api/v1/users?sort=-age,name&page=100&limit=100'],
  ['unindexed sort, first page (sort=-age,name)', 'GET', '/api/v2/users?sort=-age,name&limit=100'],
  ['indexed sort, first page (sort=name)', 'GET', '/api/v2/users?sort=name&limit=100'],
  ['GraphQL every post, sort=-publishedAt (anonymous)', 'POST', '/graphql', { query: '{ posts(sort: "-publishedAt", limit: 20) { id } }' }],
  ['GraphQL every post, sort=title (anonymous)', 'POST', '/graphql', { query: '{ posts(sort: "title", limit: 20) { id } }' }],
  ['GraphQL every post, status=draft (anonymous: none)', 'POST', '/graphql', { query: '{ posts(where: {status: {eq: draft}}, limit: 20) { id } }' }],
  ["GraphQL every post, one user's (userId=7)", 'POST', '/graphql', { query: '{ posts(where: {userId: {eq: "7"}}, limit: 20) { id } }' }],
  ['GraphQL every post, counted', 'POST', '/graphql', { query: '{ postsPage(limit: 1) { pageInfo { total } } }' }],
  [
    'GraphQL usersPage(q: nomatch) { total } x15',
    'POST',
    '/graphql',
    {
      query: `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: usersPage(q: "zz-nomatch", limit: 1) { pageInfo { total } }`).join(' ')} }`,
    },
  ],
]

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      users: { type: 'string', default: '200000' },
      posts: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '5' },
      fresh: { type: 'boolean', default: false },
    },
  })
  const counts = { users: Number(args.users), posts: Number(args.posts) }
  const dir = join('bench', '.data')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, `large-${counts.users}-${counts.posts}.db`)
  if (args.fresh || !existsSync(path)) {
    const started = performance.now()
    await seedLargeDatabase(path, counts)
    console.log(`seeded ${counts.users} users and ${counts.posts} posts into ${path} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  } else {
    // An existing file made by an older schema is brought up to date (the migration's own cost).
    const database = openDatabase({ dialect: 'sqlite', path })
    const started = performance.now()
    const { applied } = await migrateToLatest(database)
    await database.close()
    if (applied.length > 0) console.log(`migrated ${path} (${applied.join(', ')}) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }

  const config = loadConfig({
    DATABASE_URL: `sqlite:${path}`,
    LOG_LEVEL: 'silent',
    SEED_DEMO_DATA: 'false',
    RATE_LIMIT_MAX: '1000000000',
    RATE_LIMIT_AUTHENTICATED_MAX: '1000000000',
  })
  const app = await buildApp(config)
  const runs = Number(args.runs)
  // The first requests compile routes, serializers and statements: not what a read costs.
  for (let i = 0; i < 5; i++) await app.inject({ method: 'GET', url: '/api/v1/users?limit=1' })
  console.log(`\n| read | status | p50 ms | max ms | answer |\n|---|---|---|---|---|`)
  for (const [name, method, url, body] of READS) {
    const samples: number[] = []
    let status = 0
    let answer = ''
    for (let i = 0; i <= runs; i++) {
      const started = performance.now()
      const res = await app.inject({ method, url, ...(body === undefined ? {} : { payload: body as object }) })
      // The first run of each read prepares its statements; it is not counted.
      if (i > 0) samples.push(performance.now() - started)
      status = res.statusCode
      answer = summarize(res.json())
    }
    samples.sort((a, b) => a - b)
    const p50 = samples[Math.floor(samples.length / 2)] as number
    console.log(`| ${name} | ${status} | ${p50.toFixed(1)} | ${(samples.at(-1) as number).toFixed(1)} | ${answer} |`)
  }
  await app.close()
}

function summarize(body: { meta?: { pagination?: unknown }; error?: { code: string }; data?: unknown }): string {
  if (body.error !== undefined) return body.error.code
  if (body.meta?.pagination !== undefined) return JSON.stringify(body.meta.pagination).replace(/"nextCursor":"[^"]+"/, '"nextCursor":"…"')
  const text = JSON.stringify(body.data ?? body)
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main()
