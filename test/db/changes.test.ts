// What a statement changed (src/db/changes.ts), read from the statements the repositories build,
// and the clock (src/db/change-clock.ts) that keeps, for each table and row, when it last
// changed, as the representation cache uses it. Compiled, not run: the behaviour on both stores
// is in test/http/representation-cache.test.ts.
import { DummyDriver, Kysely, sql, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely'
import { describe, expect, it } from 'vitest'
import { type Change, changeOf, decodeChanges, encodeChanges, PendingChanges } from '../../src/db/changes.js'
import type { Tables } from '../../src/db/tables.js'
import { ChangeClock } from '../../src/db/change-clock.js'
import { createRepresentationCache, type Representation } from '../../src/http/representation-cache.js'
import { SECOND_STORE_RUN } from '../helpers/test-store.js'

const db = new Kysely<Tables>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (kysely) => new SqliteIntrospector(kysely),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
})

const changeOfQuery = (query: { compile(): { query: Parameters<typeof changeOf>[0]; sql: string } }) => {
  const compiled = query.compile()
  return changeOf(compiled.query, compiled.sql)
}

describe.skipIf(SECOND_STORE_RUN)('what a statement changed', () => {
  it('pins an UPDATE by id to its rows, and any other UPDATE to its whole table', () => {
    expect(changeOfQuery(db.updateTable('users').set({ name: 'A' }).where('id', '=', 7))).toEqual({ kind: 'rows', table: 'users', ids: [7] })
    expect(changeOfQuery(db.updateTable('posts').set({ title: 'A' }).where('id', 'in', [1, 2]))).toEqual({ kind: 'rows', table: 'posts', ids: [1, 2] })
    expect(changeOfQuery(db.updateTable('tokens').set({ revoked_at: 'now' }).where('revoked_at', 'is', null).where('id', '=', 3))).toEqual({
      kind: 'rows',
      table: 'tokens',
      ids: [3],
    })
    expect(changeOfQuery(db.updateTable('posts').set({ status: 'draft' }).where('user_id', '=', 7))).toEqual({ kind: 'table', table: 'posts' })
    expect(changeOfQuery(db.updateTable('users').set({ name: 'A' }).where('id', '>', 7))).toEqual({ kind: 'table', table: 'users' })
    const many = Array.from({ length: 101 }, (_, i) => i + 1)
    expect(changeOfQuery(db.updateTable('users').set({ name: 'A' }).where('id', 'in', many))).toEqual({ kind: 'table', table: 'users' })
  })

  it('tells an INSERT as rows added, an upsert as its whole table, a DELETE and anything unknown as everything', () => {
    const row = { name: 'A', email: 'a@example.com', role: 'user' as const, created_at: 'now', updated_at: 'now' }
    expect(changeOfQuery(db.insertInto('users').values(row))).toEqual({ kind: 'added', table: 'users' })
    expect(
      changeOfQuery(
        db
          .insertInto('users')
          .values(row)
          .onConflict((c) => c.column('email').doNothing()),
      ),
    ).toEqual({ kind: 'added', table: 'users' })
    expect(
      changeOfQuery(
        db
          .insertInto('users')
          .values(row)
          .onConflict((c) => c.column('email').doUpdateSet({ name: 'B' })),
      ),
    ).toEqual({
      kind: 'table',
      table: 'users',
    })
    // Its foreign keys may cascade.
    expect(changeOfQuery(db.deleteFrom('users').where('id', '=', 7))).toEqual({ kind: 'everything' })
    expect(changeOfQuery(db.schema.createTable('t').addColumn('id', 'integer'))).toEqual({ kind: 'everything' })
    const raw = (text: string) => changeOf(sql.raw(text).compile(db).query, text)
    expect(raw('update sqlite_sequence set seq = 1')).toEqual({ kind: 'everything' })
    expect(raw('select 1')).toBeUndefined()
    expect(raw('  WITH t AS (select 1) select * from t')).toBeUndefined()
    expect(changeOfQuery(db.selectFrom('users').selectAll().where('id', '=', 1))).toBeUndefined()
  })

  it("merges a transaction's changes by table, and sends them to another instance unchanged", () => {
    const pending = new PendingChanges()
    pending.add({ kind: 'rows', table: 'users', ids: [1] })
    pending.add({ kind: 'rows', table: 'users', ids: [2, 1] })
    pending.add({ kind: 'added', table: 'users' })
    pending.add({ kind: 'added', table: 'posts' })
    const changes = pending.take()
    expect(changes).toEqual([
      { kind: 'rows', table: 'users', ids: [1, 2] },
      { kind: 'added', table: 'users' },
      { kind: 'added', table: 'posts' },
    ])
    expect(pending.empty).toBe(true)
    expect(decodeChanges(encodeChanges('a1', changes))).toEqual({ origin: 'a1', changes })
    pending.add({ kind: 'table', table: 'posts' })
    pending.add({ kind: 'everything' })
    expect(pending.take()).toEqual([{ kind: 'everything' }])
    // A payload past NOTIFY's bound, or one not understood: everything.
    const huge: Change[] = Array.from({ length: 2000 }, (_, i) => ({ kind: 'added', table: `table_${i}` }))
    expect(decodeChanges(encodeChanges('a1', huge)).changes).toEqual([{ kind: 'everything' }])
    expect(decodeChanges('a1 not json').changes).toEqual([{ kind: 'everything' }])
  })
})

