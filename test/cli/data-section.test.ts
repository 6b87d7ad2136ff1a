// A feature's data section is all export and import need to carry its table: a section declared
// here for a table the test makes (bookmarks: a user's saved posts), beside the features' own,
// goes out with `writeExport` and comes back with `importFile`, its references checked like any other.
import { once } from 'node:events'
import { createWriteStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Generated, Kysely, Selectable } from 'kysely'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATA_SECTIONS } from '../../src/cli/data-sections.js'
import { writeExport } from '../../src/cli/export-data.js'
import { describeImport, importFile } from '../../src/cli/import-data.js'
import { loadConfig } from '../../src/config.js'
import { type DataSection, StoredId, storedInstant } from '../../src/data-section.js'
import { Timestamp } from '../../src/core/schema-types.js'
import { type Database, openDatabase } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { type Timestamp as TimestampColumn, toIsoTimestamp } from '../../src/db/tables.js'
import { freshDatabase, type TestDatabase } from '../helpers/test-store.js'

interface BookmarksTable {
  id: Generated<number>
  user_id: number
  post_id: number
  note: string
  created_at: TimestampColumn
}
type BookmarkRow = Selectable<BookmarksTable>
/** The store with the bookmarks table, as the feature's table file would declare it. */
const withTable = (database: Database) => database.db as unknown as Kysely<{ bookmarks: BookmarksTable }>

const bookmarksData: DataSection<BookmarkRow> = {
  name: 'bookmarks',
  noun: 'bookmark',
  references: ['users', 'posts'],
  formats: {
    threadline: {
      write: (row) => ({ id: row.id, userId: row.user_id, postId: row.post_id, note: row.note, createdAt: toIsoTimestamp(row.created_at) }),
      schema: Type.Object(
        { id: StoredId, userId: StoredId, postId: StoredId, note: Type.String({ maxLength: 200 }), createdAt: Timestamp },
        { additionalProperties: false },
      ),
      references: [
        { field: 'userId', section: 'users' },
        { field: 'postId', section: 'posts' },
      ],
      toColumns: (row) => ({ id: row.id, user_id: row.userId, post_id: row.postId, note: row.note, created_at: storedInstant(row.createdAt) }),
    },
  },
}

/** The features' sections and the bookmarks', as src/features.ts would list them with one more line. */
const SECTIONS = [...DATA_SECTIONS, bookmarksData]

/** The sections a format writes: those of SECTIONS that have it, in their order. */
const sectionsIn = (format: 'threadline' | 'jsonplaceholder') => SECTIONS.filter(({ formats }) => formats?.[format] !== undefined).map(({ name }) => name)

const at = '2026-03-04T05:06:07.089Z'
const dir = mkdtempSync(join(tmpdir(), 'threadline-data-section-'))

/** A migrated database of the run's store with the bookmarks table (what the feature's migration would make). */
async function withBookmarks(store: TestDatabase): Promise<Database> {
  const database = openDatabase(loadConfig({ DATABASE_URL: store.url }).database)
  await migrateToLatest(database)
  const { facts } = database
  await (database.db as unknown as Kysely<unknown>).schema
    .createTable('bookmarks')
    .addColumn('id', 'integer', (c) => facts.autoIncrementPrimaryKey(c))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('post_id', 'integer', (c) => c.notNull().references('posts.id').onDelete('cascade'))
    .addColumn('note', facts.textType, (c) => c.notNull())
    .addColumn('created_at', facts.timestampType, (c) => c.notNull())
    .execute()
  return database
}

const bookmarksOf = async (database: Database) =>
  (await withTable(database).selectFrom('bookmarks').selectAll().orderBy('id').execute()).map((row) => ({ ...row, created_at: toIsoTimestamp(row.created_at) }))

const stores: TestDatabase[] = []
let source: Database
let target: Database
beforeAll(async () => {
  stores.push(await freshDatabase(), await freshDatabase())
  source = await withBookmarks(stores[0]!)
  target = await withBookmarks(stores[1]!)
  const { db } = source
  await db
    .insertInto('users')
    .values({ id: 3, name: 'Reader', email: 'reader@example.com', age: null, avatar: null, role: 'user', password_hash: null, created_at: at, updated_at: at })
    .execute()
  await db
    .insertInto('posts')
    .values({ id: 8, user_id: 3, title: 'Worth keeping', content: 'Text', status: 'published', published_at: at, created_at: at, updated_at: at })
    .execute()
  await withTable(source)
    .insertInto('bookmarks')
    .values([
      { id: 5, user_id: 3, post_id: 8, note: 'read later', created_at: at },
      { id: 6, user_id: 3, post_id: 8, note: 'and again', created_at: at },
    ])
    .execute()
})
afterAll(async () => {
  await source?.close()
  await target?.close()
  for (const store of stores) await store.drop()
})

async function exportTo(path: string, format: 'threadline' | 'jsonplaceholder'): Promise<void> {
  const stream = createWriteStream(path)
  await writeExport(source.db, stream, format, () => {}, SECTIONS)
  stream.end()
  await once(stream, 'close')
}

describe('a data section declared beside the features', () => {
  it("is exported after the sections it references, and imported back row for row, its ids' sequence moved", async () => {
    const file = join(dir, 'export.json')
    await exportTo(file, 'threadline')
    const document = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown[]>
    expect(Object.keys(document)).toEqual(['threadline', ...sectionsIn('threadline')])
    expect(document.bookmarks).toEqual([
      { id: 5, userId: 3, postId: 8, note: 'read later', createdAt: at },
      { id: 6, userId: 3, postId: 8, note: 'and again', createdAt: at },
    ])

    const summary = await importFile(target.db, file, { replace: false, sections: SECTIONS })
    // The other sections (comments, todos, …) are empty in the file.
    expect(describeImport(summary, 0)).toMatch(/^Imported 1 user, 1 post, (0 \w+, )*0 \w+ and 2 bookmarks in 0\.0 s$/)
    expect(await bookmarksOf(target)).toEqual(await bookmarksOf(source))
    const next = await withTable(target)
      .insertInto('bookmarks')
      .values({ user_id: 3, post_id: 8, note: 'new', created_at: at })
      .returning('id')
      .executeTakeFirstOrThrow()
    expect(next.id).toBe(7)
  })

  it('is checked as any section is: a reference to a post neither the file nor the database has is refused', async () => {
    const file = join(dir, 'dangling.json')
    writeFileSync(file, JSON.stringify({ threadline: { version: 1 }, bookmarks: [{ id: 9, userId: 3, postId: 99, note: 'gone', createdAt: at }, { id: 10 }] }))
    const refused = importFile(target.db, file, { replace: false, sections: SECTIONS })
    await expect(refused).rejects.toMatchObject({
      details: expect.arrayContaining([
        { field: 'bookmarks[0].postId', message: 'no post 99' },
        { field: 'bookmarks[1].userId', message: 'is required' },
      ]),
    })
  })

  it("is emptied by --replace, and left out of a format it has not (JSONPlaceholder's)", async () => {
    const file = join(dir, 'placeholder.json')
    await exportTo(file, 'jsonplaceholder')
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')) as object)).toEqual(sectionsIn('jsonplaceholder'))
    await importFile(target.db, file, { replace: true, sections: SECTIONS })
    expect(await bookmarksOf(target)).toEqual([])
  })
})
