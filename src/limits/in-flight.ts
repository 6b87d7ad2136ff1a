// Requests in flight, scheduled fairly across callers. The rate limit counts requests over a window,
// so it lets a caller send its whole allowance at once; better-sqlite3 then runs their statements
// one after another on the event loop while every other client waits behind all of them
// (bench:abuse: 300 deep pages sent together held GET /health for 10 s). So a request's handler
// runs in a turn of the fair scheduler (fair-scheduler.ts), keyed by caller (the user when signed
// in, else the client address, as the rate limit keys them): a caller alone has every turn; callers
// that contend share the turns by the handler time each has used, a newcomer going ahead of a
// greedy caller's backlog; turns after a slow one are handed out a loop turn apart, so sockets are
// read between any two slow statements; a caller's queue is bounded (429 and Retry-After past it).
// Wall time in a handler is what is measured (the loop time is not observable per request), so on
// PostgreSQL time waiting on the pool counts too, and the global limit (the pool's size by default)
// shares the pool the same way.
//
// Taken once the body has been read (preHandler), so a slow upload holds no turn; not taken by
// probes (config.unmetered), WebSocket sessions (an upgrade to a route that upgrades) or event streams
// (config.longLived): they live for hours and are bounded by the connection caps instead.
import type { FastifyInstance } from 'fastify'
import { isUpgradeRequest } from '../http/upgrade-requests.js'
import type { FairScheduler } from './fair-scheduler.js'
import { callerKey } from './rate-limit.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The scheduler requests take their turns from, for other work to take its turns from too
     * (`scheduler.run(callerKey, work)`); undefined when HTTP_MAX_IN_FLIGHT=0.
     */
    scheduler: FairScheduler | undefined
  }
}

export function limitRequestsInFlight(app: FastifyInstance, scheduler: FairScheduler): void {
  app.addHook('preHandler', async (request, reply) => {
    const { config } = request.routeOptions
    if (config?.unmetered === true || config?.longLived === true || (config?.upgrades === true && isUpgradeRequest(request))) return
    const endTurn = await scheduler.turn(callerKey(request, request.caller ?? null))
    // The response closes when the answer has been sent, or when the client has gone (the request
    // itself is destroyed as soon as its body has been read, so it cannot say whether the client
    // left). One listener for both: onResponse and onRequestAbort hooks besides it cost two more
    // promises per request (docs/architecture.md, the hot path).
    if (request.raw.socket?.destroyed === true) {
      // Gone while it waited: nobody would read the answer, and the work (a deep page's statement,
      // synchronous on SQLite) would hold the loop for nothing, in a turn that measured nothing.
      endTurn(true)
      reply.hijack()
      return
    }
    reply.raw.once('close', () => endTurn())
  })
}
