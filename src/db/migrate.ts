// Applies the migrations in code with Kysely's Migrator, which also keeps two processes from
// migrating the same database at once (its lock table).
import { type Migration, type MigrationResult, Migrator } from 'kysely'
import type { Database } from './create-database.js'
import { initialMigration } from './migrations/0001-initial.js'
import { listIndexesMigration } from './migrations/0002-list-indexes.js'

function migrationsFor(database: Database): Record<string, Migration> {
  return {
    '0001-initial': initialMigration(database.facts),
    '0002-list-indexes': listIndexesMigration(),
  }
}

export interface MigrationReport {
  /** Names of the migrations this call applied, in order; empty when the schema was current. */
  applied: string[]
}

export async function migrateToLatest(database: Database): Promise<MigrationReport> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: () => Promise.resolve(migrationsFor(database)) },
  })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error) {
    const failed = results.find((r: MigrationResult) => r.status === 'Error')
    throw new Error(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${error instanceof Error ? error.message : 'see cause'}`, { cause: error })
  }
  return { applied: results.filter((r) => r.status === 'Success').map((r) => r.migrationName) }
}
