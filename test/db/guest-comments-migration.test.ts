// Migration 0009 on a database that already holds comments (made at 0008, as every database was
// before it), on each store: the comments keep their ids, columns and order, author_id takes null
// and `email` is there, and on SQLite — where the table is rebuilt — everything that belonged to
// the old table belongs to the new one: its indexes, its foreign keys (cascades included), the
// triggers that keep the search index in step, and its AUTOINCREMENT sequence (an id a deleted
// comment had is never given again).
import { Migrator, sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openDatabase, type Database } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { initialMigration } from '../../src/db/migrations/0001-initial.js'
import { listIndexesMigration } from '../../src/db/migrations/0002-list-indexes.js'
import { searchIndexesMigration } from '../../src/db/migrations/0003-search-indexes.js'
import { textSearchMigration } from '../../src/db/migrations/0004-text-search.js'
import { idempotencyKeysMigration } from '../../src/db/migrations/0005-idempotency-keys.js'
import { scopesAndIdentitiesMigration } from '../../src/db/migrations/0006-scopes-and-identities.js'
import { idempotencyBoundsMigration } from '../../src/db/migrations/0007-idempotency-bounds.js'
import { wholeCollectionIndexesMigration } from '../../src/db/migrations/0008-whole-collection-indexes.js'
import { postgresUrl } from '../helpers/services.js'
import { freshDatabase, freshSqliteFile, type TestDatabase } from '../helpers/test-store.js'

const withPostgres = (await postgresUrl()) !== undefined

const opened: { close(): Promise<unknown> }[] = []
afterEach(async () => {
  for (const handle of opened.splice(0).reverse()) await handle.close()
})

const at = '2026-03-04T05:06:07.000Z'

/** A database at migration 0008 with two users, a post and three comments, the last deleted (its id stays taken). */
async function databaseAt0008(store: TestDatabase): Promise<Database> {
  opened.push({ close: () => store.drop() })
  const database = openDatabase(loadConfig({ DATABASE_URL: store.url }).database)
  opened.push(database)
  const { facts } = database
  const migrations = {
    '0001-initial': initialMigration(facts),
    '0002-list-indexes': listIndexesMigration(),
    '0003-search-indexes': searchIndexesMigration(facts),
    '0004-text-search': textSearchMigration(facts),
    '0005-idempotency-keys': idempotencyKeysMigration(facts),
    '0006-scopes-and-identities': scopesAndIdentitiesMigration(facts),
    '0007-idempotency-bounds': idempotencyBoundsMigration(facts),
    '0008-whole-collection-indexes': wholeCollectionIndexesMigration(),
  }
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: () => Promise.resolve(migrations) } })
  const { error } = await migrator.migrateToLatest()
  if (error !== undefined) throw new Error('migrating to 0008 failed', { cause: error })
  const { db } = database
  const users = await db
    .insertInto('users')
    .values([
      { name: 'Ann', email: 'ann@example.com', role: 'user', created_at: at, updated_at: at },
      { name: 'Ben', email: 'ben@example.com', role: 'user', created_at: at, updated_at: at },
    ])
    .returning('id')
    .execute()
  const post = await db
    .insertInto('posts')
    .values({ user_id: users[0]!.id, title: 'Herons', content: 'At dawn.', status: 'published', published_at: at, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow()
  for (const [author, content] of [
    [users[0]!.id, 'A grey heron, surely'],
    [users[1]!.id, 'Or an egret'],
    [users[1]!.id, 'Deleted'],
  ] as const) {
    await db.insertInto('comments').values({ post_id: post.id, author_id: author, content, created_at: at, updated_at: at }).execute()
  }
  await db.deleteFrom('comments').where('content', '=', 'Deleted').execute()
  return database
}

/** What SQLite keeps of a table besides its rows: its indexes and triggers, by name, with their SQL. */
async function dependentsOf(database: Database, table: string) {
  return (
    await sql<{
      type: string
      name: string
      sql: string
    }>`select type, name, sql from sqlite_master where tbl_name = ${table} and type in ('index', 'trigger') order by name`.execute(database.db)
  ).rows
}

const stores = ['sqlite' as const, ...(withPostgres ? (['postgres'] as const) : [])]

describe.each(stores)('migration 0009 (guest comments) on %s, with comments there', (store) => {
  it('keeps every comment and all that belonged to the table, and takes guest comments', async () => {
    const database = await databaseAt0008(store === 'sqlite' ? freshSqliteFile() : await freshDatabase('postgres'))
    const { db } = database
    const before = await db.selectFrom('comments').selectAll().orderBy('id').execute()
    const dependents = store === 'sqlite' ? await dependentsOf(database, 'comments') : []
    expect((await migrateToLatest(database)).applied[0]).toBe('0009-user-profiles-and-guest-comments')

    const after = await db.selectFrom('comments').selectAll().orderBy('id').execute()
    expect(after).toEqual(before.map((row) => ({ ...row, email: null })))
    // The table's columns in their order, `email` last (as PostgreSQL's ADD COLUMN puts it).
    expect(Object.keys(after[0]!)).toEqual(['id', 'post_id', 'author_id', 'content', 'created_at', 'updated_at', 'email'])

    // A guest comment; the next id is after the deleted one's.
    const guest = await db
      .insertInto('comments')
      .values({ post_id: before[0]!.post_id, author_id: null, email: 'guest@example.com', content: 'A bittern, booming', created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow()
    expect(guest.id).toBe(before.at(-1)!.id + 2)
    // A comment is a user's or a guest's: never both, never neither.
    for (const [author_id, email] of [
      [before[0]!.author_id, 'both@example.com'],
      [null, null],
    ] as const) {
      await expect(
        db.insertInto('comments').values({ post_id: before[0]!.post_id, author_id, email, content: 'x', created_at: at, updated_at: at }).execute(),
      ).rejects.toThrow()
    }
    // The references hold: a comment on no post is refused, and deleting its author takes a user's comments along.
    await expect(
      db.insertInto('comments').values({ post_id: 999, author_id: null, email: 'x@example.com', content: 'x', created_at: at, updated_at: at }).execute(),
    ).rejects.toThrow()
    await db
      .deleteFrom('users')
      .where('id', '=', before[1]!.author_id as number)
      .execute()
    expect((await db.selectFrom('comments').select('id').orderBy('id').execute()).map(({ id }) => id)).toEqual([before[0]!.id, guest.id])

    if (store === 'sqlite') {
      // The same indexes and triggers, word for word.
      expect(await dependentsOf(database, 'comments')).toEqual(dependents)
      expect(dependents.map(({ name }) => name)).toEqual(
        expect.arrayContaining([
          'comments_post_id_idx',
          'comments_author_id_idx',
          'comments_search_insert',
          'comments_search_delete',
          'comments_search_update',
        ]),
      )
      // The search index finds old and new comments, forgets a deleted one, and holds exactly what the table holds.
      const search = async (term: string) =>
        (await sql<{ rowid: number }>`select rowid from comments_search where comments_search match ${`"${term}"`}`.execute(db)).rows.map(({ rowid }) => rowid)
      expect(await search('heron')).toEqual([before[0]!.id])
      expect(await search('bittern')).toEqual([guest.id])
      expect(await search('egret')).toEqual([])
      await sql`insert into comments_search (comments_search, rank) values ('integrity-check', 1)`.execute(db)
      expect((await sql`pragma foreign_key_check`.execute(db)).rows).toEqual([])
      expect((await sql<{ integrity_check: string }>`pragma integrity_check`.execute(db)).rows).toEqual([{ integrity_check: 'ok' }])
    }
  })
})
