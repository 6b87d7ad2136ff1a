// Automatic persisted queries, in the protocol Apollo Client and urql speak: a request may send
// `extensions.persistedQuery: { version: 1, sha256Hash }` in place of its `query`. A hash the
// service holds stands for its document; one it does not hold is answered PersistedQueryNotFound,
// and the client sends the query again with the hash, which registers it once the hash is checked.
//
// The documents are kept in this process (an LRU bounded by count and bytes) and, with REDIS_URL,
// in Redis too (under the key prefix, with a TTL), so that what one instance learnt the others
// know; the process's own copy is read first. Redis being away never fails a request that carries
// its query: a hash alone is then PersistedQueryNotFound, and the client sends the query.
//
// A list of trusted documents (GRAPHQL_TRUSTED_DOCUMENTS) is known from the start; with
// GRAPHQL_TRUSTED_DOCUMENTS_ONLY, it is the only documents run: neither a query sent in full nor a
// registration gets past it.
import { createHash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import type { PersistedQueriesConfig } from '../config/graphql-config.js'
import type { OperationParams, RequestParams } from './request-params.js'

/** A refusal of the protocol, answered as a GraphQL error of the request with this code. */
export interface PersistedQueryRefusal {
  code: 'PERSISTED_QUERY_NOT_FOUND' | 'PERSISTED_QUERY_NOT_SUPPORTED' | 'PERSISTED_QUERY_NOT_ALLOWED' | 'BAD_REQUEST'
  message: string
}

/** Where registered documents are kept. `get` and `set` never reject. */
export interface PersistedQueryStore {
  get(hash: string): Promise<string | undefined>
  set(hash: string, query: string): Promise<void>
}

/** Documents kept in this process at most (the byte budget bounds them too). */
const MAX_ENTRIES = 10_000

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex')

/** The documents of this process, least recently used first out, within `budgetBytes` (UTF-16: two bytes a character). */
export function createLruStore(budgetBytes: number): PersistedQueryStore & { readonly size: number } {
  const entries = new Map<string, string>()
  let bytes = 0
  const sizeOf = (hash: string, query: string) => 2 * (hash.length + query.length)
  return {
    get size() {
      return entries.size
    },
    async get(hash) {
      const query = entries.get(hash)
      if (query === undefined) return undefined
      entries.delete(hash)
      entries.set(hash, query)
      return query
    },
    async set(hash, query) {
      if (entries.has(hash) || sizeOf(hash, query) > budgetBytes) return
      entries.set(hash, query)
      bytes += sizeOf(hash, query)
      for (const [oldest, text] of entries) {
        if (bytes <= budgetBytes && entries.size <= MAX_ENTRIES) break
        entries.delete(oldest)
        bytes -= sizeOf(oldest, text)
      }
    },
  }
}

/**
 * The process's LRU in front of Redis: read here first, then in Redis (and kept here once found);
 * written to both. A Redis command that fails is a miss, or a document kept here only.
 */
export function createRedisStore(options: {
  redis: Redis
  keyPrefix: string
  ttlMs: number
  local: PersistedQueryStore
  log: FastifyBaseLogger
}): PersistedQueryStore {
  const { redis, local, log } = options
  const keyOf = (hash: string) => `${options.keyPrefix}apq:${hash}`
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
      try {
        await redis.set(keyOf(hash), query, 'PX', options.ttlMs)
      } catch (error) {
        log.debug({ err: error }, 'persisted query not written to Redis')
      }
    },
  }
}

/** The protocol over a store: a request's parameters, with its document resolved from the hash, or why not. */
export function createPersistedQueries(config: PersistedQueriesConfig, store: PersistedQueryStore) {
  const trusted = config.trustedDocuments
  return {
    /** The operation the request stands for; a refusal when its hash is unknown, wrong or not allowed. */
    async resolve(params: RequestParams): Promise<OperationParams | PersistedQueryRefusal> {
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
      if (!trusted.has(hash)) {
        if (config.trustedOnly) return notAllowed
        if (config.enabled) await store.set(hash, query)
      }
      return { query, variables, operationName }
    },
  }
}

export type PersistedQueries = ReturnType<typeof createPersistedQueries>

const notAllowed: PersistedQueryRefusal = {
  code: 'PERSISTED_QUERY_NOT_ALLOWED',
  message: 'Only trusted documents are run here: send the hash of one (extensions.persistedQuery)',
}
