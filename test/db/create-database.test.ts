import SqliteDatabase from 'better-sqlite3'
import { CompiledQuery, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { type Database, isoInstant, openDatabase, SERVING_PAGE_CACHE_KIB } from '../../src/db/create-database.js'
import { EVERYTHING } from '../../src/db/changes.js'
import { readRows } from '../../src/db/direct-reads.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { freshSqliteFile, sqlitePath, type TestDatabase } from '../helpers/test-store.js'

let database: Database
let temp: TestDatabase
let url: string
beforeAll(async () => {
  temp = freshSqliteFile()
  // A folder that does not exist yet: opening creates it.
  url = `${temp.url.replace(/test\.db$/, '')}nested/deeper/test.db`
  database = openDatabase(loadConfig({ DATABASE_URL: url }).database)
  await migrateToLatest(database)
})
afterAll(async () => {
  await database.close()
  await temp.drop()
})

const pragma = async (name: string) => {
  const { rows } = await sql<Record<string, unknown>>`select * from ${sql.raw(`pragma_${name}`)}`.execute(database.db)
  return Object.values(rows[0] ?? {})[0]
}

/** SQLite's plan for a Kysely query; its parameters (test constants) are inlined as literals. */
async function plan(query: { compile(): { sql: string; parameters: readonly unknown[] } }): Promise<string> {
  const { sql: text, parameters } = query.compile()
  let i = 0
  const inlined = text.replace(/\?/g, () => {
    const value = parameters[i++]
    return typeof value === 'number' ? String(value) : `'${String(value)}'`
  })
  const { rows } = await sql<{ detail: string }>`explain query plan ${sql.raw(inlined)}`.execute(database.db)
  return rows.map((r) => r.detail).join('; ')
}

describe('the SQLite store', () => {
  it('runs in WAL mode with foreign keys on and a busy timeout', async () => {
    expect(await pragma('journal_mode')).toBe('wal')
    expect(await pragma('foreign_keys')).toBe(1)
    expect(await pragma('busy_timeout')).toBe(200)
  })

  it("keeps SQLite's own 2 MiB page cache when asked to (the server), and better-sqlite3's 16 MB otherwise (the commands that write in bulk)", async () => {
    // A negative cache_size counts KiB.
    const serving = openDatabase(loadConfig({ DATABASE_URL: temp.url }).database, { pageCacheKib: SERVING_PAGE_CACHE_KIB })
    try {
      const { rows } = await sql<{ cache_size: number }>`select * from pragma_cache_size`.execute(serving.db)
      expect(rows[0]?.cache_size).toBe(-2000)
    } finally {
      await serving.close()
    }
    expect(await pragma('cache_size')).toBe(-16000)
  })

  it('keeps prepared statements: a reused one gives fresh results, one past the cache size is prepared again, and a table that changes shape is read as it is now', async () => {
    await sql`create table cached_statements (id integer primary key, a text)`.execute(database.db)
    await sql`insert into cached_statements (id, a) values (1, 'one')`.execute(database.db)
    const read = () =>
      database.db
        .selectFrom('cached_statements' as 'users')
        .selectAll()
        .execute() as Promise<unknown[]>
    expect(await read()).toEqual([{ id: 1, a: 'one' }])
    await sql`update cached_statements set a = 'uno'`.execute(database.db)
    expect(await read()).toEqual([{ id: 1, a: 'uno' }])
    // More distinct statements than the cache keeps: the first is evicted, then prepared again.
    for (let i = 0; i < 600; i++) await sql.raw(`select ${i} as n`).execute(database.db)
    expect(await read()).toEqual([{ id: 1, a: 'uno' }])
    await sql`alter table cached_statements add column b text default 'bee'`.execute(database.db)
    expect(await read()).toEqual([{ id: 1, a: 'uno', b: 'bee' }])
    await sql`drop table cached_statements`.execute(database.db)
    await expect(read()).rejects.toThrow(/no such table/)
  })

  it("makes a direct read's rows as SQLite makes Kysely's: every column by name, in any statement, with the table's columns as they are now", async () => {
    await sql`create table direct_rows (id integer primary key, a text, r real, b blob)`.execute(database.db)
    await sql`insert into direct_rows (id, a, r, b) values (1, 'one', 1.5, x'00ff'), (2, null, -2, null)`.execute(database.db)
    const both = async (text: string, parameters: unknown[] = []) => {
      const direct = await readRows<Record<string, unknown>>(database.db, text, parameters)
      const throughKysely = (await database.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, parameters))).rows
      return { direct, throughKysely }
    }
    const statements = [
      'select id, a, r, b from direct_rows order by id',
      'select b, r, a, id from direct_rows order by id desc',
      'select a as "the a", id * 2 as "x""y", count(*) from direct_rows group by id order by id',
      // Two columns of one name: the last one's value, as SQLite's own objects have it.
      'select 1 as a, 2 as a',
      // A column named as the prototype: no property of that name, as in SQLite's own objects.
      'select 3 as "__proto__", 4 as n',
      'select * from direct_rows order by id',
    ]
    for (const text of statements) {
      const { direct, throughKysely } = await both(text)
      expect(direct, text).toEqual(throughKysely)
      expect(
        direct.map((row) => Object.keys(row)),
        text,
      ).toEqual(throughKysely.map((row) => Object.keys(row)))
    }
    expect((await both('select b, r, a, id from direct_rows where id = ?', [1])).direct).toEqual([{ b: Buffer.from([0, 255]), r: 1.5, a: 'one', id: 1 }])
    expect((await both('select 1 as a, 2 as a')).direct).toEqual([{ a: 2 }])
    // Another connection changes the table's shape: a read of every column reads it as it is now.
    const other = new SqliteDatabase(sqlitePath(loadConfig({ DATABASE_URL: url }).database))
    try {
      other.exec(`alter table direct_rows add column c text default 'see'`)
    } finally {
      other.close()
    }
    const { direct, throughKysely } = await both('select * from direct_rows order by id')
    expect(direct[0]).toEqual({ id: 1, a: 'one', r: 1.5, b: Buffer.from([0, 255]), c: 'see' })
    expect(direct).toEqual(throughKysely)
    await sql`drop table direct_rows`.execute(database.db)
  })

  it('refuses a row whose parent does not exist', async () => {
    const now = new Date().toISOString()
    await expect(
      database.db.insertInto('posts').values({ user_id: 424242, title: 't', content: 'c', status: 'published', created_at: now, updated_at: now }).execute(),
    ).rejects.toThrow(/FOREIGN KEY/)
  })

  it.each([
    [
      'a user by e-mail',
      () =>
        database.db
          .selectFrom('users')
          .selectAll()
          .where(sql`lower(email)`, '=', 'a@example.com'),
      /USING INDEX users_email_unique/,
    ],
    ['a token by hash', () => database.db.selectFrom('tokens').selectAll().where('token_hash', '=', 'ab'), /USING INDEX/],
    ["a user's tokens", () => database.db.selectFrom('tokens').select('id').where('user_id', '=', 1), /USING (COVERING )?INDEX tokens_user_id_idx/],
    ["a user's posts", () => database.db.selectFrom('posts').select('id').where('user_id', '=', 1).orderBy('id'), /USING (COVERING )?INDEX posts_user_id_idx/],
    [
      "a post's comments",
      () => database.db.selectFrom('comments').select('id').where('post_id', '=', 1).orderBy('id'),
      /USING (COVERING )?INDEX comments_post_id_idx/,
    ],
    [
      "an author's comments",
      () => database.db.selectFrom('comments').select('id').where('author_id', '=', 1),
      /USING (COVERING )?INDEX comments_author_id_idx/,
    ],
    ["a user's todos", () => database.db.selectFrom('todos').select('id').where('user_id', '=', 1).orderBy('id'), /USING (COVERING )?INDEX todos_user_id_idx/],
  ])('finds %s through an index', async (_what, query, expected) => {
    const detail = await plan(query())
    expect(detail).toMatch(expected)
    expect(detail).not.toMatch(/^SCAN \w+$/)
  })
})

