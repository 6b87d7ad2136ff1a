// The hot reads (compiled-statements.ts, and a page read in one statement: list-page.ts) run on the
// store's own connection, past Kysely's executor: a statement through Kysely passes about ten
// async steps (its connection provider, its runtime driver, SQLite's one-connection mutex, the
// result's plugins), each a promise or more.
// Read one user by id, 50 callers at once: 9 µs of CPU a statement through Kysely against 3 µs
// for better-sqlite3 alone; on PostgreSQL, 50 µs of the process's CPU against 35 µs for `pg`'s
// pool alone. A direct read is still translated and observed (translating-dialect.ts) and counted
// by the handle's onQuery, as every statement through Kysely is.
import { type Compilable, CompiledQuery, type Kysely } from 'kysely'
import type { Tables } from './tables.js'

/** The store's handle (create-database.ts's Db, named here so that the two modules do not import each other). */
type Db = Kysely<Tables>

/**
 * Runs a read-only statement outside any transaction and returns its rows; undefined when it cannot
 * run now (SQLite's one connection is inside a transaction: the read waits its turn through Kysely).
 */
export type DirectRead = (sql: string, parameters: readonly unknown[]) => Promise<unknown[]> | undefined

const readers = new WeakMap<Db, DirectRead>()

export function registerDirectReads(db: Db, read: DirectRead): void {
  readers.set(db, read)
}

/**
 * The rows of a read-only statement: straight from the store when it can, through Kysely otherwise
 * (in a transaction, whose handle has no direct reads, or while SQLite's connection is held by one).
 */
export function readRows<Row>(db: Db, sql: string, parameters: readonly unknown[]): Promise<Row[]> {
  const direct = readers.get(db)?.(sql, parameters)
  if (direct !== undefined) return direct as Promise<Row[]>
  return db.executeQuery<Row>(CompiledQuery.raw(sql, parameters as unknown[])).then((result) => result.rows)
}

/** The rows of a read-only query built with Kysely, as readRows runs them. */
export function readQuery<Row>(db: Db, query: Compilable<Row>): Promise<Row[]> {
  const { sql, parameters } = query.compile()
  return readRows<Row>(db, sql, parameters)
}
