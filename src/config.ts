// The one reader of the environment: parses it once into a frozen, typed Config and names the
// offending variable when a value is wrong.
import { parseDuration } from './core/duration.js'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export const LOG_FORMATS = ['json', 'pretty'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

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
  /** 'json': one JSON object a line (production); 'pretty': coloured, readable lines (development). @default 'json' */
  readonly logFormat: LogFormat
  /** Operations: readiness, metrics, shutdown. */
  readonly operations: {
    /** GET /ready answers 503 when the database takes longer than this to answer. @default 1000 */
    readonly readyTimeoutMs: number
    /** Serve GET /metrics (Prometheus). @default true */
    readonly metrics: boolean
    /** When set, GET /metrics asks for it as a bearer token. */
    readonly metricsToken: string | undefined
    /** On SIGTERM/SIGINT, how long requests in flight may take before their connections are cut. @default 10000 */
    readonly shutdownGraceMs: number
  }
  /** Lifetime of tokens issued by POST /tokens, in milliseconds. @default 30 days */
  readonly tokenTtlMs: number
  /** Requests per window per caller; 0 turns rate limiting off. */
  readonly rateLimit: {
    /** For anonymous callers, per client address. @default 300 */
    readonly max: number
    /** For signed-in callers, per user. @default 1200 */
    readonly authenticatedMax: number
    /** @default 60 s */
    readonly windowMs: number
    /**
     * When the shared store (Redis) cannot count a request: 'open' lets it through, 'closed'
     * answers 503 SERVICE_UNAVAILABLE. Either way the failure is logged and counted. @default 'open'
     */
    readonly onStoreError: RateLimitStoreFailure
  }
  /** What password work a client may cause: each check or hash is one scrypt derivation (about 250 ms of CPU). */
  readonly passwords: PasswordAllowances
  /** max-age of anonymous GET answers, in seconds. @default 0 (always revalidate, with ETag) */
  readonly cacheMaxAgeS: number
  /** Serve the API description (OpenAPI 3.1) at /openapi.json and /openapi.yaml. @default true */
  readonly openapi: boolean
  /** Serve the interactive API reference (Swagger UI) at /docs; needs `openapi`. @default true */
  readonly docs: boolean
  /** Origins allowed to call from a browser (CORS); empty: none. */
  readonly corsOrigins: readonly string[]
  /** Fastify's trustProxy: false, true, a hop count, or addresses/CIDRs. @default false */
  readonly trustProxy: boolean | number | string[]
  readonly graphql: GraphQLConfig
  readonly redis: RedisConfig
  readonly http: HttpLimits
}

/** What the HTTP server grants one client: time to send, room for headers, connections. */
export interface HttpLimits {
  /** Time to receive a request's headers; a slower client is cut (slowloris). @default 10000 */
  readonly headersTimeoutMs: number
  /** Time to receive a whole request, its body included (slow bodies); at least headersTimeoutMs. @default 12000 */
  readonly requestTimeoutMs: number
  /** How long a kept-alive connection may sit idle between requests. @default 72000 */
  readonly keepAliveTimeoutMs: number
  /** The request line and headers, in bytes; more is answered 400 (a long URL counts here). @default 16384 */
  readonly maxHeaderBytes: number
  /** Connections open at once, WebSockets included; one more is closed on arrival. 0: no limit. @default 20000 */
  readonly maxConnections: number
  /**
   * Requests of one caller (user, or client address) in their handlers at once; more wait their
   * turn, so a greedy caller delays others by at most this many. 0: no limit. @default 2
   */
  readonly maxInFlightPerCaller: number
  /** Requests of one caller waiting for a turn; one more is answered 429. @default 64 */
  readonly maxQueuedPerCaller: number
  /**
   * The share of the clock (percent) one caller may keep requests in their handlers, over time; past
   * it (after a burst of 150 ms) its next request waits, so a caller's slow requests cannot fill the
   * event loop. 0: no share. @default 50
   */
  readonly maxBusyPercentPerCaller: number
}

