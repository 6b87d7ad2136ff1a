// The full-text indexes of a database made before: each set to merge its segments as a new one
// does (TEXT_SEARCH_AUTOMERGE in dialect-facts.ts) and merged into one segment, as a bulk fill now
// leaves it. On SQLite each write merges FTS5's segments as it goes; those a rebuild of 100,000
// posts left (9) made every 64th insert of a post take 14 ms or more. Nothing to undo: the index
// holds the same rows either way.
import type { Kysely, Migration } from 'kysely'
import type { DialectFacts } from '../dialect-facts.js'

export function textSearchMergesMigration(facts: DialectFacts): Migration {
  return {
    up: (db: Kysely<unknown>) => facts.compactTextSearch(db),
    down: async () => {},
  }
}
