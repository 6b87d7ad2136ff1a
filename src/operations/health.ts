// Liveness and readiness, for load balancers and orchestrators. GET /health: the process answers
// (nothing else is asked, so a slow database never gets a live instance restarted), with the event
// loop's delay and whether work is being shed for it (it is answered then too). GET /ready:
// the database answers a trivial query within READY_TIMEOUT_MS, else 503 with Retry-After (take
// this instance out of rotation). Redis is reported, never decisive: when it goes away every
// instance loses it at once, and taking them all out would turn a degraded service into none.
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { Db } from '../db/create-database.js'

export const HEALTH_PATH = '/health'
export const READY_PATH = '/ready'

/** What /ready reports of Redis: nothing when it is not configured. */
export type RedisState = 'up' | 'down' | undefined

/** The event loop as /health reports it: its delay in milliseconds, and whether work is shed for it. */
export interface LoopState {
  delayMs: number
  shedding: boolean
}

export interface HealthOptions {
  db: Db
  loop(): LoopState
  timeoutMs: number
  redis(): RedisState
}

/** Seconds a load balancer is told to wait before asking an instance that is not ready again. */
const NOT_READY_RETRY_AFTER_S = 5

export function healthRoutes(app: FastifyInstance, options: HealthOptions): void {
  // Probes come every few seconds: outside the rate limit, and logged only at debug.
  const config = { access: 'public' as const, unmetered: true, quietLog: true }
  app.get(HEALTH_PATH, { config }, async (_request, reply) => {
    reply.header('cache-control', 'no-store')
    return { status: 'ok', loop: options.loop() }
  })
  app.get(READY_PATH, { config }, async (_request, reply) => {
    const started = performance.now()
    const answered = sql`select 1`.execute(options.db).then(
      () => true,
      () => false,
    )
    const database = await Promise.race([answered, sleep(options.timeoutMs, false, { ref: false })])
    const ms = Math.round((performance.now() - started) * 10) / 10
    const redis = options.redis()
    reply.header('cache-control', 'no-store')
    if (!database) reply.code(503).header('retry-after', NOT_READY_RETRY_AFTER_S)
    return {
      status: !database ? 'unavailable' : redis === 'down' ? 'degraded' : 'ok',
      checks: { database: { status: database ? 'up' : 'down', ms }, ...(redis === undefined ? {} : { redis: { status: redis } }) },
    }
  })
}
