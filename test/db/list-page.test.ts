// A page read by keyset takes several statements (one per tier, and the count in v1). They run in
// one read transaction: a write committed between them must not show a row twice or hide it. A
// page's total is counted up to a bound, plainly where the table's ids say it cannot hold more:
// both ways count alike at the bound. A first page with no search is compiled once per shape (its
// filters' values put in each time, and a parent's id as well), and each shape reads its own rows,
// anew every time.
import SqliteDatabase from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { parseCollectionQuery } from '../../src/collections/collection-query.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { Tables } from '../../src/db/tables.js'
import { MAX_COUNTED_TOTAL } from '../../src/db/list-page.js'
import { ANONYMOUS_VISIBILITY, type DraftVisibility } from '../../src/posts/post-visibility.js'
import { listPosts, listPostsOfUser } from '../../src/posts/posts.repository.js'
import { PostsCollection } from '../../src/posts/posts.schemas.js'
import { listUsers } from '../../src/users/users.repository.js'
import { UsersCollection } from '../../src/users/users.schemas.js'
import { userFields } from '../../src/users/users.service.js'
import { freshSqliteFile, sqlitePath, type TestDatabase } from '../helpers/test-store.js'

const T0 = '2025-01-01T00:00:00.000Z'
const T1 = '2025-02-01T00:00:00.000Z'
const T2 = '2025-03-01T00:00:00.000Z'

let temp: TestDatabase
let path: string
beforeAll(async () => {
  temp = freshSqliteFile()
  const config = loadConfig({ DATABASE_URL: temp.url })
  path = sqlitePath(config.database)
  const setup = openDatabase(config.database)
  await migrateToLatest(setup)
  for (let i = 1; i <= 8; i++) {
    const at = i <= 4 ? T0 : T1
    await setup.db
      .insertInto('users')
      .values({ name: `U${i}`, email: `u${i}@example.com`, role: 'user', created_at: at, updated_at: at })
      .execute()
  }
  await setup.close()
})
afterAll(() => temp.drop())

/** Posts by [author, title, status], in that order (their ids follow it). */
async function addPosts(db: Kysely<Tables>, posts: readonly (readonly [number, string, 'published' | 'draft'])[]): Promise<void> {
  for (const [userId, title, status] of posts) {
    await db.insertInto('posts').values({ user_id: userId, title, content: '…', status, created_at: T0, updated_at: T0 }).execute()
  }
}