/**
 * Allowances of password work, apart from the rate limit. A sign-in attempt takes a point from
 * three allowances before its password is checked and gives them back when it succeeds, so they
 * count failures (and attempts in flight). The account-wide bound is the highest: one address can
 * spend at most its account-and-address allowance of it, so locking a victim out takes
 * SIGN_IN_MAX_PER_ACCOUNT / SIGN_IN_MAX_PER_ACCOUNT_AND_ADDRESS addresses (10 by default) at once.
 */
export interface PasswordAllowances {
  /** Failed sign-ins from one client address (its /64 for IPv6), whatever the accounts, per window. @default 20 */
  readonly signInMaxPerAddress: number
  /** Failed sign-ins to one account (the e-mail address given) from one client address, per window. @default 10 */
  readonly signInMaxPerAccountAndAddress: number
  /** Failed sign-ins to one account from every address together, per window; above SIGN_IN_MAX_PER_ACCOUNT_AND_ADDRESS. @default 100 */
  readonly signInMaxPerAccount: number
  /** @default 900 s (15 minutes) */
  readonly signInWindowMs: number
  /** Passwords one signed-in user may set (their own, or others' as an admin: create, PUT, PATCH, updateUser) per window. @default 5 */
  readonly changesMax: number
  /** @default 900 s (15 minutes) */
  readonly changesWindowMs: number
}

export const RATE_LIMIT_STORE_FAILURES = ['open', 'closed'] as const
export type RateLimitStoreFailure = (typeof RATE_LIMIT_STORE_FAILURES)[number]

/** Redis, shared by every instance: the rate-limit counters and the events (pub/sub). */
export interface RedisConfig {
  /** A redis:// or rediss:// URL; undefined keeps rate limits and events in this process. */
  readonly url: string | undefined
  /** Starts every key and channel the service uses, so deployments can share one Redis. @default 'threadline:' */
  readonly keyPrefix: string
}

