// Opens the store named by the config: Kysely over better-sqlite3 (the embedded default).
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import type { DatabaseLocation } from '../config.js'
import { type DialectFacts, sqliteFacts } from './dialect-facts.js'
import type { Tables } from './tables.js'

export type Db = Kysely<Tables>

export interface Database {
  readonly db: Db
  readonly facts: DialectFacts
  /** Closes the connection; the handle is unusable afterwards. */
  close(): Promise<void>
}

/**
 * How long a statement waits for another process's lock before failing (SQLITE_BUSY, answered
 * 503). better-sqlite3 waits synchronously, stalling every request meanwhile: keep it short.
 */
const SQLITE_BUSY_TIMEOUT_MS = 200

export interface OpenOptions {
  /** Called with the SQL of every statement run (tests count them). */
  onQuery?: (sql: string) => void
}

export function openDatabase(location: DatabaseLocation, options: OpenOptions = {}): Database {
  const connection = openSqlite(location.path)
  const { onQuery } = options
  const db = new Kysely<Tables>({
    dialect: new SqliteDialect({ database: connection }),
    ...(onQuery === undefined ? {} : { log: (event) => onQuery(event.query.sql) }),
  })
  return { db, facts: sqliteFacts, close: () => db.destroy() }
}

function openSqlite(path: string): SqliteDatabase.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const connection = new SqliteDatabase(path)
  // WAL lets readers run beside the writer; with synchronous=NORMAL a commit survives a crash of
  // the process (the WAL is in the OS's hands), while a power loss may lose the last commits.
  connection.pragma('journal_mode = WAL')
  connection.pragma('synchronous = NORMAL')
  connection.pragma('foreign_keys = ON')
  connection.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
  return connection
}
