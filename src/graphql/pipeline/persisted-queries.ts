// Automatic persisted queries, in the protocol Apollo Client and urql speak: a request may send
// `extensions.persistedQuery: { version: 1, sha256Hash }` in place of its `query`. A hash the
// service holds stands for its document; one it does not hold is answered PersistedQueryNotFound,
// and the client sends the query again with the hash, which registers it once the hash is checked
// and the operation has run: a document that does not parse or validate is never kept.
//
// What is kept is bounded three ways: a document larger than GRAPHQL_PERSISTED_QUERY_MAX_BYTES is
// run and not kept; each caller may register so many bytes per window (past it, registration is
// skipped, logged once a window); and the store as a whole has a byte budget it keeps by dropping
// its oldest documents. A document not kept is answered as any other run: the client's next hash
// alone is PersistedQueryNotFound again, and it sends the query again.
//
// The documents are kept in this process (an LRU bounded by count and bytes) and, with REDIS_URL,
// in Redis too (under the key prefix, with a TTL, within GRAPHQL_PERSISTED_QUERIES_REDIS_MB), so
// that what one instance learnt the others know; the process's own copy is read first. Redis being
// away never fails a request that carries its query: a hash alone is then PersistedQueryNotFound,
// and the client sends the query.
//
// A list of trusted documents (GRAPHQL_TRUSTED_DOCUMENTS) is known from the start; with
// GRAPHQL_TRUSTED_DOCUMENTS_ONLY, it is the only documents run: neither a query sent in full nor a
// registration gets past it.
import { hash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import type { PersistedQueriesConfig } from '../../config/graphql-config.js'
import type { Limiter } from '../../limits/limiter.js'
import { RecentlyUsed } from '../../recently-used.js'
import type { OperationParams, RequestParams } from './request-params.js'

/** A refusal of the protocol, answered as a GraphQL error of the request with this code. */
export interface PersistedQueryRefusal {
  code: 'PERSISTED_QUERY_NOT_FOUND' | 'PERSISTED_QUERY_NOT_SUPPORTED' | 'PERSISTED_QUERY_NOT_ALLOWED' | 'BAD_REQUEST'
  message: string
}

/** The operation a request stands for; `registers`: the hash to register its document under once it has run. */
export interface ResolvedOperation extends OperationParams {
  readonly registers?: string
}

/** Where registered documents are kept. `get` and `set` never reject. */
export interface PersistedQueryStore {
  get(hash: string): Promise<string | undefined>
  set(hash: string, query: string): Promise<void>
}

/** Documents kept in this process at most (the byte budget bounds them too). */
const MAX_ENTRIES = 10_000

export const sha256Hex = (text: string): string => hash('sha256', text, 'hex')

/** The documents of this process, one not used lately first out, within `budgetBytes` (UTF-16: two bytes a character). */
export function createLruStore(budgetBytes: number): PersistedQueryStore & { readonly size: number } {
  const entries = new RecentlyUsed<string, string>(budgetBytes, (hash, query) => 2 * (hash.length + query.length), MAX_ENTRIES)
  return {
    get size() {
      return entries.size
    },
    async get(hash) {
      return entries.get(hash)
    },
    async set(hash, query) {
      if (!entries.has(hash)) entries.set(hash, query)
    },
  }
}

/**
 * The process's LRU in front of Redis: read here first, then in Redis (and kept here once found);
 * written to both. A Redis command that fails is a miss, or a document kept here only. In Redis,
 * the documents stay within `budgetBytes`, the oldest dropped to make room (REGISTER_SCRIPT).
 */
export function createRedisStore(options: {
  redis: Redis
  keyPrefix: string
  ttlMs: number
  /** What the documents may take in Redis, all together (redisBytesOf each). */
  budgetBytes: number
  local: PersistedQueryStore
  log: FastifyBaseLogger
}): PersistedQueryStore {
  const { redis, local, log } = options
  const keyOf = (hash: string) => `${options.keyPrefix}apq:${hash}`
  const registrationsKey = `${options.keyPrefix}apq-registrations`
  const bytesKey = `${options.keyPrefix}apq-bytes`
  return {
    async get(hash) {
      const here = await local.get(hash)
      if (here !== undefined) return here
      let query: string | null
      try {
        query = await redis.get(keyOf(hash))
      } catch (error) {
        log.debug({ err: error }, 'persisted query not read from Redis')
        return undefined
      }
      // The key holds what a registration checked against its hash; checked again, as Redis is shared.
      if (query === null || sha256Hex(query) !== hash) return undefined
      await local.set(hash, query)
      return query
    },
    async set(hash, query) {
      await local.set(hash, query)
      const bytes = redisBytesOf(query)
      if (bytes > options.budgetBytes) return
      try {
        await redis.eval(
          REGISTER_SCRIPT,
          3,
          keyOf(hash),
          registrationsKey,
          bytesKey,
          query,
          `${bytes}:${hash}`,
          options.ttlMs,
          bytes,
          options.budgetBytes,
          keyOf(''),
        )
      } catch (error) {
        log.debug({ err: error }, 'persisted query not written to Redis')
      }
    },
  }
}

/**
 * What Redis may spend keeping a document: its allocator rounds a large string up by as much as a
 * quarter (a 60,000-byte one takes 64 KiB), and the key, its expiry and its entry in the index of
 * registrations take a few hundred bytes more.
 */
const redisBytesOf = (query: string): number => {
  const bytes = Buffer.byteLength(query)
  return bytes + Math.ceil(bytes / 4) + 512
}

/**
 * Registers a document within the budget, in one step on Redis's side. The index of registrations
 * is a sorted set of `<bytes>:<hash>` by expiry, and the bytes of them all are kept beside it: an
 * expiry is registration time plus the one TTL, so the lowest entries are the oldest (expired ones
 * first), and they are dropped until the new document fits. A document already held is left as it
 * is; an index entry whose key is gone (expired, deleted) is counted out before it counts again.
 * The documents' keys are built here from their prefix (ARGV[6]): one Redis, not a cluster.
 * KEYS: the document's key, the index, the bytes. ARGV: document, index entry, TTL (ms), bytes, budget, key prefix.
 */
const REGISTER_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local total = tonumber(redis.call('GET', KEYS[3]) or '0')
local function drop(entry)
  local bytes, hash = string.match(entry, '^(%d+):(.+)$')
  redis.call('ZREM', KEYS[2], entry)
  redis.call('DEL', ARGV[6] .. hash)
  total = total - tonumber(bytes)
end
if redis.call('ZSCORE', KEYS[2], ARGV[2]) then drop(ARGV[2]) end
local bytes = tonumber(ARGV[4])
while total + bytes > tonumber(ARGV[5]) do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if oldest == nil then total = 0 break end
  drop(oldest)
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[2])
redis.call('SET', KEYS[3], total + bytes)
return 1
`

/**
 * The protocol over a store: a request's parameters, with its document resolved from the hash, or
 * why not; and the registration of a document that ran, within the bounds. `allowance` counts
 * each caller's registered bytes (as points) per window.
 */
export function createPersistedQueries(
  config: PersistedQueriesConfig,
  store: PersistedQueryStore,
  options: { allowance: Pick<Limiter, 'consume'>; log: FastifyBaseLogger },
) {
  const trusted = config.trustedDocuments
  const skipped = skipLog(options.log, config.callerWindowMs)
  return {
    /** The operation the request stands for; a refusal when its hash is unknown, wrong or not allowed. */
    async resolve(params: RequestParams): Promise<ResolvedOperation | PersistedQueryRefusal> {
      const { query, variables, operationName, persistedHash: hash } = params
      if (hash === undefined) {
        if (config.trustedOnly && !trusted.has(sha256Hex(query as string))) return notAllowed
        return { query: query as string, variables, operationName }
      }
      if (query === undefined) {
        const found = trusted.get(hash) ?? (config.enabled && !config.trustedOnly ? await store.get(hash) : undefined)
        if (found !== undefined) return { query: found, variables, operationName }
        if (config.trustedOnly) return notAllowed
        if (!config.enabled) return { code: 'PERSISTED_QUERY_NOT_SUPPORTED', message: 'PersistedQueryNotSupported' }
        return { code: 'PERSISTED_QUERY_NOT_FOUND', message: 'PersistedQueryNotFound' }
      }
      if (sha256Hex(query) !== hash) return { code: 'BAD_REQUEST', message: 'provided sha does not match query' }
      if (trusted.has(hash)) return { query, variables, operationName }
      if (config.trustedOnly) return notAllowed
      return config.enabled ? { query, variables, operationName, registers: hash } : { query, variables, operationName }
    },

    /**
     * Keeps the document of an operation that ran (so it parsed and validated) under its hash,
     * charged to `caller` (callerKey); skipped when it is too large or the caller's bytes are spent.
     */
    async register(operation: ResolvedOperation, caller: string): Promise<void> {
      if (operation.registers === undefined) return
      const bytes = Buffer.byteLength(operation.query)
      if (bytes > config.maxDocumentBytes) return skipped(caller, 'larger than GRAPHQL_PERSISTED_QUERY_MAX_BYTES')
      if (!(await options.allowance.consume(caller, bytes)).allowed) return skipped(caller, "the caller's GRAPHQL_PERSISTED_QUERIES_CALLER_BYTES are spent")
      await store.set(operation.registers, operation.query)
    },
  }
}

/**
 * Registrations skipped, logged at most once a window, with how many were skipped since the line
 * before: a caller sending document after document must not write a line for each.
 */
function skipLog(log: FastifyBaseLogger, windowMs: number): (caller: string, why: string) => void {
  let nextLineAt = 0
  let skipped = 0
  return (caller, why) => {
    skipped++
    const now = Date.now()
    if (now < nextLineAt) return
    nextLineAt = now + windowMs
    log.warn({ caller, skipped }, `persisted query run but not registered: ${why} (logged at most once a window)`)
    skipped = 0
  }
}

export type PersistedQueries = ReturnType<typeof createPersistedQueries>

const notAllowed: PersistedQueryRefusal = {
  code: 'PERSISTED_QUERY_NOT_ALLOWED',
  message: 'Only trusted documents are run here: send the hash of one (extensions.persistedQuery)',
}
