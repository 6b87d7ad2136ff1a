// Where persisted queries' documents are kept, and each caller's allowance of registered bytes. With
// REDIS_URL (and registration open to all), documents registered on one instance are known to all:
// they go over the rate limit's Redis connection (both are plain commands), or one of their own
// when there is none; every instance keeps an LRU of them in front. Without it, the LRU alone.
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import type { PersistedQueriesConfig } from '../../config/graphql-config.js'
import { createLimiter } from '../../limits/limiter.js'
import { type CommandObserver, createRedisConnection } from '../../redis/connection.js'
import { createLruStore, createRedisStore } from './persisted-queries.js'

export interface PersistedQueryStoresOptions {
  redisUrl: string | undefined
  keyPrefix: string
  /** A command connection already open (the rate limit's), used when there is one. */
  sharedRedis: Redis | undefined
  log: FastifyBaseLogger
  /** The clock the allowance's windows run on. @default Date.now */
  now?: (() => number) | undefined
  /** Told of every command of the connection opened here (tracing). */
  observeRedis?: CommandObserver | undefined
}

export function createPersistedQueryStores(
  persisted: PersistedQueriesConfig,
  { redisUrl, keyPrefix, sharedRedis, log, now, observeRedis }: PersistedQueryStoresOptions,
) {
  const shares = redisUrl !== undefined && persisted.enabled && !persisted.trustedOnly
  /** The connection opened here, for the app to wait on at start and close at the end. */
  const ownRedis =
    shares && sharedRedis === undefined
      ? createRedisConnection({ url: redisUrl, name: `${keyPrefix}persisted-queries`, log, mode: 'commands', observe: observeRedis })
      : undefined
  const redis = shares ? (sharedRedis ?? ownRedis) : undefined
  const local = createLruStore(persisted.cacheBytes)
  const store = redis === undefined ? local : createRedisStore({ redis, keyPrefix, ttlMs: persisted.ttlMs, budgetBytes: persisted.redisBytes, local, log })
  // Each caller's registered bytes, counted where the documents go. Redis away lets registrations
  // through uncounted: they then stay in this process's LRU, which bounds itself.
  const allowance = createLimiter({
    name: 'persisted-query-bytes',
    points: persisted.callerBytes,
    windowMs: persisted.callerWindowMs,
    redis: redis && { redis, keyPrefix },
    onStoreError: 'open',
    log,
    counts: 'persisted-query registrations',
    now,
  })
  return { store, allowance, ownRedis }
}
