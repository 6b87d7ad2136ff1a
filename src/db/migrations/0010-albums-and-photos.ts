// Albums (a user's) and their photos, as JSONPlaceholder has them. Deleting a user deletes their
// albums, and deleting an album its photos, by the foreign keys, as posts and their comments go.
// Every filter and sort of both lists, the whole collection's and one parent's (a parent's sorts
// behind its id, as a user's posts have them), is served by an index ending in id (as 0001, 0002
// and 0008 do for the others), and `q` searches the titles by the dialect's search indexes (as
// 0003 and 0004 do).
import type { Kysely, Migration } from 'kysely'
import type { DialectFacts, SearchedColumn, SearchedTable } from '../dialect-facts.js'

const INDEXES: readonly [name: string, table: string, columns: string[]][] = [
  ['albums_user_id_idx', 'albums', ['user_id', 'id']],
  ['albums_title_idx', 'albums', ['title', 'id']],
  ['albums_created_at_idx', 'albums', ['created_at', 'id']],
  ['albums_updated_at_idx', 'albums', ['updated_at', 'id']],
  ['albums_user_title_idx', 'albums', ['user_id', 'title', 'id']],
  ['albums_user_created_at_idx', 'albums', ['user_id', 'created_at', 'id']],
  ['albums_user_updated_at_idx', 'albums', ['user_id', 'updated_at', 'id']],
  ['photos_album_id_idx', 'photos', ['album_id', 'id']],
  ['photos_title_idx', 'photos', ['title', 'id']],
  ['photos_created_at_idx', 'photos', ['created_at', 'id']],
  ['photos_updated_at_idx', 'photos', ['updated_at', 'id']],
  ['photos_album_title_idx', 'photos', ['album_id', 'title', 'id']],
  ['photos_album_created_at_idx', 'photos', ['album_id', 'created_at', 'id']],
  ['photos_album_updated_at_idx', 'photos', ['album_id', 'updated_at', 'id']],
]

const SEARCHED_COLUMNS: readonly SearchedColumn[] = [
  { table: 'albums', column: 'title' },
  { table: 'photos', column: 'title' },
]
const SEARCHED_TABLES: readonly SearchedTable[] = [
  { table: 'albums', columns: ['title'] },
  { table: 'photos', columns: ['title'] },
]

export function albumsAndPhotosMigration(facts: DialectFacts): Migration {
  const ts = facts.timestampType
  const text = facts.textType
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('albums')
        .addColumn('id', 'integer', (c) => facts.autoIncrementPrimaryKey(c))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('title', text, (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .execute()
      await db.schema
        .createTable('photos')
        .addColumn('id', 'integer', (c) => facts.autoIncrementPrimaryKey(c))
        .addColumn('album_id', 'integer', (c) => c.notNull().references('albums.id').onDelete('cascade'))
        .addColumn('title', text, (c) => c.notNull())
        .addColumn('url', text, (c) => c.notNull())
        .addColumn('thumbnail_url', text, (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .execute()
      for (const [name, table, columns] of INDEXES) {
        await db.schema.createIndex(name).on(table).columns(columns).execute()
      }
      await facts.createSearchIndexes(db, SEARCHED_COLUMNS)
      await facts.createTextSearch(db, SEARCHED_TABLES)
    },
    async down(db: Kysely<unknown>) {
      await facts.dropTextSearch(db, SEARCHED_TABLES)
      await facts.dropSearchIndexes(db, SEARCHED_COLUMNS)
      for (const table of ['photos', 'albums']) await db.schema.dropTable(table).execute()
    },
  }
}
