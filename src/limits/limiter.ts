// Allowances counted in points: each key (a caller, an account, an address) may spend `points`
// per window, and an action takes as many as the work it causes (one HTTP request 1, a batch of
// GraphQL operations one per operation, a failed sign-in 1). Counted in Redis through
// rate-limiter-flexible (RateLimiterRedis: one Lua script, INCRBY and PTTL at once, on Redis's
// clock) so that every instance shares one allowance; in this process by a plain map of windows,
// synchronously (`consumeNow`): rate-limiter-flexible's memory store answered through a promise and
// a result object per request, and the rate limit cost 14% of GET one user (npm run bench).
// The window is fixed: it starts with the key's first point and every point of it is back when it ends.
// When the store cannot count (Redis away), the policy decides: let the action through uncounted
// ('open'), or refuse it with 503 ('closed'); either way the failure is logged once per outage
// and counted.
//
// Leases (`leaseUpTo`): a key that comes back within its window takes points from Redis ahead of
// need, 2, then 4, 8 … up to `leaseUpTo` and never more than half of what is left, and spends them
// here without a round trip. Every point spent was taken in Redis first, so the instances together
// never let a key past its allowance; what a lease holds unspent (at most `leaseUpTo` a key on each
// instance, given back by the window's end) is what another instance may refuse early. The
// remaining an answer reports is Redis's when the lease was taken plus what the lease still holds.
// A consume that finds the lease empty while a take with points ahead is on its way waits for that
// take rather than sending its own (one caller's burst: a round trip per take, not per request).
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import type * as RateLimiterFlexible from 'rate-limiter-flexible'
import type { RateLimiterRes } from 'rate-limiter-flexible'
import { AppError } from '../errors.js'
import { FailureLog } from '../redis/failure-log.js'

export interface LimitState {
  /** Points per window. */
  readonly limit: number
  /** Points left in the current window. */
  readonly remaining: number
  /** Seconds until the window ends and every point is back. */
  readonly resetS: number
}

export type LimitVerdict = LimitState &
  (
    | {
        readonly allowed: true
        /** Let through without counting: the store failed and the policy is 'open' (the state is then the full allowance). */
        readonly uncounted?: true
      }
    | { readonly allowed: false; readonly retryAfterS: number }
  )

export interface Limiter {
  /** Takes `points` (default 1) from `key`'s allowance. A refused consume takes its points too (the store counts every attempt); `reward` gives them back. */
  consume(key: string, points?: number): Promise<LimitVerdict>
  /**
   * `consume`, answered at once when it can be (always when the allowance is counted in this
   * process; from the key's lease in Redis), else undefined: then `consume` asks the store.
   */
  readonly consumeNow?: (key: string, points?: number) => LimitVerdict | undefined
  /** Gives points back (e.g. a sign-in that succeeded). A store failure here is logged and counted, never thrown. */
  reward(key: string, points?: number): Promise<void>
}

/** A limiter that also tells how often its store failed (for the service's fault counters). */
export interface CountedLimiter extends Limiter {
  /** Operations the store could not count since the start (let through or refused, by policy). */
  readonly storeErrors: number
}

export interface LimiterOptions {
  /** Names the allowance in its keys (`<prefix><name>:<key>` in Redis) and in its log lines. */
  name: string
  /** Points per window for each key. */
  points: number
  /** The window, in whole seconds (the Redis store counts its expiry in seconds). */
  windowMs: number
  /** Counts in Redis, shared by every instance, under `keyPrefix`; in this process when absent. */
  redis?: { redis: Redis; keyPrefix: string }
  /** What an action meets when the store fails: let through ('open') or 503 SERVICE_UNAVAILABLE ('closed'). */
  onStoreError: 'open' | 'closed'
  log: FastifyBaseLogger
  /** What is counted, as the log lines say it when the store fails ("requests are let through uncounted"); 'actions' by default. */
  counts?: string
  /** The log of store failures, when allowances in one store share it (one outage, one line, one count); else the limiter's own. */
  failures?: FailureLog
  /** The clock of the windows counted in this process and of leases (Redis counts on its own). @default Date.now */
  now?: () => number
  /** In Redis: the most points a key's lease may take ahead of need (0, the default: none, every consume is a round trip). */
  leaseUpTo?: number
}

/** Points of a key taken in Redis ahead of need, spent in this process until its window ends. */
interface Lease {
  /** Points taken and not spent yet. */
  left: number
  /** What Redis said was left of the allowance when points were last taken. */
  remaining: number
  /** When the window the points belong to ends (this process's clock). */
  endsAt: number
  /** The most points taken ahead at once in this window: the next take doubles it. */
  size: number
  /** Points being taken ahead right now (answers on their way), counted against the bound. */
  pending: number
  /** The takes on their way with points ahead, for consumes that find the lease empty to wait on. */
  readonly onTheWay: Take[]
}

/** A take from Redis with points ahead of need, on its way. */
interface Take {
  /** Its points ahead that no waiting consume has counted on yet. */
  unclaimed: number
  /** Settles once its answer is kept (or it failed). */
  readonly landed: Promise<void>
}

