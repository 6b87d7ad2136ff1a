// Rate limiting (docs/rest.md, Rate limits): N points per window per caller — per user when signed in,
// per client address otherwise — counted by the points limiter (src/limits/limiter.ts): in this
// process, or in Redis so every instance shares one allowance. An HTTP request takes 1 point when
// it arrives; work that costs more takes more before it runs (GraphQL: each operation of a batch,
// each mutation field, and its cost — src/graphql/pipeline/metering.ts; REST: the relations `include`
// embeds, through chargeRateLimit), as does a WebSocket subscribe message; an answer past its first
// 64 KiB takes more once it is made (chargeAnswer, src/limits/answer-bytes.ts). Every answer says where
// the caller stands, in the X-RateLimit-* headers and in the IETF draft's RateLimit-Policy and
// RateLimit — answers given before routing (a malformed URL) or before the limit's own hook (a CORS
// preflight) included; past the allowance, 429 RATE_LIMITED with Retry-After. When the store cannot
// count (Redis away), the request is let through or refused with 503, by config; either way the
// failure is logged (once per outage) and counted. This module is the policy; the hooks that count
// every HTTP request by it are src/http/rate-limit-hooks.ts.
import { isIPv6 } from 'node:net'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import type { Redis } from 'ioredis'
import type { Caller } from '../core/caller.js'
import type { RateLimitStoreFailure } from '../config.js'
import { AppError } from '../errors.js'
import type { AnswerCharger } from './answer-bytes.js'
import { createLimiter, type CountedLimiter, type LimitVerdict, storeFailureLog } from './limiter.js'
import { routeConfigOf } from '../core/route-config-read.js'

