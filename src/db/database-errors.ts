// Database errors the service expects, recognized at the database boundary and translated once
// into the service's vocabulary: the handle openDatabase returns throws the database busy or out
// of reach as AppErrors (translating-dialect.ts), so no transport translates. Each driver's error
// shape is distinct, so one predicate serves every dialect.
import { AppError, isAppError } from '../errors.js'

/**
 * SQLite could not take its lock in time: another process (a `threadline seed`) holds it; or
 * PostgreSQL ended a transaction in a deadlock (40P01, once write-transaction.ts has run it again
 * as often as it does), has no connection left (53300), or cancelled a statement that ran too long
 * (57014, a statement_timeout set on the server).
 */
const BUSY_CODES = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_LOCKED', '40P01', '53300', '57014'])

/** `pg`'s words when no connection comes from the pool in time: every one is in use, or none can be made. */
const POOL_TIMEOUT = /^timeout exceeded when trying to connect/

/**
 * The PostgreSQL server cannot be reached or cannot serve: the network (Node's codes), the
 * connection (SQLSTATE class 08), the server shutting down or starting (57P01-57P03), out of disk or
 * memory (53100, 53200), a standby that cannot write (25006, after a failover).
 */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53100',
  '53200',
  '25006',
])

/** What `pg` says, with no code, when a connection is lost, or a connection of its own (not the pool's) is not made in time. */
const UNREACHABLE_MESSAGES = /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout expired$)/

/** `pg`'s query_timeout: the query outlived DATABASE_QUERY_TIMEOUT_MS (a server that stopped answering). */
export const isQueryTimeout = (error: unknown): boolean => error instanceof Error && error.message === 'Query read timeout'

/**
 * PostgreSQL refusing a prepared statement whose columns changed under it (`select *` once a table
 * gained a column, as another instance's migration may do): 0A000, "cached plan must not change
 * result type". Run unnamed, the same text reads the table as it is now.
 */
export const isStalePreparedResult = (error: unknown): boolean =>
  codeOf(error) === '0A000' && /cached plan must not change result type/.test(String((error as Error).message))

const codeOf = (error: unknown): unknown => (error as { code?: unknown } | null)?.code

/**
 * A database error as the AppError a client should see (the original as its `cause`), or undefined
 * when the error is not one the service expects (a bug: answered INTERNAL_ERROR by the caller).
 * An AppError made here (thrown by the database handle) is returned as it is.
 */
export function databaseAppError(error: unknown): AppError | undefined {
  if (isAppError(error)) return error.cause !== undefined && databaseAppError(error.cause) !== undefined ? error : undefined
  // An HTTP error (a client that went away mid-body: ECONNRESET) is not the database's.
  if ((error as { statusCode?: unknown } | null)?.statusCode !== undefined) return undefined
  const code = codeOf(error)
  if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
    // A row this write refers to was deleted by a concurrent request after the service checked it
    // (PostgreSQL runs READ COMMITTED): what the write needed is gone.
    return new AppError('NOT_FOUND', 'What this write refers to no longer exists', undefined, { cause: error })
  }
  return unavailable(error)
}

/**
 * The database busy or out of reach: worth retrying shortly, so SERVICE_UNAVAILABLE (with
 * Retry-After). The database handle throws these already translated (translating-dialect.ts); a
 * refused foreign key it leaves as the driver's (the store's own tests read the driver's words),
 * and toAppError (src/http/to-app-error.ts) translates it with the rest of databaseAppError.
 */
function unavailable(error: unknown): AppError | undefined {
  const code = codeOf(error)
  if ((typeof code === 'string' && BUSY_CODES.has(code)) || (error instanceof Error && POOL_TIMEOUT.test(error.message))) {
    return new AppError('SERVICE_UNAVAILABLE', 'The database is busy; retry in a moment', undefined, { cause: error })
  }
  if (isUnreachable(error)) {
    return new AppError('SERVICE_UNAVAILABLE', 'The database cannot be reached; retry in a moment', undefined, { cause: error })
  }
  return undefined
}

/** What the database handle throws: the database busy or out of reach in the service's words, anything else as the driver threw it. */
export const translateDatabaseError = (error: unknown): unknown => (isAppError(error) ? error : (unavailable(error) ?? error))

/** PostgreSQL ended the transaction to break a deadlock (40P01): seen through its translation, which keeps it as the cause. */
export const isDeadlock = (error: unknown): boolean => codeOf(isAppError(error) ? error.cause : error) === '40P01'

function isUnreachable(error: unknown): boolean {
  const code = codeOf(error)
  if (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || code.startsWith('08'))) return true
  // Node reports a refused connection to a name with several addresses as an AggregateError.
  if (error instanceof AggregateError) return error.errors.some(isUnreachable)
  return isQueryTimeout(error) || (error instanceof Error && UNREACHABLE_MESSAGES.test(error.message))
}

/** A UNIQUE constraint refused the write (SQLite SQLITE_CONSTRAINT_UNIQUE, PostgreSQL 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const code = codeOf(error)
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505'
}