describe.skipIf(SECOND_STORE_RUN)("the representation cache's clock", () => {
  it('makes stale what a change touched since an answer was read, and nothing else', () => {
    const clock = new ChangeClock()
    const readAt = clock.time
    const user = (id: number) => ({ row: { table: 'users', id }, tables: [] })
    const comment = { row: { table: 'comments', id: 1 }, tables: ['posts', 'users'] }
    clock.tell([{ kind: 'rows', table: 'users', ids: [7] }])
    expect(clock.unchangedSince(user(7), readAt)).toBe(false)
    expect(clock.unchangedSince(user(8), readAt)).toBe(true)
    expect(clock.unchangedSince({ tables: ['users'] }, readAt)).toBe(false)
    expect(clock.unchangedSince({ tables: ['posts'] }, readAt)).toBe(true)
    expect(clock.unchangedSince(comment, readAt)).toBe(false)
    // Read after the change: fresh.
    expect(clock.unchangedSince(user(7), clock.time)).toBe(true)

    const later = clock.time
    clock.tell([{ kind: 'added', table: 'users' }])
    expect(clock.unchangedSince(user(8), later)).toBe(true)
    expect(clock.unchangedSince({ tables: ['users'] }, later)).toBe(false)
    clock.tell([{ kind: 'table', table: 'users' }])
    expect(clock.unchangedSince(user(8), later)).toBe(false)
    expect(clock.unchangedSince({}, later)).toBe(false)

    const beforeEverything = clock.time
    clock.tell([{ kind: 'everything' }])
    expect(clock.unchangedSince({ tables: [] }, beforeEverything)).toBe(false)
  })

  it('counts a forgotten row as changed for every row read before it', () => {
    const clock = new ChangeClock(2)
    const readAt = clock.time
    clock.tell([{ kind: 'rows', table: 'users', ids: [1] }])
    clock.tell([{ kind: 'rows', table: 'users', ids: [2] }])
    expect(clock.unchangedSince({ row: { table: 'users', id: 3 }, tables: [] }, readAt)).toBe(true)
    clock.tell([{ kind: 'rows', table: 'users', ids: [3] }])
    // Row 1 is forgotten: any row read before its change may have been it.
    expect(clock.unchangedSince({ row: { table: 'users', id: 9 }, tables: [] }, readAt)).toBe(false)
    expect(clock.unchangedSince({ row: { table: 'users', id: 9 }, tables: [] }, clock.time)).toBe(true)
  })

  it('keeps a row changed again and again current, whether it is moved up or changed where it stands', () => {
    const clock = new ChangeClock(4)
    const hot = { row: { table: 'users', id: 1 }, tables: [] }
    for (let i = 0; i < 20; i++) {
      const readAt = clock.time
      clock.tell([{ kind: 'rows', table: 'users', ids: [1] }])
      expect(clock.unchangedSince(hot, readAt)).toBe(false)
      expect(clock.unchangedSince(hot, clock.time)).toBe(true)
      // Other rows come and go around it.
      clock.tell([{ kind: 'rows', table: 'users', ids: [100 + i] }])
    }
  })
})

describe.skipIf(SECOND_STORE_RUN)("the representation cache's budget", () => {
  const representation = (readAt: number): Representation => ({
    head: 'x'.repeat(100),
    tail: '',
    etag: 'W/"e"',
    lastModifiedMs: null,
    lastModified: undefined,
    isCollection: false,
    cacheControl: 'public, max-age=0',
    link: undefined,
    dependencies: { tables: [] },
    readAt,
  })
  const keys = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `k${String(from + i).padStart(2, '0')}`)

  it('lets the oldest entry not used since go first: one used since it was kept is passed over once', () => {
    // Room for twenty entries of 450 bytes (what each counts in the budget).
    const cache = createRepresentationCache(20 * 450)
    const at = cache.clock.time
    for (const key of keys(0, 19)) cache.set(key, representation(at))
    expect(cache.get('k00')).toBeDefined()
    cache.set('k20', representation(at)) // k01 goes: k00 was used
    expect(cache.get('k01')).toBeUndefined()
    expect(keys(2, 20).every((key) => cache.get(key) !== undefined)).toBe(true)
    expect(cache.get('k00')).toBeDefined()
    // Every entry used: each is passed over once, and then the oldest goes.
    cache.set('k21', representation(at))
    expect(cache.get('k02')).toBeUndefined()
    expect([...keys(3, 21), 'k00'].every((key) => cache.get(key) !== undefined)).toBe(true)
  })
})
