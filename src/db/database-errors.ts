// Database errors the services expect, recognized at the database boundary. Each driver's error
// shape is distinct, so one predicate serves every dialect.

/**
 * The database could not take the lock in time: another process (a `threadline seed` against the
 * same file) holds it. Worth retrying shortly: SERVICE_UNAVAILABLE, not a bug.
 */
export function isDatabaseBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_LOCKED'
}

/** A UNIQUE constraint refused the write (SQLite SQLITE_CONSTRAINT_UNIQUE, PostgreSQL 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505'
}
