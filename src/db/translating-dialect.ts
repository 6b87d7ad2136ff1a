// The database boundary where errors change language: a Kysely dialect around SQLite's or
// PostgreSQL's whose driver throws the database busy or out of reach (locked, deadlocked, no
// connection in the pool, unreachable, timed out) as the AppError a client should see, the
// driver's error kept as its cause. Every query, transaction step and connection checkout passes
// here, so no service, repository or transport translates those; anything else passes through as
// the driver threw it (a refused foreign key too: see database-errors.ts). The same place tells a
// statement observer (tracing, when it is on) of every statement and transaction step.
import type { DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely'
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

export function translatingDialect(dialect: Dialect, statements: StatementObservers = { observer: undefined }): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => translatingDriver(dialect.createDriver(), statements),
  }
}

/** `work` translated, and told to the observer when there is one (the only cost without one: this check). */
function run<T>(statements: StatementObservers, sql: string, work: () => Promise<T>): Promise<T> {
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

async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw translateDatabaseError(error)
  }
}

function translatingDriver(driver: Driver, statements: StatementObservers): Driver {
  // The driver is handed back its own connection (PostgreSQL's releases it through a private
  // method); Kysely is handed one wrapper per connection, always the same (it adds its query log once per object).
  const wrappers = new WeakMap<DatabaseConnection, DatabaseConnection>()
  const inner = new WeakMap<DatabaseConnection, DatabaseConnection>()
  const own = (connection: DatabaseConnection): DatabaseConnection => inner.get(connection) ?? connection
  const wrap = (connection: DatabaseConnection): DatabaseConnection => {
    let wrapper = wrappers.get(connection)
    if (wrapper === undefined) {
      wrapper = translatingConnection(connection, statements)
      wrappers.set(connection, wrapper)
      inner.set(wrapper, connection)
    }
    return wrapper
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
    beginTransaction: (connection: DatabaseConnection, settings: TransactionSettings) =>
      run(statements, 'begin', () => driver.beginTransaction(own(connection), settings)),
    commitTransaction: (connection: DatabaseConnection) => run(statements, 'commit', () => driver.commitTransaction(own(connection))),
    rollbackTransaction: (connection: DatabaseConnection) => run(statements, 'rollback', () => driver.rollbackTransaction(own(connection))),
    ...(savepoint === undefined ? {} : { savepoint }),
    ...(rollbackToSavepoint === undefined ? {} : { rollbackToSavepoint }),
    ...(releaseSavepoint === undefined ? {} : { releaseSavepoint }),
    releaseConnection: (connection: DatabaseConnection) => driver.releaseConnection(own(connection)),
    destroy: () => driver.destroy(),
  }
}

function translatingConnection(connection: DatabaseConnection, statements: StatementObservers): DatabaseConnection {
  return {
    executeQuery: <R>(query: Parameters<DatabaseConnection['executeQuery']>[0]) => run(statements, query.sql, () => connection.executeQuery<R>(query)),
    streamQuery: async function* <R>(query: Parameters<DatabaseConnection['streamQuery']>[0], chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
      try {
        yield* connection.streamQuery<R>(query, chunkSize)
      } catch (error) {
        throw translateDatabaseError(error)
      }
    },
  }
}
