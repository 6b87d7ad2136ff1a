// Opens the store named by the config: Kysely over better-sqlite3 (the embedded default), or over
// a pool of `pg` connections to PostgreSQL (the scale-out one). Nothing else knows which it is, and
// the expected database errors leave the handle already in the service's words (AppError).
import { closeSync, mkdirSync, openSync, readSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { type Dialect, Kysely, PostgresDialect, SqliteDialect, type SqliteDialectConfig } from 'kysely'
import type pgModule from 'pg'
import type { DatabaseLocation } from '../config.js'
import { RecentlyUsed } from '../recently-used.js'
import { isQueryTimeout, isStalePreparedResult } from './database-errors.js'
import { type DialectFacts, postgresFacts, sqliteFacts } from './dialect-facts.js'
import type { Tables } from './tables.js'
import { run, type StatementObserver, type StatementObservers, translated, translatingDialect } from './translating-dialect.js'
import { registerDirectReads } from './direct-reads.js'
import { withCurrentSchemaIntrospector } from './current-schema-introspector.js'
import { readNameOf, statementNameOf } from './statement-names.js'
import { answersTogether, type Together } from './answers-together.js'
import { type NamedQuery, namedQueryOf, ReadByName } from './pg-named-query.js'
import { type Overflow, pipelinedReads } from './pipelined-reads.js'
import { type ChangeFeed, postgresChangeFeed, shared, sqliteChangeFeed } from './change-feed.js'
import { type BackgroundCheckpoints, backgroundCheckpoints } from './sqlite-checkpoints.js'

export type Db = Kysely<Tables>

/**
 * pg is loaded when the store is PostgreSQL, not before: on SQLite it would only hold memory
 * (about 5 MB of a server's resident set, npm run bench's peak RSS goal).
 */
let pgLoaded: typeof pgModule | undefined
const loadPg = (): typeof pgModule => (pgLoaded ??= createRequire(import.meta.url)('pg') as typeof pgModule)

export interface Database {
  readonly db: Db
  readonly facts: DialectFacts
  /** Closes the connection; the handle is unusable afterwards. */
  close(): Promise<void>
  /** PostgreSQL's pool: connections open, idle, requests waiting for one, and the pool's size. */
  readonly poolStats?: () => { total: number; idle: number; waiting: number; max: number }
  /**
   * A number that moves whenever committed data may have changed, by this process or another: what
   * a cache of answers (src/http/representation-cache.ts) checks its entries against. SQLite only;
   * on PostgreSQL other instances write unseen, so there is none.
   */
  readonly dataVersion?: () => number
  /** What each write changed, told once committed: this handle's, and (as it hears them) other writers'. */
  readonly changes: ChangeFeed
  /** Tells `observer` of every statement from now on (tracing installs one when it is on; until then, none). */
  observeStatements(observer: StatementObserver): void
}

/**
 * How long a statement waits for another process's lock before failing (SQLITE_BUSY, answered
 * 503). better-sqlite3 waits synchronously, stalling every request meanwhile: keep it short.
 */
const SQLITE_BUSY_TIMEOUT_MS = 200

/**
 * SQLite's page cache while serving, in KiB: SQLite's own default (2 MiB). better-sqlite3 builds
 * SQLite with 16 MB per connection instead, which a server's writes filled (the search indexes'
 * pages): under POST create the process's malloc heap went from 6 to 22 MB, and stayed there. The
 * pages not kept are read again from the operating system's file cache; reads and writes ran as
 * fast either way, within the noise of the measurement (docs/performance.md). The commands that
 * write in bulk (import, seed) keep the larger cache.
 */
export const SERVING_PAGE_CACHE_KIB = 2000

export interface OpenOptions {
  /** Called with the SQL of every statement run (tests count them). */
  onQuery?: (sql: string) => void
  /** SQLite: the page cache's size in KiB (SERVING_PAGE_CACHE_KIB to serve); better-sqlite3's 16 MB when absent. */
  pageCacheKib?: number
  /**
   * SQLite: once this settles, checkpoints run mostly on a thread of their own while this handle
   * writes, rather than in the serving connection's commits (sqlite-checkpoints.ts). `serve` gives
   * the moment it listens.
   */
  checkpointInBackground?: Promise<void>
  /**
   * Another handle of this process to the same store, whose change feed this one's writes are told
   * to at once (tests write their fixtures so, as another process would, and the served handle's
   * cache hears of them before the next request rather than a NOTIFY later).
   */
  shareChangesOf?: Database
}

export function openDatabase(location: DatabaseLocation, options: OpenOptions = {}): Database {
  const { onQuery, pageCacheKib, shareChangesOf, checkpointInBackground } = options
  const open = (
    dialect: Dialect,
    facts: DialectFacts,
    changes: ChangeFeed,
    reads: StoreReads,
    extras: Pick<Database, 'poolStats' | 'dataVersion'> = {},
  ): Database => {
    const statements: StatementObservers = { observer: undefined }
    const db = new Kysely<Tables>({
      dialect: translatingDialect(dialect, statements, changes.sink),
      ...(onQuery === undefined ? {} : { log: (event) => onQuery(event.query.sql) }),
    })
    registerDirectReads(db, (sql, parameters) => {
      if (!reads.now()) return undefined
      onQuery?.(sql)
      return reads.rows(sql, parameters, (work) => run(statements, sql, work))
    })
    return {
      db,
      facts,
      changes,
      close: async () => {
        await changes.close()
        await reads.close?.()
        await db.destroy()
      },
      observeStatements: (observer) => {
        statements.observer = observer
      },
      ...extras,
    }
  }
  if (location.dialect === 'postgres') {
    const prepared = connectionSetup(location.queryTimeoutMs)
    const pool = openPool(location.url, location.poolSize, location.queryTimeoutMs, prepared)
    const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: location.poolSize })
    const changes =
      shareChangesOf === undefined
        ? postgresChangeFeed(() => new (loadPg().Client)({ connectionString: location.url, application_name: 'threadline changes', keepAlive: true }))
        : shared(shareChangesOf.changes)
    const pipelined = pipelinedReads(() => pipelinedClient(location.url, location.queryTimeoutMs, prepared), READ_CONNECTIONS, onThePool(pool))
    const reads: StoreReads = {
      now: () => true,
      rows: (sql, parameters, statement) =>
        translated(() =>
          pipelined.run(async (client, retire) => {
            // Named once run before (statement-names.ts): parsed, and maybe planned, once per connection.
            const name = readNameOf(sql)
            const values = parameters as unknown[]
            return statement(async () => {
              if (name === undefined) return (await client.query<Record<string, unknown>>(sql, values)).rows
              try {
                return (await runByName(client, new ReadByName(name, sql), values)).rows
              } catch (error) {
                if (!isStalePreparedResult(error)) throw error
                // The table changed shape: read it unnamed (a text alone would be named again on its way:
                // sendCompiledStatementsByName), and close the connection with its prepared statements.
                try {
                  return (await client.query<Record<string, unknown>>({ text: sql }, values)).rows
                } finally {
                  retire()
                }
              }
            })
          }),
        ),
      close: () => pipelined.close(),
    }
    return open(withCurrentSchemaIntrospector(new PostgresDialect({ pool })), postgresFacts, changes, reads, { poolStats })
  }
  const sqlite = openSqlite(location.path, pageCacheKib)
  const connection = withStatementCache(sqlite)
  const feed = shareChangesOf === undefined ? sqliteChangeFeed(connection.externalVersion) : shared(shareChangesOf.changes)
  const changes =
    checkpointInBackground !== undefined && location.path !== ':memory:'
      ? checkpointingAfterCommits(feed, backgroundCheckpoints(sqlite, location.path, checkpointInBackground))
      : feed
  return open(new SqliteDialect({ database: connection }), sqliteFacts, changes, connection.reads, { dataVersion: connection.dataVersion })
}

