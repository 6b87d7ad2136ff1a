// The in-flight limit: requests in their handlers at once, scheduled fairly across callers. The rate
// limit counts requests over a window, so it lets a caller send its whole allowance at once;
// better-sqlite3 then runs their statements one after another on the event loop while every other
// client waits behind all of them (docs/security.md has the measurement). So a request's handler
// runs in a slot of the fair scheduler (src/limits/fair-scheduler.ts), keyed by caller (the user when signed
// in, else the client address, as the rate limit keys them): a caller alone may hold every slot;
// callers that contend share the slots by the handler time each has used, a newcomer going ahead
// of a greedy caller's backlog; after a slow request the next slot is handed out a loop turn
// apart, so sockets are read between any two slow statements; a caller's queue is bounded (429
// and Retry-After past it). Wall time in a handler, less others' work meanwhile, is what is
// measured, so on PostgreSQL time waiting on the pool counts too, and the global limit (the pool's
// size by default) shares the pool the same way. The route is the kind of work a caller's first
// request is expected to cost, before the caller is measured.
//
// Acquired once the body has been read (preHandler), so a slow upload holds no slot; not acquired
// by probes (config.unmetered), WebSocket sessions (an upgrade to a route that upgrades) or event
// streams (config.longLived): they live for hours and are bounded by the connection caps instead.
// Released when the handler's work ends (the answer is serialized: the first onSend hook), not when
// the client has taken the answer: a client that never reads would otherwise hold its slot, and
// sixteen such clients every slot. An answer too large for the socket's buffers waits on its client
// at most `sendTimeoutMs` without progress; then the connection is closed and the answer dropped.
import { setImmediate as nextLoopTurn } from 'node:timers/promises'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isUpgradeRequest } from './upgrade-requests.js'
import type { FairScheduler, ReleaseSlot } from '../limits/fair-scheduler.js'
import { callerKey } from '../limits/rate-limit.js'
import { type RouteConfig, routeConfigOf } from '../core/route-config-read.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Releases the request's slot of the scheduler, once its handler's work has ended; undefined when it holds none. */
    releaseSlot: ReleaseSlot | undefined
    /**
     * Runs work the request goes on doing once its handler has answered (an export's pages, read
     * as its client takes them) in a slot of its caller's, as its handler ran: counted to the
     * caller, and never more at once than the slots. `kind`: what the work is, for the scheduler's
     * expectation of what it costs. Without the in-flight limit, the work runs on the next loop turn.
     */
    inSlot<T>(kind: string, work: () => Promise<T>): Promise<T>
  }
}

export interface InFlightOptions {
  /** How long an answer may wait on a client that takes none of its bytes before the connection is closed. @default 10000 */
  readonly sendTimeoutMs?: number
}

/**
 * Answers up to this size are taken whole by the socket's buffers (the kernel's), and cost the
 * process nothing while the client reads them; a larger one may wait on its client.
 */
const BUFFERED_ANSWER_BYTES = 16 * 1024

/**
 * Work a request goes on doing after its handler (`request.inSlot`), in its caller's slots. One
 * piece at a time per answer, so it waits however many of its caller's do (unbounded, as a
 * WebSocket's operations do); it is shed as they are when the loop is behind, and the answer then
 * ends cut.
 */
export function scheduleLaterWork(app: FastifyInstance, scheduler: FairScheduler | undefined): void {
  app.decorateRequest('inSlot', function inSlot<T>(this: FastifyRequest, kind: string, work: () => Promise<T>): Promise<T> {
    // Without the scheduler, still a loop turn before it: the answer holds the loop for one piece at a time.
    if (scheduler === undefined) return nextLoopTurn().then(work)
    return scheduler.run(callerKey(this, this.caller ?? null), work, { kind, queued: 'unbounded' })
  })
}

export function limitRequestsInFlight(app: FastifyInstance, scheduler: FairScheduler, { sendTimeoutMs = 10_000 }: InFlightOptions = {}): void {
  app.decorateRequest('releaseSlot', undefined)
  app.addHook('preHandler', (request, reply, done) => {
    const config = routeConfigOf(request)
    if (config?.unmetered === true || config?.longLived === true || (config?.upgrades === true && isUpgradeRequest(request))) return done()
    scheduler.acquire(callerKey(request, request.caller ?? null), { kind: kindOf(request.method, config) }).then((releaseSlot) => {
      if (request.raw.socket?.destroyed === true) {
        // Gone while it waited: nobody would read the answer, and the work (a deep page's statement,
        // synchronous on SQLite) would hold the loop for nothing, in a slot that measured nothing.
        releaseSlot(true)
        reply.hijack()
        return
      }
      request.releaseSlot = releaseSlot
      // A reply that never reaches onSend (hijacked, or its client gone mid-handler) releases on close
      // (a response closes once; `on` spares once's wrapper, and a second release does nothing).
      reply.raw.on('close', () => releaseSlot())
      done()
    }, done)
  })
  // Synchronous, so the request path gains no promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    const release = request.releaseSlot
    if (release !== undefined) {
      request.releaseSlot = undefined
      release()
      if (isLarge(payload)) sendWithin(reply, sendTimeoutMs)
    }
    done(null, payload)
  })
}

/** A route's kind of work for the scheduler, `GET /users/:id`: made once per route and method, not per request. */
const kinds = new WeakMap<RouteConfig, { method: string; kind: string }>()

function kindOf(method: string, config: RouteConfig): string {
  const known = kinds.get(config)
  if (known?.method === method) return known.kind
  const kind = `${method} ${config.url}`
  kinds.set(config, { method, kind })
  return kind
}

function isLarge(payload: unknown): boolean {
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) return payload.length > BUFFERED_ANSWER_BYTES
  // A stream (a compressed answer, a file): its length is not known here.
  return payload !== null && payload !== undefined
}

/**
 * Closes the connection when its answer makes no progress for `ms`: the socket's timeout counts
 * from its last read or write, so a client that reads slowly but steadily is not cut. Once the
 * answer is sent, Node gives the socket its keep-alive timeout again.
 */
function sendWithin(reply: FastifyReply, ms: number): void {
  const response = reply.raw
  response.setTimeout(ms, () => {
    reply.log.info({ sendTimeoutMs: ms }, 'answer not taken by its client in time: connection closed')
    response.socket?.destroy()
  })
}