/** The first take ahead of need, for a key that came back within its window. */
const FIRST_LEASE = 2

const storeUnavailable = (): AppError => new AppError('SERVICE_UNAVAILABLE', 'The rate limit cannot be checked right now; retry in a moment')

export function createLimiter(options: LimiterOptions): CountedLimiter {
  const { name, points: limit, windowMs, redis, onStoreError } = options
  if (!Number.isInteger(limit) || limit < 0) throw new Error(`${name}: points must be a whole number, not ${limit}`)
  if (!Number.isInteger(windowMs / 1000) || windowMs < 1000) throw new Error(`${name}: the window must be whole seconds, not ${windowMs} ms`)
  if (redis === undefined) return localLimiter(name, limit, windowMs, options.now ?? Date.now)
  const duration = windowMs / 1000
  // rate-limiter-flexible is loaded by the first limiter counted in Redis: a server without
  // REDIS_URL never needs it (36 modules, 1.4 MB of heap). Failing to load it is a store failure.
  let loaded: typeof RateLimiterFlexible | undefined
  const store = import('rate-limiter-flexible').then((library) => {
    loaded = library
    return new library.RateLimiterRedis({ storeClient: redis.redis, keyPrefix: `${redis.keyPrefix}${name}`, points: limit, duration })
  })
  store.catch(() => undefined) // seen by the first consume or reward
  const counts = options.counts ?? 'actions'
  const failures = options.failures ?? storeFailureLog(options.log, name, onStoreError, counts)

  const stateOf = (res: RateLimiterRes): LimitState => ({
    limit,
    remaining: res.remainingPoints,
    resetS: Math.max(0, Math.ceil(res.msBeforeNext / 1000)),
  })
  const refusedOf = (state: LimitState): LimitVerdict => ({ allowed: false, ...state, retryAfterS: Math.max(1, state.resetS) })

  const leaseUpTo = options.leaseUpTo ?? 0
  const clock = options.now ?? Date.now
  const leases = new Map<string, Lease>()
  if (leaseUpTo > 0) {
    const sweep = setInterval(() => {
      const now = clock()
      for (const [key, lease] of leases) if (lease.endsAt <= now) leases.delete(key)
    }, windowMs)
    sweep.unref()
  }
  /** The key's lease while its window lasts. */
  const leaseOf = (key: string, now: number): Lease | undefined => {
    const lease = leases.get(key)
    if (lease === undefined || lease.endsAt > now) return lease
    leases.delete(key)
    return undefined
  }
  /** Spends from the key's lease, when it holds the points. */
  const consumeLeased = (key: string, points = 1): LimitVerdict | undefined => {
    requirePoints(name, points)
    const now = clock()
    const lease = leaseOf(key, now)
    if (lease === undefined || lease.left < points) return undefined
    lease.left -= points
    return { allowed: true, limit, remaining: lease.remaining + lease.left, resetS: Math.max(0, Math.ceil((lease.endsAt - now) / 1000)) }
  }
  /**
   * What to take ahead of need: nothing on a key's first consume of a window; then double the last
   * take, the lease and the takes on their way holding at most `leaseUpTo`, and half of what is left.
   */
  const aheadFor = (lease: Lease | undefined): number =>
    lease === undefined
      ? 0
      : Math.max(0, Math.min(leaseUpTo - lease.left - lease.pending, Math.max(FIRST_LEASE, lease.size * 2), Math.floor(lease.remaining / 2)))
  /**
   * Keeps what a take brought: added to the key's lease in the same window, or a lease of its own.
   * The window is taken to end `msBeforeNext` after the take was sent, no later than Redis ends it.
   */
  const keep = (key: string, ahead: number, res: RateLimiterRes, sentAt: number): Lease => {
    const endsAt = sentAt + res.msBeforeNext
    const lease = leaseOf(key, clock())
    // Answers of one window end within a second of each other; a later window starts afresh.
    if (lease !== undefined && Math.abs(lease.endsAt - endsAt) < 1000) {
      lease.left += ahead
      // Redis answers in the order it counted: the last answer is the latest count.
      lease.remaining = res.remainingPoints
      lease.size = Math.max(lease.size, ahead)
      return lease
    }
    const fresh: Lease = { left: ahead, remaining: res.remainingPoints, endsAt, size: ahead, pending: 0, onTheWay: [] }
    leases.set(key, fresh)
    return fresh
  }

  const giveBack = async (key: string, points: number): Promise<void> => {
    try {
      await (await store).reward(key, points)
      failures.succeeded()
    } catch (error) {
      // Giving back is a courtesy: a store that cannot take it must not fail what succeeded.
      failures.failed(error)
    }
  }

  /**
   * A take of the key's on its way whose points ahead nobody has counted on yet, counted on for
   * `points`: a burst of one key's consumes that finds the lease empty waits for the takes already
   * sent, not for a round trip each. Found at once, before any await, so that the consumes of one
   * burst see the takes the earlier ones sent.
   */
  const claimTakeOnItsWay = (key: string, points: number): Take | undefined => {
    const take = leaseOf(key, clock())?.onTheWay.find((onItsWay) => onItsWay.unclaimed >= points)
    if (take !== undefined) take.unclaimed -= points
    return take
  }
  /** Marks a take with points ahead as on its way on the lease; the function returned says it landed. */
  const sendTake = (lease: Lease, ahead: number): (() => void) => {
    let land = () => {}
    const take: Take = { unclaimed: ahead, landed: new Promise<void>((resolve) => (land = resolve)) }
    lease.onTheWay.push(take)
    return () => {
      lease.onTheWay.splice(lease.onTheWay.indexOf(take), 1)
      land()
    }
  }

  return {
    consumeNow: leaseUpTo > 0 ? consumeLeased : undefined,
    async consume(key, points = 1) {
      if (leaseUpTo > 0) {
        const leased = consumeLeased(key, points)
        if (leased !== undefined) return leased
        const take = claimTakeOnItsWay(key, points)
        if (take !== undefined) {
          await take.landed
          // What it brought, unless consumeNow spent it first: then a take of its own.
          const brought = consumeLeased(key, points)
          if (brought !== undefined) return brought
        }
      }
      requirePoints(name, points)
      const sentAt = clock()
      const taking = leaseUpTo > 0 ? leaseOf(key, sentAt) : undefined
      const ahead = aheadFor(taking)
      if (taking !== undefined) taking.pending += ahead
      // Those waiting on it resume once this consume has kept what it brought (they queue behind it).
      const landed = taking !== undefined && ahead > 0 ? sendTake(taking, ahead) : undefined
      try {
        let res: RateLimiterRes
        try {
          res = await (await store).consume(key, points + ahead)
        } finally {
          if (taking !== undefined) taking.pending -= ahead
          landed?.()
        }
        failures.succeeded()
        if (leaseUpTo === 0) return { allowed: true, ...stateOf(res) }
        const lease = keep(key, ahead, res, sentAt)
        return { allowed: true, ...stateOf(res), remaining: lease.remaining + lease.left }
      } catch (error) {
        if (loaded !== undefined && error instanceof loaded.RateLimiterRes) {
          failures.succeeded()
          const state = stateOf(error)
          if (ahead === 0) return refusedOf(state)
          // The points taken ahead did not fit: given back, and the consume judged on its own points.
          await giveBack(key, ahead)
          const spent = error.consumedPoints - ahead
          const lease = leaseOf(key, clock())
          if (lease !== undefined) lease.remaining = Math.max(0, limit - spent)
          return spent <= limit ? { allowed: true, ...state, remaining: limit - spent } : refusedOf({ ...state, remaining: 0 })
        }
        failures.failed(error)
        if (onStoreError === 'open') return { allowed: true, uncounted: true, limit, remaining: limit, resetS: 0 }
        throw storeUnavailable()
      }
    },
    // Given back in Redis, never to a lease: points of a refused consume were counted past the
    // allowance, and only those under it could be spent again.
    reward: (key, points = 1) => giveBack(key, points),
    get storeErrors() {
      return failures.failures
    },
  }
}