/** `feed`, its commits also told to `checkpoints`, which end as it closes. */
function checkpointingAfterCommits(feed: ChangeFeed, checkpoints: BackgroundCheckpoints): ChangeFeed {
  return {
    ...feed,
    sink: {
      ...feed.sink,
      committed: (changes) => {
        checkpoints.committed()
        feed.sink.committed(changes)
      },
    },
    close: async () => {
      await checkpoints.close()
      await feed.close()
    },
  }
}

/** How a store runs a read-only statement past Kysely (direct-reads.ts). */
interface StoreReads {
  /** Whether a read may run now, beside whatever else holds the store. */
  now(): boolean
  /** The rows; `statement` is the statement's run itself (translated and observed, as Kysely's are), a connection in hand. */
  rows(sql: string, parameters: readonly unknown[], statement: (work: () => Promise<unknown[]>) => Promise<unknown[]>): Promise<unknown[]>
  /** Closes what the reads hold of their own (PostgreSQL's pipelined connections). */
  close?(): Promise<void>
}

/**
 * Statements prepared once per SQL text and kept (at most STATEMENT_CACHE_SIZE; one not used
 * lately goes first): Kysely's SQLite driver prepares every query anew, which was a tenth of
 * the CPU of serving GET one user (npm run bench:profile). Safe on one connection because no
 * statement is left half-read: Kysely runs each to completion (all or run), and nothing here
 * streams. A statement whose table changes shape is prepared again by SQLite itself.
 */
