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
// Taken once the body has been read (preHandler), so a slow upload holds no turn; not taken by
// probes (config.unmetered), WebSocket upgrades or event streams (config.longLived): they live for
// hours and are bounded by the connection caps instead.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
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
}

/** Seconds a caller refused for a full queue is told to wait: a turn lasts milliseconds. */
const QUEUE_FULL_RETRY_AFTER_S = 1

interface Turns {
  running: number
  readonly waiting: (() => void)[]
}

export function limitRequestsInFlight(app: FastifyInstance, policy: InFlightPolicy): void {
  if (policy.maxPerCaller === 0) return
  const callers = new Map<string, Turns>()
  const releases = new WeakMap<FastifyRequest, () => void>()

  app.addHook('preHandler', async (request, reply) => {
    const { config } = request.routeOptions
    if (config?.unmetered === true || config?.longLived === true || (request.raw as { upgrade?: boolean }).upgrade === true) return
    const key = callerKey(request, request.caller ?? null)
    let turns = callers.get(key)
    if (turns === undefined) {
      turns = { running: 0, waiting: [] }
      callers.set(key, turns)
    }
    if (turns.running < policy.maxPerCaller) {
      turns.running++
      // The handler starts on a later turn of the loop: a poll of the sockets reads every request
      // that has arrived (cheap) before any of them runs its statements (not cheap, and synchronous
      // on SQLite). Without it, each request ran to its answer before the next socket was read, so
      // the queue never formed and a probe waited behind every request of the flood that arrived first.
      await new Promise<void>((resolve) => setImmediate(resolve))
    } else {
      if (turns.waiting.length >= policy.maxQueuedPerCaller) {
        throw new AppError(
          'RATE_LIMITED',
          `Too many requests at once: ${policy.maxPerCaller} are handled at a time and ${policy.maxQueuedPerCaller} may wait. Retry in ${QUEUE_FULL_RETRY_AFTER_S} s.`,
          undefined,
          { retryAfterS: QUEUE_FULL_RETRY_AFTER_S },
        )
      }
      // The turn is handed over with `running` unchanged.
      await new Promise<void>((resolve) => turns.waiting.push(resolve))
    }
    const held = turns
    let released = false
    const release = () => {
      if (released) return
      released = true
      const next = held.waiting.shift()
      if (next !== undefined) {
        setImmediate(next)
        return
      }
      held.running--
      if (held.running === 0 && callers.get(key) === held) callers.delete(key)
    }
    releases.set(request, release)
    // Whichever comes first: the answer sent, the client gone (the request itself is destroyed
    // as soon as its body has been read, so it is the socket that says whether the client left).
    reply.raw.once('close', release)
    if (request.raw.socket?.destroyed === true) release()
  })
  app.addHook('onResponse', async (request) => releases.get(request)?.())
  app.addHook('onRequestAbort', async (request) => releases.get(request)?.())
}
