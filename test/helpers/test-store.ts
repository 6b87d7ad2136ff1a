// Where a test's data lives. The behavioural suite runs once per store (vitest.config.ts): on a
// new SQLite file, and, in the `postgres` project, in a new schema of this run's database on
// TEST_DATABASE_URL's server (made by global-setup.ts) — so tests running side by side never
// share rows, and two runs never meet.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { DatabaseLocation } from '../../src/config.js'
import { TEST_DATABASE_URL } from './services.js'

export type TestStore = 'sqlite' | 'postgres'

/** The store of this run: set by the vitest project (THREADLINE_TEST_STORE). */
export const TEST_STORE: TestStore = process.env.THREADLINE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite'

/**
 * True on the behavioural suite's second run (the postgres project). A test that never touches the
 * run's store (--help, an in-memory or a SQLite database of its own), or reaches it only through
 * services whose own tests run on PostgreSQL (a CLI command's parsing and printing around
 * `users.create`), proves nothing new there, and skips.
 */
export const SECOND_STORE_RUN = TEST_STORE !== 'sqlite'

/** The database the schemas are made in: this run's own, or one made on first use. */
const TEST_DATABASE = process.env.THREADLINE_TEST_DATABASE ?? `threadline_test_${process.ppid}`

export interface TestDatabase {
  /** A DATABASE_URL naming an empty database. */
  url: string
  /** Removes it and everything in it (a schema goes with the run's database, at teardown). */
  drop(): Promise<void>
}

/** A new, empty database on the run's store (or the one named). */
export function freshDatabase(store: TestStore = TEST_STORE): Promise<TestDatabase> {
  return store === 'postgres' ? freshSchema() : Promise.resolve(freshSqliteFile())
}

export function freshSqliteFile(): TestDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'threadline-test-'))
  return {
    url: `sqlite:${join(dir, 'test.db')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  }
}

/** A URL on the test server naming `database` (TEST_DATABASE_URL's user, host and port). */
export function postgresUrlOf(database: string, searchPath?: string): string {
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${database}`
  if (searchPath !== undefined) url.searchParams.set('options', `-c search_path=${searchPath}`)
  return url.toString()
}

let testDatabaseReady: Promise<void> | undefined

/** Creates the test database once per worker unless the run made it (another worker may be creating it too). */
function ensureTestDatabase(): Promise<void> {
  testDatabaseReady ??= withClient(TEST_DATABASE_URL, async (client) => {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [TEST_DATABASE])
    if (rowCount !== 0) return
    try {
      await createTestDatabase(client, TEST_DATABASE)
    } catch (error) {
      // 42P04 duplicate_database, or 23505 when two creates race on the catalog: it exists now.
      const code = (error as { code?: string }).code
      if (code !== '42P04' && code !== '23505') throw error
    }
  })
  return testDatabaseReady
}

/**
 * A new schema of its own, named by the URL's search_path. It is not dropped when the test ends:
 * the run's database goes whole at teardown (global-setup.ts). Dropping schemas mid-run raced
 * Kysely's migrator in another worker, whose table lookup reads every schema of the database
 * ("schema t_... does not exist", seen once in CI).
 */
async function freshSchema(): Promise<TestDatabase> {
  await ensureTestDatabase()
  const schema = `t_${process.pid}_${randomBytes(6).toString('hex')}`
  await withClient(postgresUrlOf(TEST_DATABASE), (client) => client.query(`create schema ${schema}`))
  return { url: postgresUrlOf(TEST_DATABASE, schema), drop: async () => {} }
}

/** A new database of its own on the test server (for processes that share one, like two instances). */
export async function freshPostgresDatabase(): Promise<TestDatabase> {
  const name = `threadline_t_${process.pid}_${randomBytes(6).toString('hex')}`
  await withClient(TEST_DATABASE_URL, (client) => createTestDatabase(client, name))
  return {
    url: postgresUrlOf(name),
    drop: () => withClient(TEST_DATABASE_URL, (client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  }
}

/**
 * Creates a database for tests, whose commits do not wait for the write-ahead log to reach the
 * disk (synchronous_commit off, for every connection to it). A crash of the PostgreSQL server
 * could lose the last moments of its writes; nothing else changes, for the application or for
 * what a test can see: an acknowledged write is visible at once, a killed `threadline` process
 * loses nothing it was answered. On this machine's disk that flush made most of the time of a
 * write, and the suite's PostgreSQL tests are mostly writes.
 */
export async function createTestDatabase(client: pg.Client, name: string): Promise<void> {
  await client.query(`create database ${name}`)
  await client.query(`alter database ${name} set synchronous_commit = off`)
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** The file of a SQLite location (tests that open it directly run on SQLite only). */
export function sqlitePath(location: DatabaseLocation): string {
  if (location.dialect !== 'sqlite') throw new Error('This test opens the SQLite file directly; it runs on SQLite only')
  return location.path
}
