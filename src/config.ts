// The one reader of the environment: parses it once into a frozen, typed Config and names the
// offending variable when a value is wrong.
import { parseDuration } from './duration.js'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export type DatabaseLocation = { dialect: 'sqlite'; path: string }

export interface Config {
  /** Interface to listen on. @default '127.0.0.1' */
  readonly host: string
  /** TCP port to listen on; 0 picks a free one. @default 3000 */
  readonly port: number
  /** Where the data lives, parsed from DATABASE_URL. @default sqlite:data/threadline.db */
  readonly database: DatabaseLocation
  /** Fill a new, empty database with demo data on `serve`. @default true */
  readonly seedDemoData: boolean
  /** pino log level. @default 'info' */
  readonly logLevel: LogLevel
  /** Lifetime of tokens issued by POST /tokens, in milliseconds. @default 30 days */
  readonly tokenTtlMs: number
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`Invalid environment variable ${variable}: ${message}`)
    this.name = 'ConfigError'
  }
}

type Env = Readonly<Record<string, string | undefined>>

/** Parses the environment. Pure: pass `process.env` or a plain object. */
export function loadConfig(env: Env = process.env): Config {
  return Object.freeze({
    host: readString(env, 'HOST', '127.0.0.1'),
    port: readInteger(env, 'PORT', 3000, 0, 65535),
    database: readDatabaseUrl(env, 'DATABASE_URL', 'sqlite:data/threadline.db'),
    seedDemoData: readBoolean(env, 'SEED_DEMO_DATA', true),
    logLevel: readChoice(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    tokenTtlMs: readDuration(env, 'TOKEN_TTL', '30d'),
  })
}

function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim()
  return value === '' ? undefined : value
}

function readString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback
}

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name)
  if (value === undefined) return fallback
  const n = /^-?\d+$/.test(value) ? Number(value) : NaN
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${value}"`)
  }
  return n
}

function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name)?.toLowerCase()
  if (value === undefined) return fallback
  if (value === 'true' || value === '1') return true
  if (value === 'false' || value === '0') return false
  throw new ConfigError(name, `expected true or false, got "${value}"`)
}

function readChoice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const value = raw(env, name)
  if (value === undefined) return fallback
  if ((choices as readonly string[]).includes(value)) return value as T
  throw new ConfigError(name, `expected one of ${choices.join(', ')}, got "${value}"`)
}

function readDuration(env: Env, name: string, fallback: string): number {
  const value = raw(env, name) ?? fallback
  const ms = parseDuration(value)
  if (ms === undefined) {
    throw new ConfigError(name, `expected a duration such as 30d, 12h, 15m or 90s, got "${value}"`)
  }
  return ms
}

function readDatabaseUrl(env: Env, name: string, fallback: string): DatabaseLocation {
  const value = raw(env, name) ?? fallback
  const location = parseDatabaseUrl(value)
  if (typeof location === 'string') throw new ConfigError(name, location)
  return location
}

/** Parses a DATABASE_URL; returns the reason as a string when it is not usable. */
export function parseDatabaseUrl(url: string): DatabaseLocation | string {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')
    if (path === '') return 'the sqlite: URL names no file (e.g. sqlite:data/threadline.db)'
    return { dialect: 'sqlite', path }
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    return 'PostgreSQL is not supported by this version yet; use sqlite:PATH'
  }
  return `expected sqlite:PATH, got "${url}"`
}
