// `threadline reset`, run as a child process (dist/main.js) whose stdin is a pipe, not a terminal.
import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { createIdempotencyStore } from '../../src/idempotency/idempotency-store.js'
import { DEMO_COUNTS, seedDatabase } from '../../src/seed/seed-database.js'
import { BIN } from '../helpers/serve-process.js'
import { freshDatabase, type TestDatabase } from '../helpers/test-store.js'
import { listed } from '../../src/cli/words.js'
import { importedCounts, readers } from './import-fixture.js'

const run = promisify(execFile)

function threadline(url: string, args: string[]) {
  return run(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, DATABASE_URL: url } })
}

/** What the API shows of the data: every user, and the first user's posts, todos and a post's comments. */
function contents(url: string) {
  return withApp(url, async (app) => {
    const read = async (path: string) => (await app.inject({ method: 'GET', url: path })).json().data
    const users: { id: number }[] = await read('/api/v1/users?limit=100')
    const first = users[0]?.id ?? 1
    const posts: { id: number }[] = await read(`/api/v1/users/${first}/posts?limit=100`)
    return {
      users,
      posts,
      todos: await read(`/api/v1/users/${first}/todos?limit=100`),
      comments: posts[0] === undefined ? [] : await read(`/api/v1/users/${first}/posts/${posts[0].id}/comments?limit=100`),
    }
  })
}

/** Keeps one answer for an Idempotency-Key first when asked to; the number of answers kept. */
async function keptAnswers(url: string, action: 'insert' | 'count'): Promise<number> {
  const database = openDatabase(loadConfig({ DATABASE_URL: url }).database)
  try {
    if (action === 'insert') {
      const store = createIdempotencyStore(database.db, { ttlMs: 86_400_000, leaseMs: 60_000 })
      await store.claim('user:1', 'before-reset', 'fingerprint')
      await store.complete('user:1', 'before-reset', { status: 201, headers: {}, body: '{}' })
    }
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from idempotency_keys`.execute(database.db)
    return Number(rows[0]?.n)
  } finally {
    await database.close()
  }
}

let db: TestDatabase
let demo: TestDatabase
beforeAll(async () => {
  db = await freshDatabase()
  // The demo data as a fresh serve writes it, for comparison.
  demo = await freshDatabase()
  const database = openDatabase(loadConfig({ DATABASE_URL: demo.url }).database)
  await migrateToLatest(database)
  await seedDatabase(database.db, DEMO_COUNTS)
  await database.close()
  // Something else in the database to reset: a user and the demo data after it.
  await threadline(db.url, ['users', 'create', '--name', 'Extra', '--email', 'extra@example.com'])
  await threadline(db.url, ['seed', '--users', '3', '--posts', '4', '--comments', '5', '--todos', '2'])
}, 120_000)
afterAll(async () => {
  await db.drop()
  await demo.drop()
})
// Registered after the drops, so closed before them (after-hooks run in reverse order).
const { withApp } = readers()

describe('threadline reset', { timeout: 120_000 }, () => {
  it('refuses without --yes when stdin is not a terminal, and changes nothing', async () => {
    const before = await contents(db.url)
    const failed = await threadline(db.url, ['reset']).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    )
    expect(failed?.code).toBe(1)
    expect(failed?.stderr).toMatch(/--yes/)
    expect(await contents(db.url)).toEqual(before)
  })

  it('--yes brings back the demo data of a fresh serve, ids from 1, every time', async () => {
    const expected = await contents(demo.url)
    expect(expected.users).toHaveLength(DEMO_COUNTS.users)
    // An answer kept for an Idempotency-Key describes rows the reset removes: it goes with them.
    const kept = await keptAnswers(db.url, 'insert')
    expect(kept).toBe(1)
    const { stdout } = await threadline(db.url, ['reset', '--yes'])
    const demoCounts = listed(Object.entries(DEMO_COUNTS).map(([name, rows]) => `${rows} ${name}`))
    expect(stdout).toMatch(new RegExp(`^Reset to the demo data: ${demoCounts} in [\\d.]+ s\\.\\n$`))
    expect(await contents(db.url)).toEqual(expected)
    expect(await keptAnswers(db.url, 'count')).toBe(0)
    await threadline(db.url, ['users', 'create', '--name', 'Between', '--email', 'between@example.com'])
    await threadline(db.url, ['reset', '--yes'])
    expect(await contents(db.url)).toEqual(expected)
  })

  it('--from FILE loads the file instead, replacing everything', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'threadline-reset-'))
    const file = join(dir, 'db.json')
    writeFileSync(
      file,
      JSON.stringify({
        users: [{ id: 5, name: 'Only One', username: 'one', email: 'one@example.com' }],
        posts: [{ userId: 5, id: 9, title: 'Kept', body: 'Text' }],
        comments: [],
        todos: [],
      }),
    )
    const { stdout } = await threadline(db.url, ['reset', '--yes', '--from', file])
    expect(stdout).toMatch(new RegExp(`Imported ${importedCounts('jsonplaceholder', { users: 1, posts: 1 })}`))
    const after = await contents(db.url)
    expect(after.users.map((u) => u.id)).toEqual([5])
    expect(after.posts).toMatchObject([{ id: 9, title: 'Kept', content: 'Text' }])
  })
})
