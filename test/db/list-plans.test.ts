// The list queries the API runs, as SQLite plans them: every filter and sort offered on users and
// on a user's posts, and a post's comments, are served by an index (no table scan, no sort of the
// whole result), on the first page and on pages reached by cursor.
import SqliteDatabase from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CollectionQuery, parseCollectionQuery } from '../../src/collections/collection-query.js'
import type { CollectionSpec } from '../../src/collections/collection-spec.js'
import { listCommentsOfPost } from '../../src/comments/comments.repository.js'
import { CommentsCollection } from '../../src/comments/comments.schemas.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/create-database.js'
import type { RowPage } from '../../src/collections/collection-page.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { Tables } from '../../src/db/tables.js'
import { listPostsOfUser } from '../../src/posts/posts.repository.js'
import { PostsCollection } from '../../src/posts/posts.schemas.js'
import { DEMO_COUNTS, seedDatabase } from '../../src/seed/seed-database.js'
import { listUsers } from '../../src/users/users.repository.js'
import { UsersCollection } from '../../src/users/users.schemas.js'
import { freshSqliteFile, sqlitePath, type TestDatabase } from '../helpers/test-store.js'

let temp: TestDatabase
let connection: SqliteDatabase.Database
let db: Kysely<Tables>
const ran: { sql: string; parameters: readonly unknown[] }[] = []

beforeAll(async () => {
  temp = freshSqliteFile()
  const config = loadConfig({ DATABASE_URL: temp.url })
  const setup = openDatabase(config.database)
  await migrateToLatest(setup)
  await seedDatabase(setup.db, DEMO_COUNTS)
  await setup.close()
  connection = new SqliteDatabase(sqlitePath(config.database))
  db = new Kysely<Tables>({
    dialect: new SqliteDialect({ database: connection }),
    log: (event) => {
      if (event.level === 'query' && event.query.sql.startsWith('select')) ran.push({ sql: event.query.sql, parameters: event.query.parameters })
    },
  })
})
afterAll(async () => {
  await db.destroy()
  await temp.drop()
})

function plan(statement: { sql: string; parameters: readonly unknown[] }): string {
  const rows = connection.prepare(`explain query plan ${statement.sql}`).all(...statement.parameters) as { detail: string }[]
  return rows.map((row) => row.detail).join('; ')
}

/** Runs a list on the first page and on the page after it (by cursor); returns each query's plan. */
async function plans(spec: CollectionSpec, raw: Record<string, string>, list: (query: CollectionQuery) => Promise<RowPage<object>>): Promise<string[]> {
  const options = { defaultMode: 'cursor' as const, withTotal: false, scope: 'plans' }
  ran.length = 0
  const first = await list(parseCollectionQuery(spec, { ...raw, limit: '3' }, options))
  if (first.nextCursor !== null) await list(parseCollectionQuery(spec, { ...raw, limit: '3', cursor: first.nextCursor }, options))
  return ran.map(plan)
}

/**
 * No sort of the whole result, and every read through an index. In id order, the first page may
 * walk the table itself: its rows are stored in id order, so the walk stops after `limit` rows.
 */
function expectIndexed(plansRun: string[], { idOrder = false } = {}) {
  expect(plansRun.length).toBeGreaterThan(0)
  for (const detail of plansRun) {
    expect(detail).not.toMatch(/TEMP B-TREE/)
    if (idOrder && /^SCAN (users|posts|comments)$/.test(detail)) continue
    expect(detail).toMatch(/USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY/)
    expect(detail).not.toMatch(/SCAN (users|posts|comments)(;|$)/)
  }
}

const usersList = (query: CollectionQuery) => listUsers(db, query)
const postsOfUser1 = (includeDrafts: boolean) => (query: CollectionQuery) => listPostsOfUser(db, 1, query, { includeDrafts })

describe('list query plans', () => {
  it("a user's posts sorted by -publishedAt, as the owner and as anyone", async () => {
    expectIndexed(await plans(PostsCollection, { sort: '-publishedAt' }, postsOfUser1(true)))
    expectIndexed(await plans(PostsCollection, { sort: '-publishedAt' }, postsOfUser1(false)))
  })

  it('users filtered by role sorted by name', async () => {
    expectIndexed(await plans(UsersCollection, { role: 'user', sort: 'name' }, usersList))
  })

  it("a post's comments", async () => {
    expectIndexed(await plans(CommentsCollection, {}, (query) => listCommentsOfPost(db, 1, query)))
    expectIndexed(await plans(CommentsCollection, { sort: '-id' }, (query) => listCommentsOfPost(db, 1, query)))
  })

  const userFilters: Record<string, string> = {
    id: '3',
    name: 'Leanne Graham',
    email: 'LEANNE.graham@example.com',
    age: '30',
    role: 'admin',
    createdAt: '2024-01-21T00:00:00.000Z',
    updatedAt: '2024-01-21T00:00:00.000Z',
  }
  it.each(Object.entries(userFilters))('users filtered by %s', async (field, value) => {
    expectIndexed(await plans(UsersCollection, { [field]: value }, usersList))
  })

  it.each(['id', 'name', 'email', 'age', 'createdAt', 'updatedAt'].flatMap((f) => [f, `-${f}`]))('users sorted by %s', async (sort) => {
    expectIndexed(await plans(UsersCollection, { sort }, usersList), { idOrder: sort.endsWith('id') })
  })

  const postFilters: Record<string, string> = {
    id: '3',
    userId: '1',
    title: 'x',
    status: 'draft',
    publishedAt: '2025-01-01T00:00:00.000Z',
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
  }
  it.each(Object.entries(postFilters))("a user's posts filtered by %s", async (field, value) => {
    expectIndexed(await plans(PostsCollection, { [field]: value }, postsOfUser1(true)))
  })

  it.each(['id', 'title', 'status', 'publishedAt', 'createdAt', 'updatedAt'].flatMap((f) => [f, `-${f}`]))("a user's posts sorted by %s", async (sort) => {
    expectIndexed(await plans(PostsCollection, { sort }, postsOfUser1(true)))
  })
})
