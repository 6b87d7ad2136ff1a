// Migration 0004 on a SQLite database that already holds rows (made at 0003, as every database
// was before it): the full-text index is filled with them, so a search finds them at once, and
// the query reads that index rather than every row.
import { Migrator, sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase, type Database } from '../../src/db/create-database.js'
import { MIGRATION_NAMES, migrateToLatest } from '../../src/db/migrate.js'
import { initialMigration } from '../../src/db/migrations/0001-initial.js'
import { listIndexesMigration } from '../../src/db/migrations/0002-list-indexes.js'
import { searchIndexesMigration } from '../../src/db/migrations/0003-search-indexes.js'
import { seedDatabase } from '../../src/seed/seed-database.js'
import { freshSqliteFile, sqlitePath } from '../helpers/test-store.js'

const opened: { close(): Promise<unknown> }[] = []
afterEach(async () => {
  for (const handle of opened.splice(0)) await handle.close()
})

/** A database at migration 0003 with a user, a post, a comment and a todo. */
async function databaseAt0003(url: string): Promise<Database> {
  const config = loadConfig({ DATABASE_URL: url })
  const database = openDatabase(config.database)
  opened.push(database)
  const migrations = {
    '0001-initial': initialMigration(database.facts),
    '0002-list-indexes': listIndexesMigration(),
    '0003-search-indexes': searchIndexesMigration(database.facts),
  }
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: () => Promise.resolve(migrations) } })
  const { error } = await migrator.migrateToLatest()
  if (error !== undefined) throw new Error('migrating to 0003 failed', { cause: error })
  const now = new Date().toISOString()
  const { db } = database
  const user = await db
    .insertInto('users')
    .values({ name: 'Ottoline Pre-existing', email: 'ottoline@example.com', role: 'user', created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow()
  const post = await db
    .insertInto('posts')
    .values({
      user_id: user.id,
      title: 'Kestrel sightings',
      content: 'Over the marsh.',
      status: 'published',
      published_at: now,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db.insertInto('comments').values({ post_id: post.id, author_id: user.id, content: 'A merlin, surely', created_at: now, updated_at: now }).execute()
  await db.insertInto('todos').values({ user_id: user.id, text: 'Ring the heronry', completed: 0, created_at: now, updated_at: now }).execute()
  return database
}

describe('migration 0004 (full-text search) on a database with rows', () => {
  it('indexes the rows already there: a search finds them, through the index', async () => {
    const store = freshSqliteFile()
    opened.push({ close: () => store.drop() })
    const database = await databaseAt0003(store.url)
    // Every migration after 0003, 0004 first.
    expect((await migrateToLatest(database)).applied).toEqual(MIGRATION_NAMES.slice(MIGRATION_NAMES.indexOf('0004-text-search')))

    const config = loadConfig({ DATABASE_URL: store.url, SEED_DEMO_DATA: 'false', LOG_LEVEL: 'silent' })
    const statements: string[] = []
    const served = openDatabase(config.database, { onQuery: (text) => statements.push(text) })
    const app = await buildApp(config, { database: served })
    opened.push(app)
    const found = async (url: string) => {
      const res = await app.inject({ method: 'GET', url })
      expect(res.statusCode, res.body).toBe(200)
      return res.json().data.map((item: Record<string, string>) => item.name ?? item.title ?? item.content ?? item.text)
    }
    expect(await found('/api/v1/users?q=PRE-EXIST')).toEqual(['Ottoline Pre-existing'])
    expect(await found('/api/v1/users/1/posts?q=marsh')).toEqual(['Kestrel sightings'])
    expect(await found('/api/v1/users/1/posts/1/comments?q=merlin')).toEqual(['A merlin, surely'])
    expect(await found('/api/v1/users/1/todos?q=heronry')).toEqual(['Ring the heronry'])
    expect(statements.filter((text) => text.includes('match')).length).toBeGreaterThanOrEqual(4)

    // The index holds exactly what the tables hold.
    for (const table of ['users', 'posts', 'comments', 'todos']) {
      const index = sql.table(`${table}_search`)
      await sql`insert into ${index} (${index}, rank) values ('integrity-check', 1)`.execute(database.db)
    }
    expect(sqlitePath(config.database)).toContain('test.db')
  })

  it('is built once at the end of a large seed, and kept by its triggers afterwards', async () => {
    const database = await migratedDatabase()
    // A rebuild writes a segment each time its trigrams fill FTS5's buffer: a small one makes this
    // seed's rebuild of the posts' index write many, as 100,000 posts do with the default.
    await sql`insert into posts_search (posts_search, rank) values ('hashsize', 16384)`.execute(database.db)
    await seedDatabase(database.db, { users: 500, posts: 9000, comments: 1000, todos: 500 })
    // Every searched table's index (the migrations'), each kept by its three triggers.
    const indexes = await sql<{
      name: string
    }>`select name from sqlite_master where type = 'table' and sql like ${'create virtual table%fts5%'} order by name`.execute(database.db)
    const searched = indexes.rows.map((row) => row.name.replace(/_search$/, ''))
    expect(searched).toEqual(expect.arrayContaining(['comments', 'posts', 'todos', 'users']))
    for (const table of searched) {
      const index = sql.table(`${table}_search`)
      await sql`insert into ${index} (${index}, rank) values ('integrity-check', 1)`.execute(database.db)
      // Each index in one segment, which later writes merge into rarely, 8 segments of a level at a time.
      expect(await segments(database, `${table}_search`), table).toBeLessThanOrEqual(1)
      expect(await automerge(database, `${table}_search`), table).toBe(8)
    }
    expect(await segments(database, 'posts_search')).toBe(1)
    const triggers = await sql<{ name: string }>`select name from sqlite_master where type = 'trigger' order by name`.execute(database.db)
    expect(triggers.rows.map((row) => row.name)).toEqual(searched.flatMap((table) => ['delete', 'insert', 'update'].map((what) => `${table}_search_${what}`)))
    const now = new Date().toISOString()
    await database.db.insertInto('todos').values({ user_id: 1, text: 'Wax the toboggan', completed: 0, created_at: now, updated_at: now }).execute()
    const found = await sql<{ rowid: number }>`select rowid from todos_search where todos_search match ${'"toboggan"'}`.execute(database.db)
    expect(found.rows).toHaveLength(1)
  })
})

describe('migration 0011 (how the full-text indexes merge)', () => {
  it('sets how an index merges, and merges one a bulk fill left in many segments into one: a search still finds every row', async () => {
    const database = await migratedDatabase()
    await seedDatabase(database.db, { users: 50, posts: 3000, comments: 0, todos: 0 })
    // The index as a rebuild with a small buffer leaves it, on a database made before 0011.
    await sql`insert into posts_search (posts_search, rank) values ('hashsize', 16384)`.execute(database.db)
    await sql`insert into posts_search (posts_search) values ('rebuild')`.execute(database.db)
    expect(await segments(database, 'posts_search')).toBeGreaterThan(4)
    // As FTS5 merges by default: 4 segments of a level at a time.
    await sql`insert into posts_search (posts_search, rank) values ('automerge', 4)`.execute(database.db)
    expect(await automerge(database, 'posts_search')).toBe(4)
    await sql`delete from kysely_migration where name = ${'0011-text-search-merges'}`.execute(database.db)

    expect((await migrateToLatest(database)).applied).toEqual(['0011-text-search-merges'])
    expect(await segments(database, 'posts_search')).toBe(1)
    expect(await automerge(database, 'posts_search')).toBe(8)
    await sql`insert into posts_search (posts_search, rank) values ('integrity-check', 1)`.execute(database.db)
    const { title } = await database.db.selectFrom('posts').select('title').where('id', '=', 1234).executeTakeFirstOrThrow()
    const term = `"${title.slice(0, 12).replaceAll('"', '""')}"`
    const found = await sql<{ rowid: number }>`select rowid from posts_search where posts_search match ${term}`.execute(database.db)
    expect(found.rows.map((row) => row.rowid)).toContain(1234)
  })
})

/** A new SQLite file migrated to the latest schema, closed and dropped after the test. */
async function migratedDatabase(): Promise<Database> {
  const store = freshSqliteFile()
  opened.push({ close: () => store.drop() })
  const database = openDatabase(loadConfig({ DATABASE_URL: store.url }).database)
  opened.push(database)
  await migrateToLatest(database)
  return database
}

/** How many segments an FTS5 index is in: each segment's leaves are listed in its `_idx` table. */
async function segments(database: Database, index: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(distinct segid) as n from ${sql.table(`${index}_idx`)}`.execute(database.db)
  return rows[0]!.n
}

/** How many segments of a level an FTS5 index's writes merge at a time, as set in its config (undefined: FTS5's default, 4). */
async function automerge(database: Database, index: string): Promise<number | undefined> {
  const { rows } = await sql<{ v: number }>`select v from ${sql.table(`${index}_config`)} where k = 'automerge'`.execute(database.db)
  return rows[0]?.v
}
