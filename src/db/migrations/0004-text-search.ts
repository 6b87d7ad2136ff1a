// A full-text index for `q` where the dialect needs its own: on SQLite an FTS5 table with the
// trigram tokenizer per searched table, kept in sync by triggers and filled with the rows already
// there, so a search looks up trigrams instead of reading every row (200,000 users: 170 ms → under
// 1 ms for a term that matches nothing). PostgreSQL's trigram indexes came with 0003.
import type { Kysely, Migration } from 'kysely'
import type { DialectFacts, SearchedTable } from '../dialect-facts.js'

/** Every searchable field of the collections (collection-spec `searchable`), by table. */
const SEARCHED: readonly SearchedTable[] = [
  { table: 'users', columns: ['name', 'email'] },
  { table: 'posts', columns: ['title', 'content'] },
  { table: 'comments', columns: ['content'] },
  { table: 'todos', columns: ['text'] },
]

export function textSearchMigration(facts: DialectFacts): Migration {
  return {
    up: (db: Kysely<unknown>) => facts.createTextSearch(db, SEARCHED),
    down: (db: Kysely<unknown>) => facts.dropTextSearch(db, SEARCHED),
  }
}
