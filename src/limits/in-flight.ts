// Requests in flight per caller. The rate limit counts requests over a window, so it lets a caller
// send its whole allowance at once; better-sqlite3 then runs their statements one after another on
// the event loop while every other client waits behind all of them (bench:abuse: 300 deep pages
// sent together held GET /health for 10 s). So each caller (the user when signed in, else the
// client address, as the rate limit keys them) has at most `maxPerCaller` requests in their
// handlers at once; the others wait their turn in a bounded queue, holding no work, and one more
// is refused with 429 and Retry-After. A turn is handed over on the next turn of the event loop
// (setImmediate), so requests of other clients read meanwhile are served between two of a greedy
// caller's: however many a caller sends, another client waits behind at most `maxPerCaller` of them
// (and behind what others send meanwhile).
//
// Turns alone bound how long another client waits, not how much of the loop a caller takes: eight
// deep pages at a time (30 ms each on 200,000 users) kept the loop full, and a probe's p99 was 0.7 s
// (bench:abuse, window's end). So each caller also has a busy share: the time it has any request in
// a handler fills a leaky bucket that drains at `maxBusyPercentPerCaller` of the clock; past a burst
// of 150 ms its next turn waits until the bucket is back under it (a caller gone idle is remembered
// until it is empty, so sending one request at a time earns nothing). And the requests of a caller
// whose last one held its handler past 10 ms start a turn of the loop apart, so the sockets are read
// between any two of its statements (for every caller, that halved the throughput of a single client
// of cheap requests). Together: probe p99 under 100 ms, max under 250 ms under the same attack
// (bench:abuse; the figures in docs/security.md). Wall time in a handler is what is measured (the loop
// time is not observable per request), so time waiting on PostgreSQL counts too: a caller of slow
// queries is paced the same way, which also spares the pool.
//
// Taken once the body has been read (preHandler), so a slow upload holds no turn; not taken by
// probes (config.unmetered), WebSocket sessions (an upgrade to a route that upgrades) or event streams
// (config.longLived): they live for
// hours and are bounded by the connection caps instead.
import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'
import { isUpgradeRequest } from '../http/upgrade-requests.js'
import { callerKey } from './rate-limit.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route holds its connection open (an event stream): it takes no turn of the in-flight limit. */
    longLived?: boolean
  }
}

export interface InFlightPolicy {
  /** Requests of one caller in their handlers at once; 0 turns the limit off. @default 2 */
  readonly maxPerCaller: number
  /** Requests of one caller waiting for a turn; one more is refused (429). @default 64 */
  readonly maxQueuedPerCaller: number
  /**
   * The share (percent) of the clock a caller may keep requests in their handlers, over time; past
   * it, its next turn waits until its use has fallen back. 0 turns the share off. @default 50
   */
  readonly maxBusyPercentPerCaller?: number
}

/** Seconds a caller refused for a full queue is told to wait: a turn lasts milliseconds. */
const QUEUE_FULL_RETRY_AFTER_S = 1

/** A request that holds its handler longer than this makes its caller's next ones start a loop turn apart. */
const SLOW_REQUEST_MS = 10

/** Busy milliseconds a caller may spend ahead of its share before it waits: a few slow requests in a row. */
const BUSY_BURST_MS = 150

interface Turns {
  running: number
  readonly waiting: (() => void)[]
  /** Busy milliseconds not yet paid back by the share: a leaky bucket that fills while `running` > 0. */
  debtMs: number
  settledAt: number
  /** A turn is being handed over; the next waits for the loop's next turn. */
  starting: boolean
  /** The caller's last request held its handler past SLOW_REQUEST_MS: its next ones start a loop turn apart. */
  slow: boolean
  /** When the caller's next turn may start (its debt back to the burst) or, idle, when it is forgotten. */
  timer: NodeJS.Timeout | undefined
}

