// The database boundary where errors change language: a Kysely dialect around SQLite's or
// PostgreSQL's whose driver throws the database busy or out of reach (locked, deadlocked, no
// connection in the pool, unreachable, timed out) as the AppError a client should see, the
// driver's error kept as its cause. Every query, transaction step and connection checkout passes
// here, so no service, repository or transport translates those; anything else passes through as
// the driver threw it (a refused foreign key too: see database-errors.ts). The same place tells a
// statement observer (tracing, when it is on) of every statement and transaction step, and tells
// what each write changed (changes.ts) once it is committed.
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely'
import { type Change, changeOf, PendingChanges } from './changes.js'
import { translateDatabaseError } from './database-errors.js'

/**
 * Told of a statement as it starts, with its SQL (placeholders, never the values); returns what to
 * call when it ends, with the error if it failed.
 */
export type StatementObserver = (sql: string) => (error?: unknown) => void

/** Where the handle looks for its observer on each statement: none until one is installed (Database.observeStatements). */
export interface StatementObservers {
  observer: StatementObserver | undefined
}

/** Where the writes' changes go. */
export interface ChangeSink {
  /** Told, after the commit, what a transaction (or a statement outside one) changed. */
  committed(changes: Change[]): void
  /** The statement that sends them to other instances, run just after a statement outside any transaction (PostgreSQL); none elsewhere. */
  announce?: (changes: Change[]) => CompiledQuery
  /** What commits a transaction that changed something, sending its changes in it first, in one round trip (PostgreSQL). */
  announceAndCommit?: (changes: Change[]) => CompiledQuery
}

export function translatingDialect(dialect: Dialect, statements: StatementObservers = { observer: undefined }, changes?: ChangeSink): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => translatingDriver(dialect.createDriver(), statements, changes),
  }
}

/** A connection's writes not yet committed: those of its open transaction. */
interface Uncommitted {
  inTransaction: boolean
  readonly pending: PendingChanges
}

/** `work` translated, and told to the observer when there is one (the only cost without one: this check). */
export function run<T>(statements: StatementObservers, sql: string, work: () => Promise<T>): Promise<T> {
  const { observer } = statements
  return observer === undefined ? translated(work) : observed(observer(sql), work)
}

async function observed<T>(end: (error?: unknown) => void, work: () => Promise<T>): Promise<T> {
  try {
    const result = await translated(work)
    end()
    return result
  } catch (error) {
    end(error)
    throw error
  }
}

/** `work`, its failure in the service's words when it is the database busy or out of reach. */
export async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw translateDatabaseError(error)
  }
}