describe('what a statement changed, as the handle tells it', () => {
  it('tells nothing of a write that changed no row, and a schema change as everything, whatever was counted before it', async () => {
    const told: unknown[] = []
    const stop = database.changes.listen((changes) => told.push(...changes))
    try {
      await database.db.updateTable('users').set({ age: 1 }).where('id', '=', 999_999).execute()
      await database.db.updateTable('users').set({ age: 1 }).where('id', '=', 999_999).returningAll().execute()
      await database.db.deleteFrom('users').where('id', '=', 999_999).execute()
      expect(told).toEqual([])
      // SQLite counts no row for a schema change: the count it reports is the last write's, here none.
      await database.db.schema.createTable('told_tables').addColumn('id', 'integer').execute()
      await sql`drop table told_tables`.execute(database.db)
      expect(told).toEqual([EVERYTHING, EVERYTHING])
    } finally {
      stop()
    }
  })
})

describe("another connection's commits to the SQLite file", () => {
  // The change feed looks for them on every request (the representation cache, the callers it
  // keeps), through the WAL-index header first and SQLite's data version when the header moved.
  it("are heard at once, after a checkpoint too; this connection's own writes are not taken for them", async () => {
    const told: unknown[] = []
    const stop = database.changes.listen((changes) => told.push(...changes))
    const other = new SqliteDatabase(sqlitePath(loadConfig({ DATABASE_URL: url }).database))
    try {
      await sql`create table if not exists feed_probe (id integer primary key, said text)`.execute(database.db)
      database.changes.heard()
      told.length = 0

      other.prepare('insert into feed_probe (said) values (?)').run('from another connection')
      expect(database.changes.heard()).toBe(true)
      expect(told).toEqual([EVERYTHING])
      expect(database.changes.heard()).toBe(true)
      expect(told).toEqual([EVERYTHING])

      told.length = 0
      await sql`insert into feed_probe (said) values ('from this connection')`.execute(database.db)
      // Told by the write itself, as it commits; looking for others' commits adds nothing.
      const ownWrite = [...told]
      database.changes.heard()
      expect(told).toEqual(ownWrite)

      // A checkpoint that restarts the WAL moves SQLite's data version too (a change for nothing):
      // what matters is that a commit after it is still heard.
      other.pragma('wal_checkpoint(TRUNCATE)')
      database.changes.heard()
      told.length = 0
      other.prepare('insert into feed_probe (said) values (?)').run('after the checkpoint')
      database.changes.heard()
      expect(told).toEqual([EVERYTHING])
    } finally {
      other.close()
      stop()
    }
  })
})

describe("PostgreSQL's instants, read as ISO 8601 in UTC", () => {
  it('cuts and joins the text form as Date would read it, for every precision, and leaves other forms to Date', () => {
    // PostgreSQL's text form in UTC: 'YYYY-MM-DD HH:MM:SS[.f…]+00', up to six digits of fraction.
    const asDateReadsIt = (text: string) => new Date(text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00')).toISOString()
    let seed = 7
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
    for (let i = 0; i < 2000; i++) {
      const instant = new Date(Math.floor(random() * 253402300799999)).toISOString() // years 1970 to 9999
      const digits = Math.floor(random() * 7)
      const fraction =
        digits === 0
          ? ''
          : `.${String(Math.floor(random() * 1e6))
              .padStart(6, '0')
              .slice(0, digits)}`
      const text = `${instant.slice(0, 10)} ${instant.slice(11, 19)}${fraction}+00`
      expect(isoInstant(text)).toBe(asDateReadsIt(text))
    }
    expect(isoInstant('2026-11-26 02:21:15.5+02')).toBe('2026-11-26T00:21:15.500Z')
    expect(isoInstant('2026-11-26 02:21:15+00')).toBe('2026-11-26T02:21:15.000Z')
  })
})