const STATEMENT_CACHE_SIZE = 500

function withStatementCache(
  connection: SqliteDatabase.Database,
): SqliteDialectConfig['database'] & { dataVersion: () => number; externalVersion: () => number; reads: StoreReads } {
  const statements = new RecentlyUsed<string, SqliteDatabase.Statement>(STATEMENT_CACHE_SIZE)
  // The data version: SQLite's own moves when another connection commits (the `threadline`
  // commands, another process); this connection's writes are counted here. A statement that may
  // write is counted as it is prepared: Kysely runs it at once, in the same turn of the loop, and
  // holds the one connection for a whole transaction, so no read runs in between. It is looked at
  // on every call: once per turn of the event loop instead, a token revoked by another process was
  // still honoured by a request in the same turn (test/tokens/known-callers.test.ts found it).
  const external = externalDataVersion(connection)
  let writes = 0
  const prepare = (sql: string): SqliteDatabase.Statement => {
    let statement = statements.get(sql)
    if (statement === undefined) {
      statement = connection.prepare(sql)
      statements.set(sql, statement)
    }
    if (!statement.readonly) writes++
    return statement
  }
  // The direct reads' statements, apart from Kysely's: a direct read's rows are read as arrays (raw
  // is the statement's mode), and Kysely's runs expect objects from SQLite.
  const reads = new RecentlyUsed<string, DirectStatement>(STATEMENT_CACHE_SIZE)
  const readRowsOf = (sql: string, parameters: readonly unknown[]): unknown[] => {
    let read = reads.get(sql)
    if (read === undefined) {
      read = directStatement(connection.prepare(sql))
      reads.set(sql, read)
    }
    if (!read.statement.readonly) writes++
    const rows = read.statement.all(parameters)
    const { row } = read
    if (row !== undefined) for (let i = 0; i < rows.length; i++) rows[i] = row(rows[i] as unknown[])
    return rows
  }
  return {
    dataVersion: () => writes + external.version(),
    // Kysely holds the one connection for a whole transaction, across its awaits: a read then waits
    // its turn through Kysely (it would see the transaction's uncommitted rows). Otherwise nothing
    // is half-done on the connection between two turns of the loop, and the read runs at once.
    reads: {
      now: () => !connection.inTransaction,
      rows: (sql, parameters, statement) => statement(() => Promise.resolve(readRowsOf(sql, parameters))),
    },
    externalVersion: external.version,
    close: () => {
      statements.clear()
      reads.clear()
      external.close()
      connection.close()
    },
    prepare,
  }
}

/**
 * A direct read's statement, and how its rows become objects. better-sqlite3 makes each row an
 * object by storing its columns one by one (about 145 ns a column: a user's 13 columns cost 1.9
 * µs of a 3.6 µs read); read as arrays, the rows are made objects here by a function written for
 * the statement's columns, one object literal. Not for a statement that names no columns of its
 * own (`*`: its columns are the table's, which another process's migration may change under a
 * prepared statement) nor one with a column named `__proto__` (a literal would set the prototype).
 */
interface DirectStatement {
  readonly statement: SqliteDatabase.Statement
  /** The row of the values read, in the statement's column order; absent when SQLite makes the objects itself. */
  readonly row: ((values: unknown[]) => unknown) | undefined
}

function directStatement(statement: SqliteDatabase.Statement): DirectStatement {
  if (!statement.reader || /\*/.test(statement.source.replace(/count\(\*\)/gi, ''))) return { statement, row: undefined }
  const names = statement.columns().map((column) => column.name)
  if (names.includes('__proto__')) return { statement, row: undefined }
  statement.raw(true)
  const properties = names.map((name, index) => `${JSON.stringify(name)}: values[${index}]`)
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the text is made of SQLite's column names, each written as a JSON string
  const row = new Function('values', `return { ${properties.join(', ')} }`) as (values: unknown[]) => unknown
  return { statement, row }
}

/** The WAL-index header at the start of the -shm file (SQLite's file format, "The WAL-Index Format"). */
const WAL_INDEX_HEADER_BYTES = 48