export interface RateLimitPolicy {
  /** Points per window for an anonymous client address; 0 turns rate limiting off. */
  max: number
  /** Points per window for a signed-in user. */
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

declare module 'fastify' {
  interface FastifyRequest {
    /** The points the request took so far; undefined until it is counted. */
    rateLimitCharged: number | undefined
    /** The points its caller had left, as its answer last reported them. */
    rateLimitRemaining: number | undefined
  }
}

/** An IPv6 client holds a whole /64: counted as one address, it cannot step around its allowance. */
const IPV6_PREFIX_HEXTETS = 4

/** Whom an allowance belongs to: the user when signed in, else the client's address (its /64 for IPv6). */
export const callerKey = (request: FastifyRequest, caller: Caller | null): string =>
  caller === null ? `ip:${addressKey(request.ip)}` : `user:${caller.userId}`

const keyOf = (request: FastifyRequest): string => callerKey(request, request.caller ?? null)

/**
 * Takes `points` (default 1) for the request's caller, outside HTTP (a WebSocket subscribe message,
 * then its operation's points past that one). A refused consume keeps its points (the store counts
 * every attempt), unless `refundRefused`: the points of work refused are given back, as HTTP's charge does.
 */
export type RateLimitConsumer = (request: FastifyRequest, points?: number, options?: { refundRefused?: boolean }) => Promise<RateLimitVerdict>

/** Allowed, or refused with the error to show (RATE_LIMITED, or SERVICE_UNAVAILABLE when the store failed closed). */
export type RateLimitVerdict = { allowed: true } | { allowed: false; error: AppError; retryAfterS: number }

/**
 * Takes `points` more from an HTTP request's caller, before the work they pay for runs: the
 * headers then report what is left, and X-RateLimit-Cost what the request took in all. Throws
 * RATE_LIMITED (with retryAfterS) when the allowance is short — the points asked are given back,
 * so a refused request costs only the point it took on arrival.
 */
export type RateLimitCharger = (request: FastifyRequest, reply: FastifyReply, points: number) => Promise<void>

export interface RateLimit {
  /** The counter for messages that are not HTTP requests; undefined when rate limiting is off. */
  consume: RateLimitConsumer | undefined
  /** Charges an HTTP request more than its 1 point; undefined when rate limiting is off. */
  charge: RateLimitCharger | undefined
  /**
   * Takes `points` more for an answer already made (its bytes: src/limits/answer-bytes.ts), never
   * refused: the answer goes out, the headers report the allowance after it, and a caller past it
   * is refused from its next request on. Undefined when rate limiting is off.
   */
  chargeAnswer: AnswerCharger | undefined
  /** Requests the store could not count (let through or refused, by policy). */
  readonly storeErrors: number
}

/** The rate limit as the HTTP hooks meet it (src/http/rate-limit-hooks.ts); absent when rate limiting is off. */
export interface RequestCounting {
  /**
   * The onRequest hook: takes the request's first point and reports it; over the allowance, the
   * request fails with RATE_LIMITED. A callback: a request answered at once gains no promise.
   */
  readonly countArrival: onRequestHookHandler
  /** Takes the first point of a request that was answered before countArrival ran (nothing if it was counted); rejects with RATE_LIMITED past the allowance. */
  readonly arrive: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
  /** The request is not counted: its route is unmetered, or its point is taken already. */
  readonly isUncounted: (request: FastifyRequest) => boolean
}

export interface RateLimitOptions {
  /** Where the counters live when they are shared; in this process without it. */
  store?: RedisRateLimitStore
  /** Where the store's failures are logged. */
  log: FastifyBaseLogger
  /** Told of each request or subscription refused for being over the limit (metrics). */
  onRefused?: () => void
  /** The clock of the windows counted in this process. @default Date.now */
  now?: () => number
}

/** Seconds a WebSocket client refused for a failed store is told to wait (HTTP's 503 says the same, from the error handler). */
const STORE_RETRY_AFTER_S = 1

/**
 * The most points of a caller's allowance an instance counting in Redis takes ahead of need (a
 * lease, spent without a round trip): a sixteenth of the allowance, at most 64. Unspent, it is what
 * another instance may refuse early; an allowance under 16 points is counted in Redis each time.
 */
const leaseFor = (allowance: number): number => Math.min(64, Math.floor(allowance / 16))

const OFF: RateLimit & { requests: undefined } = { consume: undefined, charge: undefined, chargeAnswer: undefined, storeErrors: 0, requests: undefined }

/**
 * The rate limit of one app: counted in Redis when `store` is given, else in this process;
 * RATE_LIMIT_MAX=0 counts nothing. `requests` is what the HTTP hooks count every request by.
 */
export function createRateLimit(policy: RateLimitPolicy, options: RateLimitOptions): RateLimit & { requests: RequestCounting | undefined } {
  if (policy.max === 0) return OFF
  const allowances = createAllowances(policy, options)
  const ledger = createLedger(allowances)
  return {
    ...createCharges(allowances, ledger),
    get storeErrors() {
      return allowances.failures.failures
    },
    requests: countRequests(allowances, ledger),
  }
}

/** The two allowances (anonymous, signed in), one store's failure log, and the words of a refusal. */
interface Allowances {
  readonly limiterFor: (request: FastifyRequest) => CountedLimiter
  readonly policyName: (request: FastifyRequest) => string
  readonly windowS: number
  readonly failures: ReturnType<typeof storeFailureLog>
  readonly onRefused: () => void
  readonly refusal: (verdict: LimitVerdict & { allowed: false }) => AppError
}

function createAllowances(policy: RateLimitPolicy, { store, log, onRefused = () => {}, now = Date.now }: RateLimitOptions): Allowances {
  const windowS = Math.ceil(policy.windowMs / 1000)
  // One allowance per kind of caller; one store, so one log of its failures for both.
  const failures = storeFailureLog(log, 'rate-limit', policy.onStoreError, 'requests')
  const limiterOf = (points: number): CountedLimiter =>
    createLimiter({
      name: 'rate-limit',
      points,
      windowMs: policy.windowMs,
      redis: store,
      onStoreError: policy.onStoreError,
      log,
      failures,
      now,
      leaseUpTo: leaseFor(points),
    })
  const anonymous = limiterOf(policy.max)
  const signedIn = limiterOf(policy.authenticatedMax)
  return {
    limiterFor: (request) => (request.caller ? signedIn : anonymous),
    policyName: (request) => (request.caller ? 'signed-in' : 'anonymous'),
    windowS,
    failures,
    onRefused,
    refusal: (verdict) =>
      new AppError('RATE_LIMITED', `Too many requests: ${verdict.limit} per ${windowS} s. Retry in ${verdict.retryAfterS} s.`, undefined, {
        retryAfterS: verdict.retryAfterS,
      }),
  }
}

/**
 * The headers that say where a request's caller stands. What the request took so far and what its
 * caller had left are kept on the request itself (`rateLimitCharged`, `rateLimitRemaining`), not in
 * maps keyed by it: two WeakMap entries a request were a share of every request's allocation, kept
 * in tables of the old generation.
 */
interface Ledger {
  /** Where the caller stands, on the answer; nothing when the store could not count. */
  readonly report: (request: FastifyRequest, reply: FastifyReply, verdict: LimitVerdict) => void
  /** What the request took in all (GitHub's GraphQL calls it the query's cost). */
  readonly reportCost: (reply: FastifyReply, request: FastifyRequest) => void
  /** Reports where the caller stands, and throws when it is over the allowance. */
  readonly settle: (request: FastifyRequest, reply: FastifyReply, verdict: LimitVerdict) => void
  readonly uncounted: (request: FastifyRequest) => boolean
}

function createLedger({ policyName, windowS, onRefused, refusal }: Allowances): Ledger {
  // A policy's header is the same on every answer of its callers: written once per policy and allowance.
  const policies = new Map<string, { limit: number; header: string }>()
  const policyHeader = (name: string, limit: number): string => {
    let policy = policies.get(name)
    if (policy?.limit !== limit) {
      policy = { limit, header: `"${name}";q=${limit};w=${windowS}` }
      policies.set(name, policy)
    }
    return policy.header
  }
  function report(request: FastifyRequest, reply: FastifyReply, verdict: LimitVerdict): void {
    if (verdict.allowed && verdict.uncounted === true) return
    const { limit, remaining, resetS } = verdict
    request.rateLimitRemaining = remaining
    const name = policyName(request)
    reply
      .header('x-ratelimit-limit', limit)
      .header('x-ratelimit-remaining', remaining)
      .header('x-ratelimit-reset', resetS)
      .header('ratelimit-policy', policyHeader(name, limit))
      .header('ratelimit', `"${name}";r=${remaining};t=${resetS}`)
  }
  return {
    report,
    reportCost: (reply, request) => {
      reply.header('x-ratelimit-cost', request.rateLimitCharged ?? 0)
    },
    settle(request, reply, verdict) {
      report(request, reply, verdict)
      if (!verdict.allowed) {
        onRefused()
        throw refusal(verdict)
      }
    },
    uncounted: (request) => routeConfigOf(request).unmetered === true || request.rateLimitCharged !== undefined,
  }
}

/** Every HTTP request's first point, taken as it arrives (or as it leaves, when it was answered first). */
function countRequests({ limiterFor }: Allowances, { settle, uncounted }: Ledger): RequestCounting {
  /** Takes the request's first point, reports it, and throws when the caller is over the allowance. */
  async function arrive(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (uncounted(request)) return
    request.rateLimitCharged = 1
    settle(request, reply, await limiterFor(request).consume(keyOf(request)))
  }

  // A request answered at once (counted in this process, or from its caller's lease in Redis) is
  // counted without a promise (a callback hook): that, and the map of windows in limiter.ts, is what
  // brought the rate limit's cost down from 14% of GET one user.
  const countArrival: onRequestHookHandler = (request, reply, done) => {
    if (uncounted(request)) return done()
    request.rateLimitCharged = 1
    const limiter = limiterFor(request)
    const key = keyOf(request)
    const verdict = limiter.consumeNow?.(key)
    if (verdict === undefined) {
      limiter
        .consume(key)
        .then((asked) => {
          settle(request, reply, asked)
        })
        .then(() => done(), done)
      return
    }
    try {
      settle(request, reply, verdict)
    } catch (error) {
      return done(error as Error)
    }
    done()
  }

  return { countArrival, arrive, isUncounted: uncounted }
}

/** The points taken beyond a request's first: a message's, a request's work, an answer's bytes. */
function createCharges(allowances: Allowances, ledger: Ledger): Pick<RateLimit, 'consume' | 'charge' | 'chargeAnswer'> {
  const { limiterFor, onRefused, refusal } = allowances
  const { report, reportCost } = ledger
  return {
    async consume(request, points = 1, options = {}) {
      const limiter = limiterFor(request)
      let verdict
      try {
        verdict = await limiter.consume(keyOf(request), points)
      } catch (error) {
        if (error instanceof AppError) return { allowed: false, error, retryAfterS: STORE_RETRY_AFTER_S }
        throw error
      }
      if (verdict.allowed) return { allowed: true }
      if (options.refundRefused === true) await limiter.reward(keyOf(request), points)
      onRefused()
      return { allowed: false, error: refusal(verdict), retryAfterS: verdict.retryAfterS }
    },
    async charge(request, reply, points) {
      if (points <= 0) return reportCost(reply, request)
      const limiter = limiterFor(request)
      const verdict = await limiter.consume(keyOf(request), points)
      if (!verdict.allowed) {
        // A refused request does none of its work: only its arrival is paid for, and the headers
        // set on arrival stand.
        await limiter.reward(keyOf(request), points)
        onRefused()
        reportCost(reply, request)
        throw chargeRefusal(allowances, request, points, verdict)
      }
      report(request, reply, verdict)
      request.rateLimitCharged = (request.rateLimitCharged ?? 0) + points
      reportCost(reply, request)
    },
    async chargeAnswer(request, reply, points) {
      if (points <= 0 || request.rateLimitCharged === undefined) return
      let verdict
      try {
        verdict = await limiterFor(request).consume(keyOf(request), points)
      } catch (error) {
        // The store failed closed: the answer is made, and goes out; the next request meets the failure.
        if (error instanceof AppError) return
        throw error
      }
      // Counted even past the allowance (the work is done): the next request is the one refused.
      report(request, reply, verdict)
      request.rateLimitCharged = (request.rateLimitCharged ?? 0) + points
      reportCost(reply, request)
    },
  }
}

/** A charge refused: what the request would cost in all, and whether sending less or waiting helps. */
function chargeRefusal({ windowS }: Allowances, request: FastifyRequest, points: number, verdict: LimitVerdict & { allowed: false }): AppError {
  const total = (request.rateLimitCharged ?? 0) + points
  const left = request.rateLimitRemaining
  const message =
    total > verdict.limit
      ? `This request costs ${total} points, more than the whole allowance of ${verdict.limit} per ${windowS} s: send less in one request.`
      : `This request costs ${total} points${left === undefined ? '' : `; ${left} of ${verdict.limit}`} are left in this ${windowS} s window. Retry in ${verdict.retryAfterS} s.`
  return new AppError('RATE_LIMITED', message, undefined, { retryAfterS: verdict.retryAfterS })
}

/**
 * The key of a client address: an IPv4 address as it is, an IPv6 one by its /64 (its first four
 * groups), an IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 address it is.
 */
export function addressKey(ip: string): string {
  // An IPv4 address (the usual case) has no colon: no need for isIPv6's regular expression on every request.
  if (!ip.includes(':')) return ip
  if (!isIPv6(ip)) return ip.toLowerCase()
  const groups = hextets(ip.replace(/%.*$/, ''))
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff
  if (mapped) return [groups[6] ?? 0, groups[7] ?? 0].flatMap((group) => [group >> 8, group & 0xff]).join('.')
  return `${groups
    .slice(0, IPV6_PREFIX_HEXTETS)
    .map((group) => group.toString(16))
    .join(':')}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, an IPv4 tail as two groups). */
function hextets(ip: string): number[] {
  const toGroups = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((piece) => {
          if (!piece.includes('.')) return [Number.parseInt(piece, 16)]
          const [a = 0, b = 0, c = 0, d = 0] = piece.split('.').map(Number)
          return [(a << 8) | b, (c << 8) | d]
        })
  const [head = '', tail] = ip.split('::')
  const front = toGroups(head)
  if (tail === undefined) return front
  const back = toGroups(tail)
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back]
}
