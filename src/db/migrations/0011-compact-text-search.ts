// The full-text indexes of a database seeded or imported before its bulk fills compacted them:
// merged into one segment each, as a fill now leaves them. On SQLite each write merges FTS5's
// segments as it goes; those a rebuild of 100,000 posts left (9) made every 64th insert of a post
// take 14 ms or more (dialect-facts.ts, fillTextSearch). Nothing to undo: the index holds the
// same rows either way.
import type { Kysely, Migration } from 'kysely'
import type { DialectFacts } from '../dialect-facts.js'

export function compactTextSearchMigration(facts: DialectFacts): Migration {
  return {
    up: (db: Kysely<unknown>) => facts.compactTextSearch(db),
    down: async () => {},
  }
}