/**
 * SQLite's data version (PRAGMA data_version: it moves when another connection commits), read
 * only when the WAL-index header has changed since the last look. The pragma begins a read
 * transaction (two fcntl locks and a stat, about 3 µs, 8% of the CPU of a GET answered from the
 * representation cache, which looks every time); the header is one read of 48 bytes, and every
 * commit of any connection rewrites it (its change counter, the last frame), as does a
 * checkpoint: a change the header shows is confirmed by the pragma, which tells another
 * connection's commit from this one's and from a checkpoint. The header is read before the
 * pragma, so a commit between the two is seen by the pragma now or by the header next time. A
 * database not in WAL mode (in memory), or whose -shm cannot be read, asks the pragma every time.
 */
function externalDataVersion(connection: SqliteDatabase.Database): { version: () => number; close: () => void } {
  const pragma = connection.prepare('PRAGMA data_version').pluck()
  const read = () => pragma.get() as number
  if (connection.memory || connection.pragma('journal_mode', { simple: true }) !== 'wal') return { version: read, close: () => {} }
  const shm = `${connection.name}-shm`
  let fd: number | undefined
  const header = Buffer.alloc(WAL_INDEX_HEADER_BYTES)
  const seen = Buffer.alloc(WAL_INDEX_HEADER_BYTES)
  let version = 0
  let known = false
  return {
    version: () => {
      try {
        fd ??= openSync(shm, 'r')
        if (readSync(fd, header, 0, WAL_INDEX_HEADER_BYTES, 0) === WAL_INDEX_HEADER_BYTES && known && header.equals(seen)) return version
      } catch {
        return read()
      }
      header.copy(seen)
      version = read()
      known = true
      return version
    },
    close: () => {
      if (fd !== undefined) closeSync(fd)
      fd = undefined
    },
  }
}

/**
 * How long a request waits for a PostgreSQL connection (from the pool, or a new one) before it is
 * answered 503: the server is down, or the pool is exhausted for that long.
 */
const PG_CONNECT_TIMEOUT_MS = 3000

const TIMESTAMPTZ_OID = 1184

/**
 * The connections of PostgreSQL's pipelined reads (pipelined-reads.ts), beside the pool's: two, so
 * that a slow read (a page's count) holds up at most half of the others, and each has a backend.
 */
const READ_CONNECTIONS = 2

/** What every connection of the store is given once made: its session's settings, and how its queries are sent and answered. */
type ConnectionSetup = (client: pgModule.ClientBase) => void

function connectionSetup(queryTimeoutMs: number): ConnectionSetup {
  const together = answersTogether()
  const Named = namedQueryOf(loadPg())
  return (client) => {
    client.on('error', () => {})
    // Instants are written and read in ISO 8601 and UTC, whatever the server's or the URL's
    // settings. A client runs its queries in the order they were sent, and the pool hands a
    // connection out only after this (and a pipelined read waits for its connection to be open):
    // whoever takes it (Kysely, or a direct read) finds the session set. Should it fail, the
    // connection is broken and the next query on it fails as well.
    client.query(`set datestyle = 'ISO'; set timezone = 'UTC'`).catch(() => {})
    sendCompiledStatementsByName(client, Named)
    if (queryTimeoutMs > 0) cutOnTimeout(client)
    handAnswersOnTogether(client, together)
  }
}

/** What the pool's connections and the pipelined reads' have alike. */
function connectionOptions(url: string, queryTimeoutMs: number) {
  return {
    connectionString: url,
    connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
    // A server that vanished without closing the connection is found by TCP keepalive probes, from 10 s idle.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: { getTypeParser: typeParser },
    ...(queryTimeoutMs > 0 ? { query_timeout: queryTimeoutMs } : {}),
  }
}

function openPool(url: string, size: number, queryTimeoutMs: number, setup: ConnectionSetup): pgModule.Pool {
  const pool = new (loadPg().Pool)({ ...connectionOptions(url, queryTimeoutMs), max: size, application_name: 'threadline' })
  // A connection that breaks is dropped by the pool, which opens a new one when asked, and a query
  // running on it fails on its own (answered 503). What is left is an 'error' event, on the pool
  // or on the connection itself (seen when the server went away between a release and the next
  // checkout), which would end the process if nobody listened.
  pool.on('error', () => {})
  pool.on('connect', setup)
  return pool
}

/**
 * A pipelined read run on one of the pool's connections instead (pipelined-reads.ts: every
 * pipelined connection is held by a slow statement). Retired, the connection is dropped with its
 * prepared statements rather than given back.
 */
function onThePool(pool: pgModule.Pool): Overflow {
  return async (read) => {
    const client = await pool.connect()
    let retired = false
    try {
      return await read(client, () => (retired = true))
    } finally {
      client.release(retired)
    }
  }
}

