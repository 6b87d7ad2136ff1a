// What the HTTP server grants one client (HTTP_*): time to send, room for headers, connections,
// and its share of the handlers.
import { ConfigError, type Env, readInteger } from './read-env.js'

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
  /**
   * Memory for the answers of GET routes kept with their validators and served again while the
   * data has not changed (SQLite only); 0 keeps none. @default 16
   */
  readonly representationCacheMb: number
}

export function readHttpLimits(env: Env): HttpLimits {
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
    representationCacheMb: readInteger(env, 'HTTP_REPRESENTATION_CACHE_MB', 16, 0, 4096),
  })
}
