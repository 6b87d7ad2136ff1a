// What the HTTP server grants one client (HTTP_*): time to send, room for headers, connections,
// and its share of the in-flight limit.
import { ConfigError, type Env, raw, readInteger } from './read-env.js'

/**
 * Variables of an earlier scheduler, accepted and ignored (each named in a warning at start-up) so
 * that an environment that sets them still starts: the fair scheduler lends a caller every slot
 * nobody else wants, so neither a cap per caller nor a share of the clock is left to set.
 * HTTP_MAX_IN_FLIGHT_PER_CALLER=0 (no limit) is still read as HTTP_MAX_IN_FLIGHT=0.
 */
export const RETIRED_HTTP_VARIABLES = ['HTTP_MAX_IN_FLIGHT_PER_CALLER', 'HTTP_MAX_BUSY_PERCENT_PER_CALLER'] as const

/** Requests in their handlers at once on SQLite: statements run on the event loop one at a time anyway. */
const SQLITE_MAX_IN_FLIGHT = 16

/**
 * Requests in their handlers at once on PostgreSQL, per connection of the pool: while each
 * connection has a statement in PostgreSQL, as many requests again are worked on in the process
 * (parsed, checked, their statements built, their answers written). With one request a connection
 * the loop sat idle between round trips and spent more CPU on each request it served. Slow work
 * holds at most one slot a connection (maxInFlightSlow).
 */
const POSTGRES_IN_FLIGHT_PER_CONNECTION = 2

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
   * Requests in their handlers at once, all callers together; the others wait for a slot, which goes
   * to the caller that has used the least handler time. One caller alone may take them all. 0: no
   * limit and no scheduling. @default 16 on SQLite, twice DATABASE_POOL_SIZE on PostgreSQL
   */
  readonly maxInFlight: number
  /**
   * Of maxInFlight, the requests whose work is slow may hold (the fair scheduler's slow callers,
   * and work expected slow); the others are for quick work. Not a variable of its own: the pool's
   * size on PostgreSQL (at most maxInFlight), so that a quick request's statement never waits for a
   * connection behind a slow caller's; maxInFlight on SQLite.
   */
  readonly maxInFlightSlow: number
  /** Requests of one caller (user, or client address) waiting for a slot; one more is answered 429. @default 64 */
  readonly maxQueuedPerCaller: number
  /**
   * How long an answer may wait on a client that takes none of its bytes (no write makes progress);
   * then the connection is closed and the answer dropped. @default 10000
   */
  readonly sendTimeoutMs: number
  /**
   * The event loop's delay (its p99 over the last half second) past which work waiting for a slot
   * is shed: new requests of callers whose work is slow, or not measured yet, are answered 503 with
   * Retry-After until the loop catches up. 0: never shed. @default 100
   */
  readonly shedLoopDelayMs: number
  /** Retired variables set in the environment, which have no effect (RETIRED_HTTP_VARIABLES). */
  readonly retiredVariables: readonly string[]
  /**
   * Memory for the representation cache: the answers of GET routes kept with their validators and
   * served again while the data has not changed (SQLite only); 0 keeps none. @default 16
   */
  readonly representationCacheMb: number
  /**
   * Rows a CSV or NDJSON answer of a collection holds at most; its `Link: rel="next"` goes on from
   * there. @default 10000
   */
  readonly exportMaxRows: number
}

/** `poolSize`: PostgreSQL's pool, whose size sets the default number of requests in their handlers. */
export function readHttpLimits(env: Env, poolSize?: number): HttpLimits {
  const headersTimeoutMs = readInteger(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000)
  const requestTimeoutMs = readInteger(env, 'HTTP_REQUEST_TIMEOUT_MS', 12_000, 100, 3_600_000)
  // Node refuses a headers timeout longer than the request timeout.
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError('HTTP_REQUEST_TIMEOUT_MS', `expected at least HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs}), got ${requestTimeoutMs}`)
  }
  const maxInFlight = readInteger(
    env,
    'HTTP_MAX_IN_FLIGHT',
    raw(env, 'HTTP_MAX_IN_FLIGHT_PER_CALLER') === '0' ? 0 : poolSize === undefined ? SQLITE_MAX_IN_FLIGHT : poolSize * POSTGRES_IN_FLIGHT_PER_CONNECTION,
    0,
    1_000_000,
  )
  return Object.freeze({
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: readInteger(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
    maxHeaderBytes: readInteger(env, 'HTTP_MAX_HEADER_BYTES', 16_384, 1024, 1_048_576),
    maxConnections: readInteger(env, 'HTTP_MAX_CONNECTIONS', 20_000, 0, 1_000_000),
    maxInFlight,
    maxInFlightSlow: poolSize === undefined ? maxInFlight : Math.min(poolSize, maxInFlight),
    maxQueuedPerCaller: readInteger(env, 'HTTP_MAX_QUEUED_PER_CALLER', 64, 0, 1_000_000),
    sendTimeoutMs: readInteger(env, 'HTTP_SEND_TIMEOUT_MS', 10_000, 100, 3_600_000),
    shedLoopDelayMs: readInteger(env, 'HTTP_SHED_LOOP_DELAY_MS', 100, 0, 60_000),
    retiredVariables: Object.freeze(RETIRED_HTTP_VARIABLES.filter((name) => raw(env, name) !== undefined)),
    representationCacheMb: readInteger(env, 'HTTP_REPRESENTATION_CACHE_MB', 16, 0, 4096),
    exportMaxRows: readInteger(env, 'HTTP_EXPORT_MAX_ROWS', 10_000, 1, 1_000_000),
  })
}
