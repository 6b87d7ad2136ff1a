// The in-flight limit: requests in their handlers at once, scheduled fairly across callers. The rate
// limit counts requests over a window, so it lets a caller send its whole allowance at once;
// better-sqlite3 then runs their statements one after another on the event loop while every other
// client waits behind all of them (docs/security.md has the measurement). So a request's handler
// runs in a slot of the fair scheduler (fair-scheduler.ts), keyed by caller (the user when signed
// in, else the client address, as the rate limit keys them): a caller alone may hold every slot;
// callers that contend share the slots by the handler time each has used, a newcomer going ahead
// of a greedy caller's backlog; after a slow request the next slot is handed out a loop turn
// apart, so sockets are read between any two slow statements; a caller's queue is bounded (429
// and Retry-After past it). Wall time in a handler is what is measured (the loop time is not
// observable per request), so on PostgreSQL time waiting on the pool counts too, and the global
// limit (the pool's size by default) shares the pool the same way.
//
// Acquired once the body has been read (preHandler), so a slow upload holds no slot; not acquired
// by probes (config.unmetered), WebSocket sessions (an upgrade to a route that upgrades) or event
// streams (config.longLived): they live for hours and are bounded by the connection caps instead.
import type { FastifyInstance } from 'fastify'
import { isUpgradeRequest } from '../http/upgrade-requests.js'
import type { FairScheduler } from './fair-scheduler.js'
import { callerKey } from './rate-limit.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The scheduler requests acquire their slots from, for other work to acquire its slots from
     * too (`scheduler.run(callerKey, work)`); undefined when HTTP_MAX_IN_FLIGHT=0.
     */
    scheduler: FairScheduler | undefined
  }
}

export function limitRequestsInFlight(app: FastifyInstance, scheduler: FairScheduler): void {
  app.addHook('preHandler', async (request, reply) => {
    const { config } = request.routeOptions
    if (config?.unmetered === true || config?.longLived === true || (config?.upgrades === true && isUpgradeRequest(request))) return
    const releaseSlot = await scheduler.acquire(callerKey(request, request.caller ?? null))
    // The response closes when the answer has been sent, or when the client has gone (the request
    // itself is destroyed as soon as its body has been read, so it cannot say whether the client
    // left). One listener for both: onResponse and onRequestAbort hooks besides it cost two more
    // promises per request (docs/architecture.md, the hot path).
    if (request.raw.socket?.destroyed === true) {
      // Gone while it waited: nobody would read the answer, and the work (a deep page's statement,
      // synchronous on SQLite) would hold the loop for nothing, in a slot that measured nothing.
      releaseSlot(true)
      reply.hijack()
      return
    }
    reply.raw.once('close', () => releaseSlot())
  })
}
