// Applies the migrations in code with Kysely's Migrator, which also keeps two processes from
// migrating the same database at once: on SQLite a write lock on its lock table, on PostgreSQL a
// transaction-scoped advisory lock held while the migrations run, each in its own transaction.
import { type Migration, type MigrationResult, Migrator, sql } from 'kysely'
import type { Database } from './create-database.js'
import type { DialectFacts } from './dialect-facts.js'
import { initialMigration } from './migrations/0001-initial.js'
import { listIndexesMigration } from './migrations/0002-list-indexes.js'
import { searchIndexesMigration } from './migrations/0003-search-indexes.js'
import { textSearchMigration } from './migrations/0004-text-search.js'
import { idempotencyKeysMigration } from './migrations/0005-idempotency-keys.js'
import { scopesAndIdentitiesMigration } from './migrations/0006-scopes-and-identities.js'
import { idempotencyBoundsMigration } from './migrations/0007-idempotency-bounds.js'
import { wholeCollectionIndexesMigration } from './migrations/0008-whole-collection-indexes.js'
import { userProfilesAndGuestCommentsMigration } from './migrations/0009-user-profiles-and-guest-comments.js'
import { albumsAndPhotosMigration } from './migrations/0010-albums-and-photos.js'
import { textSearchMergesMigration } from './migrations/0011-text-search-merges.js'

/** The migrations by name (Kysely applies them in the order of their names), each made for the store's dialect. */
const MIGRATIONS: Readonly<Record<string, (facts: DialectFacts) => Migration>> = {
  '0001-initial': initialMigration,
  '0002-list-indexes': listIndexesMigration,
  '0003-search-indexes': searchIndexesMigration,
  '0004-text-search': textSearchMigration,
  '0005-idempotency-keys': idempotencyKeysMigration,
  '0006-scopes-and-identities': scopesAndIdentitiesMigration,
  '0007-idempotency-bounds': idempotencyBoundsMigration,
  '0008-whole-collection-indexes': wholeCollectionIndexesMigration,
  '0009-user-profiles-and-guest-comments': userProfilesAndGuestCommentsMigration,
  '0010-albums-and-photos': albumsAndPhotosMigration,
  '0011-text-search-merges': textSearchMergesMigration,
}

/** The migrations' names, in the order they apply. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS).sort()

const migrationsFor = (database: Database): Record<string, Migration> =>
  Object.fromEntries(Object.entries(MIGRATIONS).map(([name, migration]) => [name, migration(database.facts)]))

export interface MigrationReport {
  /** Names of the migrations this call applied, in order; empty when the schema was current. */
  applied: string[]
}

export async function migrateToLatest(database: Database): Promise<MigrationReport> {
  const migrator = new Migrator({
    db: database.db,
    // Kysely looks for its own tables in every schema of a PostgreSQL database unless told which:
    // the one the connection works in (the first of its search_path).
    ...(database.facts.dialect === 'postgres' ? { migrationTableSchema: await currentSchema(database) } : {}),
    provider: { getMigrations: () => Promise.resolve(migrationsFor(database)) },
    // By code unit, as MIGRATION_NAMES is sorted: Kysely's default, localeCompare, reads some 2 MB
    // of ICU's collation data into every process that starts, for names of ASCII digits and words.
    nameComparator: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
  })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error) {
    const failed = results.find((r: MigrationResult) => r.status === 'Error')
    throw new Error(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${error instanceof Error ? error.message : 'see cause'}`, { cause: error })
  }
  return { applied: results.filter((r) => r.status === 'Success').map((r) => r.migrationName) }
}

async function currentSchema(database: Database): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)
  const schema = rows[0]?.schema
  if (schema === undefined) throw new Error('The connection has no current schema: its search_path names none that exists')
  return schema
}
