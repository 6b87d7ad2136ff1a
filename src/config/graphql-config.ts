// The GraphQL endpoint's settings (GRAPHIQL, GRAPHQL_*): what it serves, its subscriptions' bounds,
// the document limits src/graphql/document-limits/ enforces, and the persisted queries
// (src/graphql/pipeline/persisted-queries.ts), with their defaults and why.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { ConfigError, type Env, raw, readBoolean, readDuration, readInteger } from './read-env.js'

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
  /** Automatic persisted queries (Apollo's protocol) and trusted documents. */
  readonly persistedQueries: PersistedQueriesConfig
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
    /**
     * Fields in one selection set, those of the fragments spread or inlined into it included.
     * @default 100: the widest type of the schema has a few dozen fields. graphql's check that the
     * fields of a selection set can merge compares them in pairs: 975 copies of one field took it
     * 110-760 ms to refuse; 100 copies of a field with a selection take it about 16 ms, 200 about 115.
     */
    readonly maxFieldsPerSelection: number
    /** Directives on one field or fragment. @default 5 */
    readonly maxDirectives: number
  }
}

export interface PersistedQueriesConfig {
  /** Register documents sent with their hash, and run them from the hash alone afterwards. @default true */
  readonly enabled: boolean
  /** Bytes of documents kept in each process (an LRU; at most 10,000 of them). @default 8 MiB */
  readonly cacheBytes: number
  /** How long a document registered in Redis (with REDIS_URL) is kept. @default 7d */
  readonly ttlMs: number
  /**
   * Largest document registered, in bytes (UTF-8); a larger one still runs when sent in full, and
   * is not kept. @default 65536: a document runs only within 4,000 tokens (the parser guard), and
   * graphql's own printing (what Apollo Client sends) spends about 9 characters a token, GraphiQL's
   * indented introspection query about 12, so the longest document that can run is near 48 KB as
   * clients write them; what is beyond that is comments and blank space.
   */
  readonly maxDocumentBytes: number
  /** Bytes of documents one caller (user, or client address) may register per window; past it, registration is skipped. @default 1048576 (1 MiB) */
  readonly callerBytes: number
  /** @default 1 h */
  readonly callerWindowMs: number
  /**
   * What registered documents may take in Redis, all callers together (measured as Redis spends
   * it); the oldest registrations make room for new ones. @default 32 MiB
   */
  readonly redisBytes: number
  /** GRAPHQL_TRUSTED_DOCUMENTS: documents by their SHA-256 (hex), known from the start; empty without the file. */
  readonly trustedDocuments: ReadonlyMap<string, string>
  /** Run the trusted documents only: any other document, sent in full or registered, is refused. @default false */
  readonly trustedOnly: boolean
}