function translatingDriver(driver: Driver, statements: StatementObservers, changes: ChangeSink | undefined): Driver {
  // The driver is handed back its own connection (PostgreSQL's releases it through a private
  // method); Kysely is handed one wrapper per connection, always the same (it adds its query log once per object).
  const wrappers = new WeakMap<DatabaseConnection, DatabaseConnection>()
  const inner = new WeakMap<DatabaseConnection, DatabaseConnection>()
  const uncommitted = new WeakMap<DatabaseConnection, Uncommitted>()
  const own = (connection: DatabaseConnection): DatabaseConnection => inner.get(connection) ?? connection
  const wrap = (connection: DatabaseConnection): DatabaseConnection => {
    let wrapper = wrappers.get(connection)
    if (wrapper === undefined) {
      const state: Uncommitted = { inTransaction: false, pending: new PendingChanges() }
      wrapper = translatingConnection(connection, statements, changes && { sink: changes, state })
      wrappers.set(connection, wrapper)
      inner.set(wrapper, connection)
      uncommitted.set(wrapper, state)
    }
    return wrapper
  }
  /** The transaction's changes sent to other instances with the commit, and told here after it. */
  const commit = async (connection: DatabaseConnection) => {
    const state = uncommitted.get(connection)
    const committed = state === undefined || state.pending.empty ? undefined : state.pending.take()
    const announceAndCommit = changes?.announceAndCommit
    if (committed !== undefined && announceAndCommit !== undefined) {
      await run(statements, 'commit', () =>
        own(connection)
          .executeQuery(announceAndCommit(committed))
          .then(() => undefined),
      )
    } else {
      await run(statements, 'commit', () => driver.commitTransaction(own(connection)))
    }
    if (state !== undefined) state.inTransaction = false
    if (committed !== undefined) changes?.committed(committed)
  }
  const rollback = async (connection: DatabaseConnection) => {
    const state = uncommitted.get(connection)
    if (state !== undefined) {
      state.inTransaction = false
      state.pending.take()
    }
    await run(statements, 'rollback', () => driver.rollbackTransaction(own(connection)))
  }
  type Compile = Parameters<NonNullable<Driver['savepoint']>>[2]
  const savepointStep = (step: Driver['savepoint']) =>
    step === undefined ? undefined : (connection: DatabaseConnection, name: string, compile: Compile) => translated(() => step(own(connection), name, compile))
  const savepoint = savepointStep(driver.savepoint?.bind(driver))
  const rollbackToSavepoint = savepointStep(driver.rollbackToSavepoint?.bind(driver))
  const releaseSavepoint = savepointStep(driver.releaseSavepoint?.bind(driver))
  return {
    init: () => translated(() => driver.init()),
    acquireConnection: async () => wrap(await translated(() => driver.acquireConnection())),
    beginTransaction: async (connection: DatabaseConnection, settings: TransactionSettings) => {
      await run(statements, 'begin', () => driver.beginTransaction(own(connection), settings))
      const state = uncommitted.get(connection)
      if (state !== undefined) state.inTransaction = true
    },
    commitTransaction: commit,
    rollbackTransaction: rollback,
    ...(savepoint === undefined ? {} : { savepoint }),
    ...(rollbackToSavepoint === undefined ? {} : { rollbackToSavepoint }),
    ...(releaseSavepoint === undefined ? {} : { releaseSavepoint }),
    releaseConnection: (connection: DatabaseConnection) => driver.releaseConnection(own(connection)),
    destroy: () => driver.destroy(),
  }
}

/** The statements whose rows the drivers count: told as changing nothing when they changed no row. */
const COUNTED_WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode'])

/**
 * Whether an INSERT, UPDATE or DELETE changed no row (an update whose conditions held for none):
 * as the driver counts them, or, where a statement that returns rows is not counted (SQLite), by
 * the rows its RETURNING gave. Anything else (a schema change, a raw statement) is told as it is:
 * SQLite's count after it is an earlier statement's.
 */
function wroteNothing(query: CompiledQuery, result: QueryResult<unknown>): boolean {
  const node = query.query
  if (!COUNTED_WRITES.has(node.kind)) return false
  if (result.numAffectedRows !== undefined) return result.numAffectedRows === 0n
  return (node as { readonly returning?: unknown }).returning !== undefined && result.rows.length === 0
}

function translatingConnection(
  connection: DatabaseConnection,
  statements: StatementObservers,
  changes: { sink: ChangeSink; state: Uncommitted } | undefined,
): DatabaseConnection {
  const execute = <R>(query: CompiledQuery) => run(statements, query.sql, () => connection.executeQuery<R>(query))
  return {
    executeQuery:
      changes === undefined
        ? execute
        : async <R>(query: CompiledQuery) => {
            const result = await execute<R>(query)
            const change = changeOf(query.query, query.sql)
            if (change === undefined || wroteNothing(query, result)) return result
            const { sink, state } = changes
            if (state.inTransaction) {
              state.pending.add(change)
              return result
            }
            // Committed already, on its own: sent to the other instances now, and told here. Only the
            // bookkeeping tables (tokens, idempotency keys) are written so; should the sending fail (the
            // connection lost just after the write), the other instances do not hear of it.
            if (sink.announce !== undefined) await execute(sink.announce([change])).catch(() => undefined)
            sink.committed([change])
            return result
          },
    streamQuery: async function* <R>(query: Parameters<DatabaseConnection['streamQuery']>[0], chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
      try {
        yield* connection.streamQuery<R>(query, chunkSize)
      } catch (error) {
        throw translateDatabaseError(error)
      }
    },
  }
}