export function limitRequestsInFlight(app: FastifyInstance, policy: InFlightPolicy): void {
  if (policy.maxPerCaller === 0) return
  const share = (policy.maxBusyPercentPerCaller ?? 50) / 100
  const callers = new Map<string, Turns>()

  /** Brings a caller's debt up to now: it grows while it has requests in their handlers and drains at its share. */
  const settle = (turns: Turns) => {
    const now = performance.now()
    const elapsed = now - turns.settledAt
    turns.settledAt = now
    if (share > 0) turns.debtMs = Math.max(0, turns.debtMs + (turns.running > 0 ? elapsed : 0) - share * elapsed)
  }

  const overShare = (turns: Turns) => share > 0 && turns.debtMs > BUSY_BURST_MS

  /**
   * Starts waiting requests while the caller has a free turn and is within its share. A caller idle
   * in debt is kept until the debt is paid, so that one sending a request at a time does not come
   * back with a clean slate each time.
   */
  const pump = (key: string, turns: Turns) => {
    settle(turns)
    clearTimeout(turns.timer)
    turns.timer = undefined
    if (turns.starting) return // the request being started pumps again once it has run
    while (turns.waiting.length > 0 && turns.running < policy.maxPerCaller && !overShare(turns)) {
      turns.running++
      const start = turns.waiting.shift()!
      // The handler starts on a later turn of the loop: a poll of the sockets reads every request
      // that has arrived (cheap) before any of them runs its statements (not cheap, and synchronous
      // on SQLite). Without it, each request ran to its answer before the next socket was read, so a
      // probe waited behind every request of a flood that had arrived first.
      if (!turns.slow) {
        setImmediate(start)
        continue
      }
      // A caller of slow requests starts them a loop turn apart, so the sockets are read between
      // any two of its statements. Not for cheap ones: that halved a single client's throughput.
      turns.starting = true
      setImmediate(() => {
        start()
        setImmediate(() => {
          turns.starting = false
          pump(key, turns)
        })
      })
      return
    }
    if (turns.running > 0) return // a release pumps again
    if (turns.waiting.length > 0) {
      turns.timer = setTimeout(pump, Math.ceil((turns.debtMs - BUSY_BURST_MS) / share), key, turns)
    } else if (turns.debtMs > 0) {
      turns.timer = setTimeout(pump, Math.ceil(turns.debtMs / share), key, turns)
      turns.timer.unref()
    } else if (callers.get(key) === turns) {
      callers.delete(key)
    }
  }

  app.addHook('preHandler', async (request, reply) => {
    const { config } = request.routeOptions
    if (config?.unmetered === true || config?.longLived === true || (config?.upgrades === true && isUpgradeRequest(request))) return
    const key = callerKey(request, request.caller ?? null)
    let turns = callers.get(key)
    if (turns === undefined) {
      turns = { running: 0, waiting: [], starting: false, slow: false, debtMs: 0, settledAt: performance.now(), timer: undefined }
      callers.set(key, turns)
    }
    settle(turns)
    // Requests waiting for a free turn (the first ones of the queue take the free turns on the loop's next turns).
    const queued = turns.waiting.length - Math.max(0, policy.maxPerCaller - turns.running)
    if (queued >= policy.maxQueuedPerCaller) {
      throw new AppError(
        'RATE_LIMITED',
        `Too many requests at once: ${policy.maxPerCaller} are handled at a time and ${policy.maxQueuedPerCaller} may wait. Retry in ${QUEUE_FULL_RETRY_AFTER_S} s.`,
        undefined,
        { retryAfterS: QUEUE_FULL_RETRY_AFTER_S },
      )
    }
    const held = turns
    await new Promise<void>((resolve) => {
      held.waiting.push(resolve)
      pump(key, held)
    })
    const startedAt = performance.now()
    let released = false
    const release = () => {
      if (released) return
      released = true
      settle(held)
      held.slow = held.settledAt - startedAt > SLOW_REQUEST_MS
      held.running--
      pump(key, held)
    }
    // The response closes when the answer has been sent, or when the client has gone (the request
    // itself is destroyed as soon as its body has been read, so it cannot say whether the client
    // left). One listener for both: onResponse and onRequestAbort hooks besides it cost two more
    // promises per request (docs/architecture.md, the hot path).
    reply.raw.once('close', release)
    if (request.raw.socket?.destroyed === true) release()
  })
}
