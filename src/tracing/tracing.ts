// What tracing gives the app when it is on (src/app.ts hands each part its instrumentation): the
// types alone, so that the module that may load it (start-tracing.ts) and the one that makes it
// (create-tracing.ts) both name it without importing each other.
import type { FastifyInstance } from 'fastify'
import type { DatabaseLocation } from '../config.js'
import type { Database } from '../db/create-database.js'
import type { EventHeaders, Events } from '../events/events.js'
import type { StageTracer } from '../graphql/pipeline/operation-pipeline.js'
import type { OperationTracer } from '../graphql/subscriptions/operation-preparation.js'
import type { CommandObserver } from '../redis/connection.js'

export interface Tracing {
  /** Server spans for every request of `app` (its first hooks: register before any other). */
  traceRequests(app: FastifyInstance): void
  /** A span per SQL statement `database` runs inside a trace. */
  traceStatements(database: Database, location: DatabaseLocation): void
  /** A span per Redis command sent inside a trace, for createRedisConnection's `observe`. */
  readonly redisCommands: CommandObserver
  /** `events` with a span around each publish, whose trace its deliveries continue. */
  traceEvents<M extends object>(events: Events<M>): Events<M>
  /** For the Redis events adapter: the trace context beside each event. */
  readonly eventHeaders: EventHeaders
  /** GraphQL's stages, operations on connections, deliveries. */
  readonly graphql: StageTracer & OperationTracer
  /** Exports every span ended so far. */
  flush(): Promise<void>
  /** Exports what is left and stops: when the app closes. */
  close(): Promise<void>
}

export interface TracingOptions {
  /** The events adapter, as messaging.system names it: 'redis' or 'memory'. */
  eventsSystem: string
}