const requirePoints = (name: string, points: number): void => {
  if (!Number.isInteger(points) || points < 1) throw new Error(`${name}: points to consume must be a positive integer, not ${points}`)
}

/**
 * Windows counted in this process, as RateLimiterMemory counted them: a key's window starts with
 * its first point and lasts `windowMs`; every attempt counts, a refused one too. The windows that
 * ended are dropped once a window, so the map holds the keys of the last two windows at most.
 */
function localLimiter(name: string, limit: number, windowMs: number, clock: () => number): CountedLimiter {
  const windows = new Map<string, { spent: number; endsAt: number }>()
  const sweep = setInterval(() => {
    const now = clock()
    for (const [key, window] of windows) if (window.endsAt <= now) windows.delete(key)
  }, windowMs)
  sweep.unref()
  const consumeNow = (key: string, points = 1): LimitVerdict => {
    requirePoints(name, points)
    const now = clock()
    let window = windows.get(key)
    if (window === undefined || window.endsAt <= now) {
      window = { spent: 0, endsAt: now + windowMs }
      windows.set(key, window)
    }
    window.spent += points
    const resetS = Math.max(0, Math.ceil((window.endsAt - now) / 1000))
    const remaining = Math.max(0, limit - window.spent)
    if (window.spent <= limit) return { allowed: true, limit, remaining, resetS }
    return { allowed: false, limit, remaining, resetS, retryAfterS: Math.max(1, resetS) }
  }
  return {
    consumeNow,
    consume: async (key, points) => consumeNow(key, points),
    async reward(key, points = 1) {
      const window = windows.get(key)
      if (window !== undefined) window.spent = Math.max(0, window.spent - points)
    },
    storeErrors: 0,
  }
}

/** A log of a store's failures, as a limiter words it: "<name> store failing: <counts> are let through uncounted". */
export function storeFailureLog(log: FastifyBaseLogger, name: string, onStoreError: 'open' | 'closed', counts = 'actions'): FailureLog {
  return new FailureLog(log, `${name} store`, onStoreError === 'open' ? `${counts} are let through uncounted` : `${counts} are refused with 503`)
}