export interface GraphQLConfig {
  /** Serve GraphiQL at /graphiql. @default true */
  readonly graphiql: boolean
  /** Answer introspection and serve /graphql/schema.graphql. @default true */
  readonly introspection: boolean
  /** Compile documents seen before with graphql-jit. @default true */
  readonly jit: boolean
  /** Operations in one batched POST (a JSON array); 0 turns batching off. @default 10 */
  readonly maxBatch: number
  /** Subscriptions over WebSocket (/graphql) and Server-Sent Events (/graphql/stream). */
  readonly subscriptions: {
    /** A WebSocket that sends no connection_init within this is closed with 4408. @default 3000 */
    readonly initTimeoutMs: number
    /** Ping interval; a client that misses a pong for as long is dropped; 0 turns pings off. @default 12000 */
    readonly keepAliveMs: number
    /** Largest WebSocket message accepted; a larger one closes the socket with 1009. @default 65536 */
    readonly maxMessageBytes: number
    /** Active subscriptions on one WebSocket. @default 20 */
    readonly maxPerConnection: number
    /** Open WebSockets and event streams per signed-in user, or per client address. @default 20 */
    readonly maxConnectionsPerCaller: number
    /**
     * Open WebSockets and event streams on the instance, whoever holds them; below
     * HTTP_MAX_CONNECTIONS so plain requests still get in when they are all taken. @default half
     * of HTTP_MAX_CONNECTIONS (10000)
     */
    readonly maxConnections: number
    /** Events that may wait for one slow subscriber; past it the subscriber is dropped (1008). @default 100 */
    readonly maxPendingEvents: number
    /** Bytes a WebSocket may have unsent; past it the subscriber is dropped (1008). @default 4194304 (4 MiB) */
    readonly maxBufferedBytes: number
    /** Largest cost of one subscription's selection (run again for every event it hears). @default 1000 */
    readonly maxCost: number
    /** Sum of the costs of one caller's open subscriptions on an instance. @default 5000 */
    readonly callerCost: number
    /** Cost units one caller's deliveries may spend per window on an instance; past it, events are skipped (RATE_LIMITED, retryAfter). @default 100000 */
    readonly deliveryCost: number
    /** @default 10 s */
    readonly deliveryWindowMs: number
    /** Cost units the deliveries of one event may spend together on an instance; past it, the rest are told the event was skipped. @default 1000000 */
    readonly eventMaxDeliveryCost: number
  }
  /** Refused before execution when exceeded. */
  readonly limits: {
    /** Nesting of fields. @default 10 */
    readonly maxDepth: number
    /**
     * Fields, each list multiplying what is under it by its page size. @default 100000: three
     * nested lists at the default page size pass (`{ users { posts { comments { author { name } } } } }`
     * costs 16,421); three at the maximum page size (1,010,101) do not, nor two at the maximum
     * inside one at the default (202,021).
     */
    readonly maxCost: number
    /** Aliased fields in one selection set. @default 15 */
    readonly maxAliases: number
    /** Directives on one field or fragment. @default 5 */
    readonly maxDirectives: number
  }
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
    database: readDatabaseUrl(env, 'DATABASE_URL', 'sqlite:data/threadline.db', {
      poolSize: readInteger(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
      queryTimeoutMs: readInteger(env, 'DATABASE_QUERY_TIMEOUT_MS', 10_000, 0, 3_600_000),
    }),
    seedDemoData: readBoolean(env, 'SEED_DEMO_DATA', true),
    logLevel: readChoice(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: readChoice(env, 'LOG_FORMAT', LOG_FORMATS, 'json'),
    operations: Object.freeze({
      readyTimeoutMs: readInteger(env, 'READY_TIMEOUT_MS', 1000, 10, 60_000),
      metrics: readBoolean(env, 'METRICS', true),
      metricsToken: readMetricsToken(env),
      shutdownGraceMs: readInteger(env, 'SHUTDOWN_GRACE_MS', 10_000, 100, 600_000),
    }),
    tokenTtlMs: readDuration(env, 'TOKEN_TTL', '30d'),
    rateLimit: Object.freeze({
      max: readInteger(env, 'RATE_LIMIT_MAX', 300, 0, 1_000_000_000),
      authenticatedMax: readInteger(env, 'RATE_LIMIT_AUTHENTICATED_MAX', 1200, 0, 1_000_000_000),
      windowMs: readInteger(env, 'RATE_LIMIT_WINDOW_S', 60, 1, 86_400) * 1000,
      onStoreError: readChoice(env, 'RATE_LIMIT_ON_REDIS_ERROR', RATE_LIMIT_STORE_FAILURES, 'open'),
    }),
    passwords: readPasswordAllowances(env),
    cacheMaxAgeS: readInteger(env, 'CACHE_MAX_AGE_S', 0, 0, 31_536_000),
    openapi: readBoolean(env, 'OPENAPI', true),
    docs: readBoolean(env, 'DOCS', true),
    corsOrigins: Object.freeze(readOrigins(env, 'CORS_ORIGINS')),
    trustProxy: readTrustProxy(env, 'TRUST_PROXY'),
    http: readHttpLimits(env),
    graphql: Object.freeze({
      graphiql: readBoolean(env, 'GRAPHIQL', true),
      introspection: readBoolean(env, 'GRAPHQL_INTROSPECTION', true),
      jit: readBoolean(env, 'GRAPHQL_JIT', true),
      maxBatch: readInteger(env, 'GRAPHQL_MAX_BATCH', 10, 0, 100),
      subscriptions: Object.freeze({
        initTimeoutMs: readInteger(env, 'GRAPHQL_WS_INIT_TIMEOUT_MS', 3000, 100, 600_000),
        keepAliveMs: readInteger(env, 'GRAPHQL_WS_KEEPALIVE_MS', 12_000, 0, 3_600_000),
        maxMessageBytes: readInteger(env, 'GRAPHQL_WS_MAX_MESSAGE_BYTES', 65_536, 1024, 16_777_216),
        maxPerConnection: readInteger(env, 'GRAPHQL_MAX_SUBSCRIPTIONS_PER_CONNECTION', 20, 1, 10_000),
        maxConnectionsPerCaller: readInteger(env, 'GRAPHQL_MAX_CONNECTIONS_PER_CALLER', 20, 1, 1_000_000),
        maxConnections: readSubscriptionConnections(env, readHttpLimits(env).maxConnections),
        maxPendingEvents: readInteger(env, 'GRAPHQL_MAX_PENDING_EVENTS', 100, 1, 100_000),
        maxBufferedBytes: readInteger(env, 'GRAPHQL_WS_MAX_BUFFERED_BYTES', 4_194_304, 65_536, 1_073_741_824),
        maxCost: readInteger(env, 'GRAPHQL_SUBSCRIPTION_MAX_COST', 1000, 1, 1_000_000_000),
        callerCost: readInteger(env, 'GRAPHQL_SUBSCRIPTION_CALLER_COST', 5000, 1, 1_000_000_000),
        deliveryCost: readInteger(env, 'GRAPHQL_SUBSCRIPTION_DELIVERY_COST', 100_000, 1, 1_000_000_000_000),
        deliveryWindowMs: readInteger(env, 'GRAPHQL_SUBSCRIPTION_DELIVERY_WINDOW_S', 10, 1, 3600) * 1000,
        eventMaxDeliveryCost: readInteger(env, 'GRAPHQL_EVENT_MAX_DELIVERY_COST', 1_000_000, 1, 1_000_000_000_000),
      }),
      limits: Object.freeze({
        maxDepth: readInteger(env, 'GRAPHQL_MAX_DEPTH', 10, 1, 100),
        maxCost: readInteger(env, 'GRAPHQL_MAX_COST', 100_000, 1, 1_000_000_000),
        maxAliases: readInteger(env, 'GRAPHQL_MAX_ALIASES', 15, 0, 1000),
        maxDirectives: readInteger(env, 'GRAPHQL_MAX_DIRECTIVES', 5, 0, 100),
      }),
    }),
    redis: Object.freeze({
      url: readRedisUrl(env, 'REDIS_URL'),
      keyPrefix: readKeyPrefix(env, 'REDIS_KEY_PREFIX', 'threadline:'),
    }),
  })
}

