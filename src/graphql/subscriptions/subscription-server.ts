// GraphQL subscriptions, over two transports that share everything but the wire:
//   - WebSocket on /graphql, the graphql-transport-ws protocol (websocket-transport.ts);
//   - Server-Sent Events on /graphql/stream, the graphql-sse protocol's distinct connections
//     mode (sse-transport.ts).
// Both parse and validate with the HTTP endpoint's rules and limits, run the same resolvers with
// the same context, and format errors the same way (operation-preparation.ts). This module wires
// what they share: how many connections a caller holds (connection-counter.ts), whose rights each
// connection follows (ConnectionRights), the subscription budget, and the count of subscribers
// dropped for falling behind (slow-consumers.ts).
import type { FastifyInstance } from 'fastify'
import type { GraphQLSchema, ValidationRule } from 'graphql'
import type { Authenticate, CurrentCallers } from '../../core/caller.js'
import type { CallerTopics } from '../../core/caller-changed.js'
import type { GraphQLConfig } from '../../config.js'
import type { Events } from '../../events/events.js'
import type { RateLimitConsumer } from '../../limits/rate-limit.js'
import { ConnectionRights } from '../connection-rights.js'
import { SubscriptionBudget } from '../subscription-budget.js'
import { ConnectionCounter } from './connection-counter.js'
import { OperationPreparation } from './operation-preparation.js'
import { SlowConsumers } from './slow-consumers.js'
import { sseTransport } from './sse-transport.js'
import { webSocketTransport } from './websocket-transport.js'

export { STREAM_PATH } from './sse-transport.js'

export interface SubscriptionServerOptions {
  schema: () => GraphQLSchema
  limits: GraphQLConfig['subscriptions']
  /** The endpoint's own rules (depth, cost, aliases, directives, introspection), beside graphql's. */
  validationRules: readonly ValidationRule[]
  maxTokens: number
  authenticate: Authenticate
  currentCallers: CurrentCallers
  consumeRateLimit: RateLimitConsumer | undefined
  /** Open subscriptions, as the events adapter counts them. */
  activeSubscriptions: () => number
  /** Where callerChanged is heard: a connection's rights follow its caller (ConnectionRights). */
  events: Pick<Events<CallerTopics>, 'subscribe'>
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
  const budget = new SubscriptionBudget(limits)
  app.addHook('onClose', async () => {
    rights.close()
    budget.close()
  })
  const operations = new OperationPreparation({ schema: options.schema, validationRules: options.validationRules, maxTokens: options.maxTokens, budget })
  const shared = { schema: options.schema, limits, counter, rights, operations, slowConsumers }

  const { wsHandler, closeSockets } = webSocketTransport(app, { ...shared, authenticate: options.authenticate, consumeRateLimit: options.consumeRateLimit })
  sseTransport(app, shared)

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
