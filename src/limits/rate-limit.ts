// Rate limiting (spec §8): N requests per window per caller — per user when signed in, per client
// address otherwise — counted by @fastify/rate-limit's store (in process now; Redis when scaling
// out). Every answer says where the caller stands, in the X-RateLimit-* headers and in the IETF
// draft's RateLimit-Policy and RateLimit; past the allowance, 429 RATE_LIMITED with Retry-After.
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Caller } from '../caller.js'
import { AppError } from '../errors.js'

export interface RateLimitPolicy {
  /** Requests per window for an anonymous client address; 0 turns rate limiting off. */
  max: number
  /** Requests per window for a signed-in user. */
  authenticatedMax: number
  windowMs: number
}

/** An IPv6 client holds a whole /64: counted as one address, it cannot step around its allowance. */
const IPV6_PREFIX_BITS = 64

/** Whom an allowance belongs to: the user when signed in, else the client's address (its /64 for IPv6). */
export const callerKey = (request: FastifyRequest, caller: Caller | null): string =>
  caller === null ? `ip:${normalizeIP(request.ip, IPV6_PREFIX_BITS)}` : `user:${caller.userId}`

const keyOf = (request: FastifyRequest): string => callerKey(request, request.caller)

/** Counts one more request for the request's caller, outside HTTP (a WebSocket subscribe message). */
export type RateLimitConsumer = (request: FastifyRequest) => Promise<RateLimitVerdict>

export interface RateLimitVerdict {
  allowed: boolean
  /** When refused: seconds until the window resets. */
  retryAfterS: number
  max: number
  windowS: number
}

/** Counts every HTTP request; returns the counter for other messages, or undefined when rate limiting is off. */
export async function registerRateLimit(app: FastifyInstance, policy: RateLimitPolicy): Promise<RateLimitConsumer | undefined> {
  if (policy.max === 0) return undefined
  await app.register(fastifyRateLimit, {
    global: false,
    timeWindow: policy.windowMs,
    max: (request) => (request.caller === null ? policy.max : policy.authenticatedMax),
    keyGenerator: keyOf,
  })
  const consume = app.createRateLimit()
  const windowS = Math.ceil(policy.windowMs / 1000)

  app.addHook('onRequest', async (request, reply) => {
    const limit = await consume(request)
    if (limit.isAllowed) return
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
      reply.header('retry-after', Math.max(1, reset))
      throw new AppError('RATE_LIMITED', `Too many requests: ${max} per ${windowS} s. Retry in ${Math.max(1, reset)} s.`)
    }
  })

  return async (request) => {
    const limit = await consume(request)
    if (limit.isAllowed) return { allowed: true, retryAfterS: 0, max: 0, windowS }
    return { allowed: !limit.isExceeded, retryAfterS: Math.max(1, limit.ttlInSeconds), max: limit.max, windowS }
  }
}