/** A connection of the pipelined reads, made and set up, not yet connected. */
function pipelinedClient(url: string, queryTimeoutMs: number, setup: ConnectionSetup): pgModule.Client {
  const client = new (loadPg().Client)({
    ...connectionOptions(url, queryTimeoutMs),
    application_name: 'threadline reads',
    pipeline: true,
  })
  setup(client)
  return client
}

/**
 * The compiled statements (compiled-statements.ts) sent by name: Kysely's driver sends each query
 * as text, which PostgreSQL parses and plans on every run; named, it is parsed once per connection.
 * A read given its name (a ReadByName: the direct reads') is run the same way. Both run as a
 * NamedQuery (pg-named-query.ts), which spares `pg` the work it would redo on every run.
 */
function sendCompiledStatementsByName(client: pgModule.ClientBase, Named: NamedQuery): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  client.query = ((...args: unknown[]) => {
    const [first, values] = args
    if (args.length !== 2 || !Array.isArray(values)) return query(...args)
    const read = first instanceof ReadByName ? first : undefined
    const text = read?.text ?? (typeof first === 'string' ? first : undefined)
    const name = read?.name ?? (text === undefined ? undefined : statementNameOf(text))
    if (name === undefined || text === undefined) return query(...args)
    return new Promise((resolve, reject) => query(new Named(name, text, values, (error, result) => (error === null ? resolve(result) : reject(error)))))
  }) as typeof client.query
}

/** A read run under its own name, through the connection's query (sendCompiledStatementsByName). */
const runByName = (client: pgModule.ClientBase, read: ReadByName, values: unknown[]) =>
  (client.query as unknown as (read: ReadByName, values: unknown[]) => Promise<pgModule.QueryResult<Record<string, unknown>>>)(read, values)

/** Every query's rows handed on with the other connections' that arrived in the same turn of the loop (answers-together.ts); a failure at once. */
function handAnswersOnTogether(client: pgModule.ClientBase, together: Together): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  client.query = ((...args: unknown[]) => {
    const result = query(...args)
    // A callback's query, or a cursor (a stream of rows), is left as it is.
    return result instanceof Promise ? result.then(together) : result
  }) as typeof client.query
}

/**
 * `pg`'s query_timeout fails the query but leaves its connection waiting for the answer, and the
 * next query on it would wait behind: a server that stopped answering (a network that drops
 * packets, a frozen host) would hold every pooled connection. A connection whose query timed out
 * is cut instead; the pool replaces it.
 */
function cutOnTimeout(client: pgModule.ClientBase): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  client.query = ((...args: unknown[]) => {
    const result = query(...args)
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if (isQueryTimeout(error)) (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy()
      })
    }
    return result
  }) as typeof client.query
}

/**
 * Instants come back as ISO 8601 text in UTC, as SQLite stores them, so rows (and the ETags of the
 * representations made from them) are the same whatever the store.
 */
function typeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (oid === TIMESTAMPTZ_OID && format !== 'binary') return isoInstant
  return loadPg().types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown
}

/**
 * '2026-11-26 02:21:15.123456+00' (PostgreSQL's text form) → '2026-11-26T02:21:15.123Z' (the
 * fraction cut to milliseconds, as Date cuts it). The sessions are in UTC, so the text is cut and
 * joined as it is; another offset, a year past 9999 or BC goes through Date (which was 2.6% of the
 * CPU of GET one user on PostgreSQL, for two instants a row).
 */
export function isoInstant(text: string): string {
  const { length } = text
  if (length >= 22 && text.charCodeAt(10) === 32 /* ' ' */ && text.endsWith('+00') && (length === 22 || text.charCodeAt(19) === 46) /* '.' */) {
    const fraction = length === 22 ? '000' : `${text.slice(20, length - 3)}00`.slice(0, 3)
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction}Z`
  }
  const iso = text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00')
  return new Date(iso).toISOString()
}

function openSqlite(path: string, pageCacheKib: number | undefined): SqliteDatabase.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const connection = new SqliteDatabase(path)
  // WAL lets readers run beside the writer; with synchronous=NORMAL a commit survives a crash of
  // the process (the WAL is in the OS's hands), while a power loss may lose the last commits.
  connection.pragma('journal_mode = WAL')
  connection.pragma('synchronous = NORMAL')
  connection.pragma('foreign_keys = ON')
  connection.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
  if (pageCacheKib !== undefined) connection.pragma(`cache_size = -${pageCacheKib}`)
  return connection
}