/** GRAPHQL_*; `httpMaxConnections` (HTTP_MAX_CONNECTIONS) sets the default of GRAPHQL_MAX_CONNECTIONS and its ceiling. */
export function readGraphQLConfig(env: Env, httpMaxConnections: number): GraphQLConfig {
  return Object.freeze({
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
      maxConnections: readSubscriptionConnections(env, httpMaxConnections),
      maxPendingEvents: readInteger(env, 'GRAPHQL_MAX_PENDING_EVENTS', 100, 1, 100_000),
      maxBufferedBytes: readInteger(env, 'GRAPHQL_WS_MAX_BUFFERED_BYTES', 4_194_304, 65_536, 1_073_741_824),
      maxCost: readInteger(env, 'GRAPHQL_SUBSCRIPTION_MAX_COST', 1000, 1, 1_000_000_000),
      callerCost: readInteger(env, 'GRAPHQL_SUBSCRIPTION_CALLER_COST', 5000, 1, 1_000_000_000),
      deliveryCost: readInteger(env, 'GRAPHQL_SUBSCRIPTION_DELIVERY_COST', 100_000, 1, 1_000_000_000_000),
      deliveryWindowMs: readInteger(env, 'GRAPHQL_SUBSCRIPTION_DELIVERY_WINDOW_S', 10, 1, 3600) * 1000,
      eventMaxDeliveryCost: readInteger(env, 'GRAPHQL_EVENT_MAX_DELIVERY_COST', 1_000_000, 1, 1_000_000_000_000),
    }),
    persistedQueries: readPersistedQueries(env),
    limits: Object.freeze({
      maxDepth: readInteger(env, 'GRAPHQL_MAX_DEPTH', 10, 1, 100),
      maxCost: readInteger(env, 'GRAPHQL_MAX_COST', 100_000, 1, 1_000_000_000),
      maxAliases: readInteger(env, 'GRAPHQL_MAX_ALIASES', 15, 0, 1000),
      maxFieldsPerSelection: readInteger(env, 'GRAPHQL_MAX_FIELDS_PER_SELECTION', 100, 1, 10_000),
      maxDirectives: readInteger(env, 'GRAPHQL_MAX_DIRECTIVES', 5, 0, 100),
    }),
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

function readPersistedQueries(env: Env): PersistedQueriesConfig {
  const trustedOnly = readBoolean(env, 'GRAPHQL_TRUSTED_DOCUMENTS_ONLY', false)
  const path = raw(env, 'GRAPHQL_TRUSTED_DOCUMENTS')
  if (trustedOnly && path === undefined) throw new ConfigError('GRAPHQL_TRUSTED_DOCUMENTS_ONLY', 'needs GRAPHQL_TRUSTED_DOCUMENTS, the file of the documents')
  // At most a megabyte, the largest request body; a caller's allowance must hold one such document.
  const maxDocumentBytes = readInteger(env, 'GRAPHQL_PERSISTED_QUERY_MAX_BYTES', 65_536, 1, 1_048_576)
  return Object.freeze({
    enabled: readBoolean(env, 'GRAPHQL_PERSISTED_QUERIES', true),
    cacheBytes: readInteger(env, 'GRAPHQL_PERSISTED_QUERIES_CACHE_MB', 8, 0, 1024) * 2 ** 20,
    ttlMs: readDuration(env, 'GRAPHQL_PERSISTED_QUERIES_TTL', '7d'),
    maxDocumentBytes,
    callerBytes: readInteger(env, 'GRAPHQL_PERSISTED_QUERIES_CALLER_BYTES', 1_048_576, maxDocumentBytes, 2 ** 40),
    callerWindowMs: readInteger(env, 'GRAPHQL_PERSISTED_QUERIES_CALLER_WINDOW_S', 3600, 1, 7 * 86_400) * 1000,
    redisBytes: readInteger(env, 'GRAPHQL_PERSISTED_QUERIES_REDIS_MB', 32, 1, 1_048_576) * 2 ** 20,
    trustedDocuments: path === undefined ? new Map() : readTrustedDocuments(path),
    trustedOnly,
  })
}

/**
 * The trusted documents' file: `{ "<sha256>": "query" }`, or Apollo's persisted-query manifest
 * (`{ format: 'apollo-persisted-query-manifest', operations: [{ id, body }] }`). Each hash must be
 * its document's SHA-256 in hex.
 */
function readTrustedDocuments(path: string): ReadonlyMap<string, string> {
  const name = 'GRAPHQL_TRUSTED_DOCUMENTS'
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new ConfigError(name, `cannot read ${path} as JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError(name, `${path} must hold a JSON object`)
  const manifest = parsed as { format?: unknown; operations?: unknown }
  let entries: [unknown, unknown][]
  if (manifest.format === 'apollo-persisted-query-manifest') {
    if (!Array.isArray(manifest.operations)) throw new ConfigError(name, `${path}: a manifest needs an operations array`)
    entries = manifest.operations.map((operation: { id?: unknown; body?: unknown } | null) => [operation?.id, operation?.body])
  } else {
    entries = Object.entries(parsed)
  }
  const documents = new Map<string, string>()
  for (const [hash, query] of entries) {
    if (typeof hash !== 'string' || typeof query !== 'string' || query.trim() === '') {
      throw new ConfigError(name, `${path}: each document must be a hash and the text of a query`)
    }
    const actual = createHash('sha256').update(query).digest('hex')
    if (actual !== hash.toLowerCase()) throw new ConfigError(name, `${path}: ${hash} is not the SHA-256 of its document (${actual})`)
    documents.set(actual, query)
  }
  return documents
}
