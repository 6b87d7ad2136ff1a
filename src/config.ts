// The one reader of the environment: parses it once into a frozen, typed Config and names the
// offending variable when a value is wrong. The larger sections are read in src/config/ (one file
// each, with the readers of single variables in read-env.ts); their types are exported from here
// too, so the rest of the code names every part of Config through this one module.
import { type DatabaseLocation, readDatabaseUrl } from './config/database-url.js'
import { type GraphQLConfig, readGraphQLConfig } from './config/graphql-config.js'
import { type HttpLimits, readHttpLimits } from './config/http-limits.js'
import { type OidcConfig, readOidcConfig } from './config/oidc-config.js'
import { type PasswordAllowances, readPasswordAllowances } from './config/password-allowances.js'
import { ConfigError, type Env, raw, readBoolean, readChoice, readDuration, readInteger, readString } from './config/read-env.js'
import { type RedisConfig, readRedisConfig } from './config/redis-config.js'
import { readTracingConfig, type TracingConfig } from './config/tracing-config.js'

export { ConfigError }
export { parseDatabaseUrl, redactPassword } from './config/database-url.js'
export type { DatabaseLocation, GraphQLConfig, HttpLimits, PasswordAllowances, RedisConfig, TracingConfig }

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export const LOG_FORMATS = ['json', 'pretty'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

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
  /** 'json': one JSON object a line (production); 'pretty': one readable line a request (development). @default 'pretty' when stdout is a terminal, else 'json' */
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
  /** An outside OpenID Connect issuer whose access tokens sign callers in too; undefined: only Threadline's own tokens. */
  readonly oidc: OidcConfig | undefined
  /** How long the answer to a write sent with an Idempotency-Key is kept for its retries, in milliseconds (IDEMPOTENCY_TTL_S). @default 24 h */
  readonly idempotencyTtlMs: number
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
  /** Traces sent by OTLP/HTTP, from the OTEL_* variables; undefined (the default): tracing is off and costs nothing. */
  readonly tracing: TracingConfig | undefined
  readonly http: HttpLimits
  /** Node's own options given in NODE_OPTIONS, one per item: a V8 flag set there stands over serve's heap settings. @default [] */
  readonly nodeOptions: readonly string[]
}

export const RATE_LIMIT_STORE_FAILURES = ['open', 'closed'] as const
export type RateLimitStoreFailure = (typeof RATE_LIMIT_STORE_FAILURES)[number]

/**
 * The command-line flags that stand for environment variables (`threadline serve --port 4000`).
 * A flag wins over its variable and is read by the same reader: the same checks, the message
 * naming the flag.
 */
export const CONFIG_FLAGS = { port: 'PORT', host: 'HOST', db: 'DATABASE_URL' } as const
export type ConfigFlags = { readonly [flag in keyof typeof CONFIG_FLAGS]?: string }

/**
 * Parses the environment, with the flags given on the command line over it. Pure when given an
 * environment: only the process's own (the default) looks at whether stdout is a terminal (the
 * log's default format: pretty there, JSON lines elsewhere).
 */
export function loadConfig(env: Env = process.env, flags: ConfigFlags = {}, stdoutIsTTY = env === process.env && process.stdout.isTTY === true): Config {
  const given = (Object.keys(CONFIG_FLAGS) as (keyof typeof CONFIG_FLAGS)[]).filter((flag) => flags[flag] !== undefined)
  if (given.length === 0) return parseConfig(env, stdoutIsTTY)
  const overridden: Record<string, string | undefined> = { ...env }
  for (const flag of given) overridden[CONFIG_FLAGS[flag]] = flags[flag]
  try {
    return parseConfig(overridden, stdoutIsTTY)
  } catch (error) {
    const flag = given.find((f) => error instanceof ConfigError && CONFIG_FLAGS[f] === error.variable)
    if (flag === undefined || !(error instanceof ConfigError)) throw error
    throw new ConfigError(error.variable, error.reason, `--${flag}`)
  }
}

function parseConfig(env: Env, stdoutIsTTY: boolean): Config {
  const database = readDatabaseUrl(env, 'DATABASE_URL', 'sqlite:data/threadline.db', {
    poolSize: readInteger(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    queryTimeoutMs: readInteger(env, 'DATABASE_QUERY_TIMEOUT_MS', 10_000, 0, 3_600_000),
  })
  return Object.freeze({
    host: readString(env, 'HOST', '127.0.0.1'),
    port: readInteger(env, 'PORT', 3000, 0, 65535),
    database,
    seedDemoData: readBoolean(env, 'SEED_DEMO_DATA', true),
    logLevel: readChoice(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: readChoice(env, 'LOG_FORMAT', LOG_FORMATS, stdoutIsTTY ? 'pretty' : 'json'),
    operations: Object.freeze({
      readyTimeoutMs: readInteger(env, 'READY_TIMEOUT_MS', 1000, 10, 60_000),
      metrics: readBoolean(env, 'METRICS', true),
      metricsToken: readMetricsToken(env),
      shutdownGraceMs: readInteger(env, 'SHUTDOWN_GRACE_MS', 10_000, 100, 600_000),
    }),
    tokenTtlMs: readDuration(env, 'TOKEN_TTL', '30d'),
    oidc: readOidcConfig(env),
    idempotencyTtlMs: readInteger(env, 'IDEMPOTENCY_TTL_S', 86_400, 60, 7 * 86_400) * 1000,
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
    http: readHttpLimits(env, database.dialect === 'postgres' ? database.poolSize : undefined),
    graphql: readGraphQLConfig(env, readHttpLimits(env).maxConnections),
    redis: readRedisConfig(env),
    tracing: readTracingConfig(env),
    nodeOptions: Object.freeze((raw(env, 'NODE_OPTIONS') ?? '').split(/\s+/).filter((option) => option !== '')),
  })
}

function readOrigins(env: Env, name: string): string[] {
  const value = raw(env, name)
  if (value === undefined) return []
  const origins = value
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '')
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

/** /metrics is outside the rate limit: its token must be too long to guess by trying. */
const METRICS_TOKEN_MIN_LENGTH = 24

function readMetricsToken(env: Env): string | undefined {
  const value = raw(env, 'METRICS_TOKEN')
  if (value !== undefined && value.length < METRICS_TOKEN_MIN_LENGTH) {
    throw new ConfigError('METRICS_TOKEN', `expected at least ${METRICS_TOKEN_MIN_LENGTH} characters (openssl rand -hex 16 makes one), got ${value.length}`)
  }
  return value
}
