// Rate limiting (spec §8): N requests per window per caller — per user when signed in, per client
// address otherwise — counted by @fastify/rate-limit's store: in this process, or in Redis (its
// RedisStore: one Lua script, atomic, on Redis's clock) so every instance shares one allowance.
// Every answer says where the caller stands, in the X-RateLimit-* headers and in the IETF draft's
// RateLimit-Policy and RateLimit; past the allowance, 429 RATE_LIMITED with Retry-After. When the
// store cannot count (Redis away), the request is let through or refused with 503, by config;
// either way the failure is logged (once per outage) and counted.
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import type { Caller } from '../caller.js'
import type { RateLimitStoreFailure } from '../config.js'
import { AppError } from '../errors.js'
import { FailureLog } from '../failure-log.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Not counted against the rate limit (probes and scrapers: GET /health, /ready, /metrics). */
    unmetered?: boolean
  }
}

export interface RateLimitPolicy {
  /** Requests per window for an anonymous client address; 0 turns rate limiting off. */
  max: number
  /** Requests per window for a signed-in user. */
  authenticatedMax: number
  windowMs: number
  /** What a request meets when the store fails: let through ('open') or 503 ('closed'). */
  onStoreError: RateLimitStoreFailure
}

/** Where the counters live when they are shared: a Redis connection, and the prefix of every key. */
export interface RedisRateLimitStore {
  redis: Redis
  keyPrefix: string
}

/** An IPv6 client holds a whole /64: counted as one address, it cannot step around its allowance. */
const IPV6_PREFIX_BITS = 64

/** Whom an allowance belongs to: the user when signed in, else the client's address (its /64 for IPv6). */
export const callerKey = (request: FastifyRequest, caller: Caller | null): string =>
  caller === null ? `ip:${normalizeIP(request.ip, IPV6_PREFIX_BITS)}` : `user:${caller.userId}`

const keyOf = (request: FastifyRequest): string => callerKey(request, request.caller)

/** Counts one more request for the request's caller, outside HTTP (a WebSocket subscribe message). */
export type RateLimitConsumer = (request: FastifyRequest) => Promise<RateLimitVerdict>

/** Allowed, or refused with the error to show (RATE_LIMITED, or SERVICE_UNAVAILABLE when the store failed closed). */
export type RateLimitVerdict = { allowed: true } | { allowed: false; error: AppError; retryAfterS: number }

export interface RateLimit {
  /** The counter for messages that are not HTTP requests; undefined when rate limiting is off. */
  consume: RateLimitConsumer | undefined
  /** Requests the store could not count (let through or refused, by policy). */
  readonly storeErrors: number
}

/** Seconds a WebSocket client refused for a failed store is told to wait (HTTP's 503 says the same, from the error handler). */
const STORE_RETRY_AFTER_S = 1

const storeUnavailable = () => new AppError('SERVICE_UNAVAILABLE', 'The rate limit cannot be checked right now; retry in a moment')

/** Counts every HTTP request (in Redis when `store` is given, else in this process); RATE_LIMIT_MAX=0 counts nothing. */
export async function registerRateLimit(
  app: FastifyInstance,
  policy: RateLimitPolicy,
  store?: RedisRateLimitStore,
  /** Told of each request or subscription refused for being over the limit (metrics). */
  onRefused: () => void = () => {},
): Promise<RateLimit> {
  if (policy.max === 0) return { consume: undefined, storeErrors: 0 }
  const failures = new FailureLog(app.log, 'rate-limit store', policy.onStoreError === 'open' ? 'requests are let through uncounted' : 'requests are refused with 503')
  await app.register(fastifyRateLimit, {
    global: false,
    timeWindow: policy.windowMs,
    max: (request) => (request.caller === null ? policy.max : policy.authenticatedMax),
    keyGenerator: keyOf,
    // A store error is thrown to us (not skipped as if counted): the policy decides below.
    skipOnError: false,
    ...(store === undefined ? {} : { redis: store.redis, nameSpace: `${store.keyPrefix}rate-limit:` }),
  })
  const consume = app.createRateLimit()
  const windowS = Math.ceil(policy.windowMs / 1000)

  /** Counts the request: the store's answer, or undefined when it failed and the policy lets the request through. */
  async function count(request: FastifyRequest) {
    try {
      const limit = await consume(request)
      failures.succeeded()
      return limit
    } catch (error) {
      failures.failed(error)
      if (policy.onStoreError === 'open') return undefined
      throw storeUnavailable()
    }
  }

  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.unmetered === true) return
    const limit = await count(request)
    if (limit === undefined || limit.isAllowed) return
    const { max, remaining, ttlInSeconds: reset } = limit
    const policyName = request.caller === null ? 'anonymous' : 'signed-in'
    reply.headers({
      'x-ratelimit-limit': max,
      'x-ratelimit-remaining': remaining,
      'x-ratelimit-reset': reset,
      'ratelimit-policy': `"${policyName}";q=${max};w=${windowS}`,
      ratelimit: `"${policyName}";r=${remaining};t=${reset}`,
    })
    if (limit.isExceeded) {
      onRefused()
      reply.header('retry-after', Math.max(1, reset))
      throw new AppError('RATE_LIMITED', `Too many requests: ${max} per ${windowS} s. Retry in ${Math.max(1, reset)} s.`)
    }
  })

  return {
    async consume(request) {
      let limit
      try {
        limit = await count(request)
      } catch (error) {
        if (error instanceof AppError) return { allowed: false, error, retryAfterS: STORE_RETRY_AFTER_S }
        throw error
      }
      if (limit === undefined || limit.isAllowed || !limit.isExceeded) return { allowed: true }
      const retryAfterS = Math.max(1, limit.ttlInSeconds)
      onRefused()
      return { allowed: false, error: new AppError('RATE_LIMITED', `Too many requests: ${limit.max} per ${windowS} s. Retry in ${retryAfterS} s.`), retryAfterS }
    },
    get storeErrors() {
      return failures.failures
    },
  }
}
