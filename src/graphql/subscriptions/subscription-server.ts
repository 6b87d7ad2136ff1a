// GraphQL subscriptions, over two transports that share everything but the wire:
//   - WebSocket on /graphql, the graphql-transport-ws protocol (websocket-transport.ts);
//   - Server-Sent Events on /graphql/stream, the graphql-sse protocol's distinct connections
//     mode (sse-transport.ts).
// Both take each operation through the operation pipeline the HTTP endpoint uses (trusted
// documents, limits, the rate limit's points: ../pipeline/operation-pipeline.ts), run the same resolvers
// with the same context, and format errors the same way (operation-preparation.ts). This module wires
// what they share: how many connections a caller holds (connection-counter.ts), whose rights each
// connection follows (ConnectionRights), the subscription budget, and the count of subscribers
// dropped for falling behind (slow-consumers.ts).
import type { FastifyInstance } from 'fastify'
import type { GraphQLSchema } from 'graphql'
import type { Authenticate, CurrentCallers } from '../../core/caller.js'
import type { CallerTopics } from '../../core/caller-changed.js'
import type { GraphQLConfig } from '../../config.js'
import type { Events } from '../../events/events.js'
import type { RateLimitCharger, RateLimitConsumer } from '../../limits/rate-limit.js'
import type { ListSizes } from '../document-limits/cost-measure.js'
import type { OperationPipeline } from '../pipeline/operation-pipeline.js'
import { ConnectionRights } from './connection-rights.js'
import { SubscriptionBudget } from './subscription-budget.js'
import { ConnectionCounter } from './connection-counter.js'
import { OperationPreparation, type OperationPreparationOptions, type OperationTracer } from './operation-preparation.js'
import { SlowConsumers } from './slow-consumers.js'
import { sseTransport } from './sse-transport.js'
import { webSocketTransport } from './websocket-transport.js'

export { STREAM_PATH } from './sse-transport.js'

export interface SubscriptionServerOptions {
  schema: () => GraphQLSchema
  limits: GraphQLConfig['subscriptions']
  /** The stages every operation goes through, as over HTTP: trusted documents, limits, charge, validation. */
  pipeline: OperationPipeline
  /** The page sizes the cost model counts a list by (a subscription's cost is claimed from its caller's budget). */
  listSizes: ListSizes
  /** Charges an event stream's request its operation's points (it took 1 on arrival, as any HTTP request). */
  chargeRateLimit: RateLimitCharger | undefined
  authenticate: Authenticate
  currentCallers: CurrentCallers
  consumeRateLimit: RateLimitConsumer | undefined
  /** Open subscriptions, as the events adapter counts them. */
  activeSubscriptions: () => number
  /** Where callerChanged is heard: a connection's rights follow its caller (ConnectionRights). */
  events: Pick<Events<CallerTopics>, 'subscribe'>
  /** Runs a query's or mutation's execution in a slot of its caller's, as HTTP requests acquire theirs (OperationPreparation). */
  schedule: OperationPreparationOptions['schedule']
  /** The clock of the delivery windows (SubscriptionBudget). @default Date.now */
  now?: () => number
  /** Spans for each operation and delivery, when tracing is on. */
  tracer?: OperationTracer
}

/** What the service counts, for tests and (later) metrics. */
export interface SubscriptionStats {
  /** Open WebSockets and event streams. */
  readonly connections: number
  /** Subscriptions receiving events. */
  readonly subscriptions: number
  /** Subscribers dropped because they fell more than maxPendingEvents behind. */
  readonly droppedSlowConsumers: number
}

/**
 * Registers the SSE route and returns the WebSocket handler (for the GET /graphql route's
 * wsHandler), the shutdown step for WebSockets, and the stats.
 */
export function subscriptionServer(app: FastifyInstance, options: SubscriptionServerOptions) {
  const { limits } = options
  const counter = new ConnectionCounter(limits.maxConnectionsPerCaller, limits.maxConnections)
  const slowConsumers = new SlowConsumers(limits.maxPendingEvents)
  const rights = new ConnectionRights({ events: options.events, currentCallers: options.currentCallers, log: app.log })
  const budget = new SubscriptionBudget(limits, options.now)
  app.addHook('onClose', async () => {
    rights.close()
    budget.close()
  })
  const operations = new OperationPreparation({
    schema: options.schema,
    pipeline: options.pipeline,
    listSizes: options.listSizes,
    budget,
    schedule: options.schedule,
    consumeRateLimit: options.consumeRateLimit,
    tracer: options.tracer,
  })
  const shared = { schema: options.schema, limits, counter, rights, operations, slowConsumers, pipeline: options.pipeline }

  const { wsHandler, closeSockets } = webSocketTransport(app, { ...shared, authenticate: options.authenticate, consumeRateLimit: options.consumeRateLimit })
  sseTransport(app, { ...shared, chargeRateLimit: options.chargeRateLimit })

  const stats: SubscriptionStats = {
    get connections() {
      return counter.total
    },
    get subscriptions() {
      return options.activeSubscriptions()
    },
    get droppedSlowConsumers() {
      return slowConsumers.dropped
    },
  }
  return { wsHandler, closeSockets, stats }
}
