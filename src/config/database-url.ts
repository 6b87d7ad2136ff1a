// Where the data lives: DATABASE_URL parsed into a SQLite file or a PostgreSQL location, and the
// URL as it may be printed (its password hidden).
import { ConfigError, type Env, raw } from './read-env.js'

export type DatabaseLocation =
  | { readonly dialect: 'sqlite'; readonly path: string }
  | {
      readonly dialect: 'postgres'
      /** The libpq-style URL, handed to `pg` as it is (its query parameters included). */
      readonly url: string
      /** Connections this process keeps open at most. @default 10 */
      readonly poolSize: number
      /** A statement unanswered this long fails (503) and its connection is replaced; 0 waits forever. @default 10000 */
      readonly queryTimeoutMs: number
    }

export function readDatabaseUrl(env: Env, name: string, fallback: string, postgres: PostgresOptions): DatabaseLocation {
  const value = raw(env, name) ?? fallback
  const location = parseDatabaseUrl(value, postgres)
  if (typeof location === 'string') throw new ConfigError(name, location)
  return location
}

/** The settings of a PostgreSQL location that do not come from its URL. */
type PostgresOptions = Pick<Extract<DatabaseLocation, { dialect: 'postgres' }>, 'poolSize' | 'queryTimeoutMs'>

/** Parses a DATABASE_URL; returns the reason as a string when it is not usable. */
export function parseDatabaseUrl(url: string, postgres: PostgresOptions = { poolSize: 10, queryTimeoutMs: 10_000 }): DatabaseLocation | string {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')
    if (path === '') return 'the sqlite: URL names no file (e.g. sqlite:data/threadline.db)'
    return { dialect: 'sqlite', path }
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return 'the postgres:// URL is malformed (e.g. postgres://user:password@host:5432/threadline)'
    }
    if (parsed.pathname.length <= 1) return 'the postgres:// URL names no database (e.g. postgres://user@host:5432/threadline)'
    return { dialect: 'postgres', url, ...postgres }
  }
  return `expected sqlite:PATH or postgres://..., got "${redactPassword(url)}"`
}

/** The URL as it may be printed: a password in it is replaced by ***. */
export function redactPassword(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*:)[^@/?#]*@/i, '$1***@')
}