/** A redis:// or rediss:// URL. The value is not repeated in the error: it may hold a password. */
function readRedisUrl(env: Env, name: string): string | undefined {
  const value = raw(env, name)
  if (value === undefined) return undefined
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {
    url = undefined
  }
  if (url === undefined || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') {
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(value)?.[0]
    throw new ConfigError(name, `expected a URL such as redis://127.0.0.1:6379 or rediss://host:6380${scheme === undefined ? '' : `, got a ${scheme} URL`}`)
  }
  return value
}

function readKeyPrefix(env: Env, name: string, fallback: string): string {
  const value = raw(env, name) ?? fallback
  if (!/^[A-Za-z0-9:_.{}-]{1,100}$/.test(value)) {
    throw new ConfigError(name, `expected up to 100 letters, digits or : _ . - { }, got "${value}"`)
  }
  return value
}

function readOrigins(env: Env, name: string): string[] {
  const value = raw(env, name)
  if (value === undefined) return []
  const origins = value.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '')
  for (const origin of origins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError(name, `expected origins such as https://app.example.com (no path), got "${origin}"`)
    }
  }
  return origins
}

/** The named ranges Fastify's trustProxy (proxy-addr) knows: 127.0.0.1/8 and ::1; fe80::/10 and 169.254/16; fc00::/7 and the private IPv4 ranges. */
const TRUST_PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal']

function readTrustProxy(env: Env, name: string): boolean | number | string[] {
  const value = raw(env, name)
  if (value === undefined || value === 'false') return false
  if (value === 'true') return true
  if (/^\d{1,2}$/.test(value)) return Number(value)
  const addresses = value.split(',').map((a) => a.trim())
  if (addresses.some((a) => !/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(a) && !TRUST_PROXY_RANGES.includes(a))) {
    throw new ConfigError(name, `expected true, false, a hop count, addresses/CIDRs, or ${TRUST_PROXY_RANGES.join(', ')}, got "${value}"`)
  }
  return addresses
}

function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim()
  return value === '' ? undefined : value
}

function readString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback
}

