// Database errors the services expect, recognized at the database boundary. Each driver's error
// shape is distinct, so one predicate serves every dialect.

/** A UNIQUE constraint refused the write (SQLite SQLITE_CONSTRAINT_UNIQUE, PostgreSQL 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505'
}