describe('listPage', () => {
  it('reads every tier of a cursor page from one snapshot', async () => {
    const other = new SqliteDatabase(path)
    let interfered = false
    const db = new Kysely<Tables>({
      dialect: new SqliteDialect({ database: new SqliteDatabase(path) }),
      log: (event) => {
        // Right after the first tier, another connection moves user 4 to the end of the order.
        if (!interfered && event.level === 'query' && event.query.sql.includes('"updated_at" =')) {
          interfered = true
          other.prepare('update users set updated_at = ? where name = ?').run(T2, 'U4')
        }
      },
    })
    try {
      const options = { defaultMode: 'cursor' as const, withTotal: false, scope: '' }
      const first = await listUsers(db, parseCollectionQuery(UsersCollection, { sort: 'updatedAt', limit: '3' }, options))
      expect(first.rows.map((u) => u.name)).toEqual(['U1', 'U2', 'U3'])
      const raw = { sort: 'updatedAt', limit: '10', cursor: first.nextCursor as string }
      const second = await listUsers(db, parseCollectionQuery(UsersCollection, raw, options))
      expect(interfered).toBe(true)
      expect(second.rows.map((u) => u.name)).toEqual(['U4', 'U5', 'U6', 'U7', 'U8'])
    } finally {
      other.close()
      await db.destroy()
    }
  })

  it('compiles a first page with no filter or search once per shape, and reads its rows anew each time', async () => {
    const store = openDatabase(loadConfig({ DATABASE_URL: temp.url }).database)
    const compile = vi.spyOn(Object.getPrototypeOf(store.db.selectFrom('users')) as { compile(): unknown }, 'compile')
    const page = (raw: Record<string, string>, withTotal = false, columns?: ReturnType<typeof userFields.columnsFor>) =>
      listUsers(store.db, parseCollectionQuery(UsersCollection, raw, { defaultMode: 'cursor', withTotal, scope: '' }), columns)
    const names = async (raw: Record<string, string>) => (await page(raw)).rows.map((user) => user.name)
    try {
      expect(await names({ limit: '3' })).toEqual(['U1', 'U2', 'U3'])
      const compiled = compile.mock.calls.length
      expect(await names({ limit: '3' })).toEqual(['U1', 'U2', 'U3'])
      expect(compile.mock.calls.length).toBe(compiled)
      // Each shape its own statement: another sort, another limit, a total, fewer columns.
      expect(await names({ limit: '2', sort: '-name' })).toEqual(['U8', 'U7'])
      // The same query read from its end (a connection's `last`): its sort reversed, its fingerprint kept.
      const query = parseCollectionQuery(UsersCollection, { limit: '2' }, { defaultMode: 'cursor', withTotal: false, scope: '' })
      const reversed = query.sort.map((key) => ({ ...key, descending: !key.descending }))
      expect((await listUsers(store.db, { ...query, sort: reversed })).rows.map((user) => user.name)).toEqual(['U8', 'U7'])
      expect(await names({ limit: '4' })).toEqual(['U1', 'U2', 'U3', 'U4'])
      expect((await page({ limit: '2' }, true)).total).toBe(8)
      expect((await page({ limit: '2' })).total).toBeUndefined()
      expect((await page({ limit: '1' }, false, userFields.columnsFor(['id']))).rows).toEqual([{ id: 1 }])
      expect(Object.keys((await page({ limit: '1' })).rows[0] ?? {})).toContain('email')
      // The rows are read each time: a name changed since shows.
      await store.db.updateTable('users').set({ name: 'U1 renamed' }).where('id', '=', 1).execute()
      expect(await names({ limit: '3' })).toEqual(['U1 renamed', 'U2', 'U3'])
      await store.db.updateTable('users').set({ name: 'U1' }).where('id', '=', 1).execute()
    } finally {
      compile.mockRestore()
      await store.close()
    }
  })

  it("compiles a filtered first page once per filter shape, and reads each request's values", async () => {
    const store = openDatabase(loadConfig({ DATABASE_URL: temp.url }).database)
    const compile = vi.spyOn(Object.getPrototypeOf(store.db.selectFrom('users')) as { compile(): unknown }, 'compile')
    const page = (raw: Record<string, string>, withTotal = false) =>
      listUsers(store.db, parseCollectionQuery(UsersCollection, raw, { defaultMode: 'cursor', withTotal, scope: '' }))
    const names = async (raw: Record<string, string>) => (await page(raw)).rows.map((user) => user.name)
    /** The names `raw` reads, and that a second query of its shape (`again`) is compiled no more. */
    const onceEach = async (raw: Record<string, string>, again: Record<string, string>) => {
      const first = await names(raw)
      const compiled = compile.mock.calls.length
      const second = await names(again)
      expect(compile.mock.calls.length, JSON.stringify(again)).toBe(compiled)
      return [first, second]
    }
    try {
      await store.db.updateTable('users').set({ age: 30 }).where('id', '=', 7).execute()
      await store.db.updateTable('users').set({ age: 40 }).where('id', '=', 8).execute()
      expect(await onceEach({ name: 'U2' }, { name: 'U3' })).toEqual([['U2'], ['U3']])
      expect(await onceEach({ 'name[in]': 'U2,U5' }, { 'name[in]': 'U1,U8' })).toEqual([
        ['U2', 'U5'],
        ['U1', 'U8'],
      ])
      // Folded alike on both sides, in its slot as it is without one.
      expect(await onceEach({ email: 'U4@EXAMPLE.COM' }, { email: 'u6@example.com' })).toEqual([['U4'], ['U6']])
      expect(await onceEach({ 'age[gte]': '35' }, { 'age[gte]': '25' })).toEqual([['U8'], ['U7', 'U8']])
      // A null is written into the SQL: with it, another shape.
      expect(await onceEach({ 'age[ne]': '30', limit: '10' }, { 'age[ne]': '40', limit: '10' })).toEqual([
        ['U1', 'U2', 'U3', 'U4', 'U5', 'U6', 'U8'],
        ['U1', 'U2', 'U3', 'U4', 'U5', 'U6', 'U7'],
      ])
      expect(await onceEach({ 'age[in]': 'null,30', limit: '10' }, { 'age[in]': 'null,40', limit: '10' })).toEqual([
        ['U1', 'U2', 'U3', 'U4', 'U5', 'U6', 'U7'],
        ['U1', 'U2', 'U3', 'U4', 'U5', 'U6', 'U8'],
      ])
      expect(await names({ 'age[in]': '30,40', limit: '10' })).toEqual(['U7', 'U8'])
      // Two filters, each value in its own place; the total counted with the request's values.
      expect(await onceEach({ 'age[gte]': '1', 'name[ne]': 'U7' }, { 'age[gte]': '1', 'name[ne]': 'U8' })).toEqual([['U8'], ['U7']])
      expect((await page({ 'name[in]': 'U2,U3,U4' }, true)).total).toBe(3)
      expect((await page({ 'name[in]': 'U2,U3,nobody' }, true)).total).toBe(2)
      const none = await page({ 'name[in]': 'nobody,nobody else,U9' }, true)
      expect([none.rows, none.total]).toEqual([[], 0])
    } finally {
      compile.mockRestore()
      await store.db.updateTable('users').set({ age: null }).execute()
      await store.close()
    }
  })

  it("keeps each reader's drafts rule a shape of its own when posts' first pages are compiled once", async () => {
    const store = openDatabase(loadConfig({ DATABASE_URL: temp.url }).database)
    const compile = vi.spyOn(Object.getPrototypeOf(store.db.selectFrom('posts')) as { compile(): unknown }, 'compile')
    const titles = async (visibility: DraftVisibility, raw: Record<string, string>) =>
      (await listPosts(store.db, parseCollectionQuery(PostsCollection, raw, { defaultMode: 'cursor', withTotal: false, scope: '' }), visibility)).rows.map(
        (post) => post.title,
      )
    const admin: DraftVisibility = { allDrafts: true, ownerId: null }
    const ownerOf = (id: number): DraftVisibility => ({ allDrafts: false, ownerId: id })
    try {
      await addPosts(store.db, [
        [1, 'P1', 'published'],
        [1, 'D1', 'draft'],
        [2, 'P2', 'published'],
        [2, 'D2', 'draft'],
      ])
      expect(await titles(ANONYMOUS_VISIBILITY, { userId: '1' })).toEqual(['P1'])
      const compiled = compile.mock.calls.length
      expect(await titles(ANONYMOUS_VISIBILITY, { userId: '2' })).toEqual(['P2'])
      expect(compile.mock.calls.length).toBe(compiled)
      // The same query for readers who see more: their own drafts, or every one.
      expect(await titles(admin, { userId: '1' })).toEqual(['P1', 'D1'])
      expect(await titles(admin, { userId: '2' })).toEqual(['P2', 'D2'])
      expect(await titles(ownerOf(1), { userId: '1' })).toEqual(['P1', 'D1'])
      expect(await titles(ownerOf(2), { userId: '1' })).toEqual(['P1'])
      expect(await titles(ownerOf(2), { userId: '2' })).toEqual(['P2', 'D2'])
      expect(await titles(ANONYMOUS_VISIBILITY, { userId: '1' })).toEqual(['P1'])
    } finally {
      compile.mockRestore()
      await store.db.deleteFrom('posts').execute()
      await store.close()
    }
  })

  it("compiles a parent's first page once, its id and the filters' values put in each time", async () => {
    const store = openDatabase(loadConfig({ DATABASE_URL: temp.url }).database)
    const compile = vi.spyOn(Object.getPrototypeOf(store.db.selectFrom('posts')) as { compile(): unknown }, 'compile')
    const query = (raw: Record<string, string>, withTotal = false) => parseCollectionQuery(PostsCollection, raw, { defaultMode: 'page', withTotal, scope: '' })
    const titles = async (userId: number, raw: Record<string, string> = {}, includeDrafts = false) =>
      (await listPostsOfUser(store.db, userId, query(raw), { includeDrafts })).rows.map((post) => post.title)
    try {
      await addPosts(store.db, [
        [1, 'P1', 'published'],
        [1, 'D1', 'draft'],
        [1, 'Q1', 'published'],
        [2, 'P2', 'published'],
        [2, 'D2', 'draft'],
      ])
      expect(await titles(1)).toEqual(['P1', 'Q1'])
      const compiled = compile.mock.calls.length
      expect(await titles(2)).toEqual(['P2'])
      expect(await titles(3)).toEqual([])
      expect(await titles(1)).toEqual(['P1', 'Q1'])
      expect(compile.mock.calls.length).toBe(compiled)
      // A filter beside the parent: each request's value and each request's parent, in their places.
      expect(await titles(1, { 'title[ne]': 'P1' })).toEqual(['Q1'])
      const filtered = compile.mock.calls.length
      expect(await titles(1, { 'title[ne]': 'Q1' })).toEqual(['P1'])
      expect(await titles(2, { 'title[ne]': 'Q1' })).toEqual(['P2'])
      expect(compile.mock.calls.length).toBe(filtered)
      // The drafts rule is a shape of its own, never a value left from another request.
      expect(await titles(1, {}, true)).toEqual(['P1', 'D1', 'Q1'])
      expect(await titles(2, {}, true)).toEqual(['P2', 'D2'])
      expect(await titles(2)).toEqual(['P2'])
      // The total is counted under the request's parent as well.
      expect((await listPostsOfUser(store.db, 1, query({}, true), { includeDrafts: false })).total).toBe(2)
      expect((await listPostsOfUser(store.db, 2, query({}, true), { includeDrafts: false })).total).toBe(1)
      expect((await listPostsOfUser(store.db, 2, query({}, true), { includeDrafts: true })).total).toBe(2)
    } finally {
      compile.mockRestore()
      await store.db.deleteFrom('posts').execute()
      await store.close()
    }
  })

  it('counts a total up to the bound alike whether the table is small enough to count plainly or not', async () => {
    const file = freshSqliteFile()
    const statements: string[] = []
    const setup = openDatabase(loadConfig({ DATABASE_URL: file.url }).database, { onQuery: (sql) => statements.push(sql) })
    try {
      await migrateToLatest(setup)
      const sqlite = new SqliteDatabase(sqlitePath(loadConfig({ DATABASE_URL: file.url }).database))
      const insert = sqlite.prepare('insert into users (id, name, email, role, created_at, updated_at) values (?, ?, ?, ?, ?, ?)')
      const add = (ids: number[]) => sqlite.transaction(() => ids.forEach((id) => insert.run(id, `U${id}`, `u${id}@example.com`, 'user', T0, T0)))()
      const total = async () => {
        const options = { defaultMode: 'page' as const, withTotal: true, scope: '' }
        const page = await listUsers(setup.db, parseCollectionQuery(UsersCollection, { role: 'user', limit: '1' }, options))
        return { total: page.total, totalCapped: page.totalCapped }
      }
      try {
        // Ids 1 to MAX + 1: a span the bound covers, counted plainly; one more than the bound counts.
        add(Array.from({ length: MAX_COUNTED_TOTAL + 1 }, (_, i) => i + 1))
        expect(await total()).toEqual({ total: MAX_COUNTED_TOTAL, totalCapped: true })
        // The page's statement carries both counts, chosen by the span of the users' ids.
        const page = statements.find((sql) => sql.includes('threadline_page_total'))
        expect(page).toContain(`case when (select max(id) from "users") - (select min(id) from "users") < ${MAX_COUNTED_TOTAL + 1} then`)
        // One row more, far off: the span is past the bound, counted up to it.
        add([5 * MAX_COUNTED_TOTAL])
        expect(await total()).toEqual({ total: MAX_COUNTED_TOTAL, totalCapped: true })
        // Two fewer, so exactly the bound's number of rows, over the same wide span: counted up to it, exact.
        sqlite.prepare('delete from users where id in (1, 2)').run()
        expect(await total()).toEqual({ total: MAX_COUNTED_TOTAL, totalCapped: false })
        // The same number of rows within a span the bound covers again: counted plainly, exact.
        sqlite.prepare('update users set id = 1 where id = ?').run(5 * MAX_COUNTED_TOTAL)
        expect(await total()).toEqual({ total: MAX_COUNTED_TOTAL, totalCapped: false })
      } finally {
        sqlite.close()
      }
    } finally {
      await setup.close()
      await file.drop()
    }
  })
})
