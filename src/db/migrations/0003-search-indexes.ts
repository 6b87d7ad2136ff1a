// Indexes for `q`, where the dialect has them: trigram indexes on PostgreSQL (when pg_trgm is
// available), which serve the ILIKE of a search; nothing on SQLite, where a search scans.
import type { Kysely, Migration } from 'kysely'
import type { DialectFacts, SearchedColumn } from '../dialect-facts.js'

const SEARCHED: readonly SearchedColumn[] = [
  { table: 'users', column: 'name' },
  { table: 'users', column: 'email' },
  { table: 'posts', column: 'title' },
  { table: 'posts', column: 'content' },
  { table: 'comments', column: 'content' },
  { table: 'todos', column: 'text' },
]

export function searchIndexesMigration(facts: DialectFacts): Migration {
  return {
    up: (db: Kysely<unknown>) => facts.createSearchIndexes(db, SEARCHED),
    down: (db: Kysely<unknown>) => facts.dropSearchIndexes(db, SEARCHED),
  }
}