function readHttpLimits(env: Env): HttpLimits {
  const headersTimeoutMs = readInteger(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000)
  const requestTimeoutMs = readInteger(env, 'HTTP_REQUEST_TIMEOUT_MS', 12_000, 100, 3_600_000)
  // Node refuses a headers timeout longer than the request timeout.
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError('HTTP_REQUEST_TIMEOUT_MS', `expected at least HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs}), got ${requestTimeoutMs}`)
  }
  return Object.freeze({
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: readInteger(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
    maxHeaderBytes: readInteger(env, 'HTTP_MAX_HEADER_BYTES', 16_384, 1024, 1_048_576),
    maxConnections: readInteger(env, 'HTTP_MAX_CONNECTIONS', 20_000, 0, 1_000_000),
    maxInFlightPerCaller: readInteger(env, 'HTTP_MAX_IN_FLIGHT_PER_CALLER', 2, 0, 1_000_000),
    maxQueuedPerCaller: readInteger(env, 'HTTP_MAX_QUEUED_PER_CALLER', 64, 0, 1_000_000),
    maxBusyPercentPerCaller: readInteger(env, 'HTTP_MAX_BUSY_PERCENT_PER_CALLER', 50, 0, 100),
  })
}

function readPasswordAllowances(env: Env): PasswordAllowances {
  const signInMaxPerAccountAndAddress = readInteger(env, 'SIGN_IN_MAX_PER_ACCOUNT_AND_ADDRESS', 10, 1, 1_000_000_000)
  const signInMaxPerAccount = readInteger(env, 'SIGN_IN_MAX_PER_ACCOUNT', 100, 1, 1_000_000_000)
  // Else one address could spend an account's whole allowance and lock its owner out alone.
  if (signInMaxPerAccount <= signInMaxPerAccountAndAddress) {
    throw new ConfigError('SIGN_IN_MAX_PER_ACCOUNT', `expected more than SIGN_IN_MAX_PER_ACCOUNT_AND_ADDRESS (${signInMaxPerAccountAndAddress}), got ${signInMaxPerAccount}`)
  }
  return Object.freeze({
    signInMaxPerAddress: readInteger(env, 'SIGN_IN_MAX_PER_ADDRESS', 20, 1, 1_000_000_000),
    signInMaxPerAccountAndAddress,
    signInMaxPerAccount,
    signInWindowMs: readInteger(env, 'SIGN_IN_WINDOW_S', 900, 1, 86_400) * 1000,
    changesMax: readInteger(env, 'PASSWORD_CHANGES_MAX', 5, 1, 1_000_000_000),
    changesWindowMs: readInteger(env, 'PASSWORD_CHANGES_WINDOW_S', 900, 1, 86_400) * 1000,
  })
}

/**
 * GRAPHQL_MAX_CONNECTIONS: half of HTTP_MAX_CONNECTIONS unless given (10,000 by default), and
 * below it, so plain requests still get in when every subscription slot is taken.
 */
function readSubscriptionConnections(env: Env, httpMax: number): number {
  const name = 'GRAPHQL_MAX_CONNECTIONS'
  const value = readInteger(env, name, httpMax === 0 ? 10_000 : Math.max(1, Math.floor(httpMax / 2)), 1, 1_000_000)
  if (httpMax !== 0 && value >= httpMax) throw new ConfigError(name, `expected less than HTTP_MAX_CONNECTIONS (${httpMax}), got ${value}`)
  return value
}

/** /metrics is outside the rate limit: its token must be too long to guess by trying. */
const METRICS_TOKEN_MIN_LENGTH = 24

function readMetricsToken(env: Env): string | undefined {
  const value = raw(env, 'METRICS_TOKEN')
  if (value !== undefined && value.length < METRICS_TOKEN_MIN_LENGTH) {
    throw new ConfigError('METRICS_TOKEN', `expected at least ${METRICS_TOKEN_MIN_LENGTH} characters (openssl rand -hex 16 makes one), got ${value.length}`)
  }
  return value
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

function readDatabaseUrl(env: Env, name: string, fallback: string, postgres: PostgresOptions): DatabaseLocation {
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
