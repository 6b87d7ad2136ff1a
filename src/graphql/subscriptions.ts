// GraphQL subscriptions, over two transports that share everything but the wire:
//   - WebSocket on /graphql, the graphql-transport-ws protocol, by the reference server of the
//     graphql-ws package (on @fastify/websocket);
//   - Server-Sent Events on /graphql/stream, the graphql-sse protocol's distinct connections
//     mode, by the graphql-sse package.
// Both parse and validate with the HTTP endpoint's rules and limits, run the same resolvers with
// the same context, and format errors the same way. Around them: who is calling (the upgrade's
// Authorization header or the connection_init payload), how many connections a caller holds, how
// many subscriptions a WebSocket carries, the rate limit on subscribe messages, and the bounded
// queue that drops a subscriber too slow to keep up.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type ExecutionArgs, GraphQLError, type GraphQLFormattedError, type GraphQLSchema, parse, specifiedRules, validate, type ValidationRule } from 'graphql'
import { CloseCode, type Context as WsContext } from 'graphql-ws'
import { makeHandler } from 'graphql-ws/use/@fastify/websocket'
import { createHandler as createSseHandler } from 'graphql-sse/lib/use/fastify'
import type { WebSocket } from 'ws'
import { normalizeIP } from '@fastify/rate-limit'
import type { Caller } from '../caller.js'
import type { GraphQLConfig } from '../config.js'
import { AppError, isAppError } from '../errors.js'
import type { RateLimitConsumer } from '../limits/rate-limit.js'
import type { TokensService } from '../tokens/tokens.service.js'
import { type GraphQLContext, Loaders } from './context.js'
import { formatError } from './errors.js'

/** RFC 6455 §7.4.1: the subscriber broke a policy of the server (here: it fell too far behind). */
export const CLOSE_TOO_SLOW = 1008
/** RFC 6455: the server is going away (shutting down). */
export const CLOSE_GOING_AWAY = 1001
/** Application range: the caller holds too many connections (as HTTP 429). */
export const CLOSE_TOO_MANY_CONNECTIONS = 4429

export const STREAM_PATH = '/graphql/stream'

export interface SubscriptionServerOptions {
  schema: () => GraphQLSchema
  limits: GraphQLConfig['subscriptions']
  /** The endpoint's own rules (depth, cost, aliases, directives, introspection), beside graphql's. */
  validationRules: readonly ValidationRule[]
  maxTokens: number
  tokens: TokensService
  consumeRateLimit: RateLimitConsumer | undefined
  /** Open subscriptions, as the events adapter counts them. */
  activeSubscriptions: () => number
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

/** graphql-sse types its context as a record; ours is a GraphQLContext. */
type SseContext = GraphQLContext & Record<PropertyKey, unknown>

interface SocketExtra {
  socket: WebSocket
  request: FastifyRequest
  caller?: Caller | null
}

/** An error already in the service's shape, sent as it is by graphql-ws. */
class FormattedError extends GraphQLError {
  constructor(readonly formatted: GraphQLFormattedError) {
    super(formatted.message)
  }

  override toJSON(): GraphQLFormattedError {
    return this.formatted
  }
}

/** Open connections per caller (user, or client address when anonymous). */
class ConnectionCounter {
  private readonly open = new Map<string, number>()
  total = 0

  constructor(private readonly max: number) {}

  acquire(key: string): boolean {
    const count = this.open.get(key) ?? 0
    if (count >= this.max) return false
    this.open.set(key, count + 1)
    this.total++
    return true
  }

  release(key: string): void {
    const count = (this.open.get(key) ?? 1) - 1
    if (count <= 0) this.open.delete(key)
    else this.open.set(key, count)
    this.total--
  }
}

const callerKey = (request: FastifyRequest, caller: Caller | null): string =>
  caller === null ? `ip:${normalizeIP(request.ip, 64)}` : `user:${caller.userId}`

/**
 * Registers the WebSocket handler (as the GET /graphql route's wsHandler, returned) and the
 * SSE route; returns the stats.
 */
export function subscriptionServer(app: FastifyInstance, options: SubscriptionServerOptions) {
  const { limits } = options
  const counter = new ConnectionCounter(limits.maxConnectionsPerCaller)
  let droppedSlowConsumers = 0
  const openStreams = new Set<FastifyReply>()

  /** Parses and validates a subscribe request as the HTTP endpoint would; the execution arguments, or the errors. */
  function prepare(request: FastifyRequest, payload: unknown, context: GraphQLContext): ExecutionArgs | FormattedError[] {
    const refuse = (message: string) => [new FormattedError({ message, extensions: { code: 'BAD_REQUEST' } })]
    const params = (typeof payload === 'object' && payload !== null ? payload : {}) as Record<string, unknown>
    const { query, variables, operationName } = params
    if (typeof query !== 'string' || query.trim() === '') return refuse('The subscription needs a query (a GraphQL document)')
    if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return refuse('variables must be an object')
    if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return refuse('operationName must be a string')
    let document
    try {
      document = parse(query, { maxTokens: options.maxTokens })
    } catch (error) {
      return [new FormattedError(formatError(error instanceof GraphQLError ? error : new GraphQLError(String(error)), request))]
    }
    const errors = validate(options.schema(), document, [...specifiedRules, ...options.validationRules])
    if (errors.length > 0) return errors.map((error) => new FormattedError(formatError(error, request)))
    return {
      schema: options.schema(),
      document,
      variableValues: (variables ?? undefined) as Record<string, unknown> | undefined,
      operationName: (operationName ?? undefined),
      contextValue: context,
    }
  }

  const formatResult = <R extends { errors?: readonly GraphQLError[] }>(request: FastifyRequest, result: R) =>
    result.errors === undefined ? undefined : { ...result, errors: result.errors.map((error) => formatError(error, request)) }

  const wsHandler = makeHandler(
    {
      schema: options.schema(),
      connectionInitWaitTimeout: limits.initTimeoutMs,

      onConnect: async (ctx: WsContext<Record<string, unknown> | undefined, SocketExtra>) => {
        const { socket, request } = ctx.extra
        const unauthorized = (message: string) => {
          socket.close(CloseCode.Unauthorized, message.slice(0, 120))
          return false
        }
        if (request.authenticationError !== null) return unauthorized(request.authenticationError.message)
        let caller = request.caller
        const params = ctx.connectionParams ?? {}
        const authorization = params.authorization ?? params.Authorization
        if (authorization !== undefined) {
          if (typeof authorization !== 'string') return unauthorized('connection_init authorization must be "Bearer <token>"')
          try {
            caller = await options.tokens.authenticate(authorization)
          } catch (error) {
            if (isAppError(error)) return unauthorized(error.message)
            throw error
          }
        }
        const key = callerKey(request, caller)
        if (!counter.acquire(key)) {
          socket.close(CLOSE_TOO_MANY_CONNECTIONS, `At most ${limits.maxConnectionsPerCaller} connections per caller`)
          return false
        }
        socket.once('close', () => counter.release(key))
        // The connection's caller is the one the rate limiter counts its messages against.
        request.caller = caller
        ctx.extra.caller = caller
        return true
      },

      onSubscribe: async (ctx: WsContext<Record<string, unknown> | undefined, SocketExtra>, _id, payload) => {
        const { socket, request } = ctx.extra
        const caller = ctx.extra.caller ?? null
        if (Object.keys(ctx.subscriptions).length > limits.maxPerConnection) {
          return [new FormattedError({ message: `At most ${limits.maxPerConnection} subscriptions per connection`, extensions: { code: 'BAD_REQUEST' } })]
        }
        const verdict = await options.consumeRateLimit?.(request)
        if (verdict !== undefined && !verdict.allowed) {
          const message = `Too many requests: ${verdict.max} per ${verdict.windowS} s. Retry in ${verdict.retryAfterS} s.`
          return [new FormattedError({ message, extensions: { code: 'RATE_LIMITED', retryAfter: verdict.retryAfterS } })]
        }
        return prepare(request, payload, {
          caller,
          loaders: new Loaders(caller),
          stream: {
            maxPending: limits.maxPendingEvents,
            onOverflow: () => {
              droppedSlowConsumers++
              request.log.warn({ maxPendingEvents: limits.maxPendingEvents }, 'subscriber too slow: dropped')
              socket.close(CLOSE_TOO_SLOW, `Too slow: more than ${limits.maxPendingEvents} events undelivered`)
            },
          },
        })
      },

      onNext: (ctx: WsContext<Record<string, unknown> | undefined, SocketExtra>, _id, _payload, _args, result) => formatResult(ctx.extra.request, result),
    },
    limits.keepAliveMs,
  )

  const sseHandler = createSseHandler<SseContext>({
    schema: options.schema(),
    // Distinct connections mode only: no stream reservations (tokens) to hold.
    authenticate: () => null,
    onSubscribe: (req, params) => {
      const request = req.raw
      const reply = req.context.reply
      const caller = request.caller
      const prepared = prepare(request, params, {
        caller,
        loaders: new Loaders(caller),
        stream: {
          maxPending: limits.maxPendingEvents,
          onOverflow: () => {
            droppedSlowConsumers++
            request.log.warn({ maxPendingEvents: limits.maxPendingEvents }, 'subscriber too slow: dropped')
            reply.raw.destroy()
          },
        },
      })
      if (!Array.isArray(prepared)) return prepared as ExecutionArgs & { contextValue: SseContext }
      // Refused before it started: a 400 with the errors, like the HTTP endpoint's.
      return [JSON.stringify({ errors: prepared.map((error) => error.formatted) }), { status: 400, statusText: 'Bad Request', headers: { 'content-type': 'application/json; charset=utf-8' } }]
    },
    onNext: (_ctx, req, result) => formatResult(req.raw, result as { errors?: readonly GraphQLError[] }),
  })

  app.route({
    method: ['GET', 'POST'],
    url: STREAM_PATH,
    config: { access: 'public' },
    handler: async (request, reply) => {
      if (request.headers.accept !== 'text/event-stream') {
        throw new AppError('NOT_ACCEPTABLE', 'This endpoint streams text/event-stream (graphql-sse, distinct connections mode)')
      }
      const key = callerKey(request, request.caller)
      if (!counter.acquire(key)) {
        throw new AppError('RATE_LIMITED', `At most ${limits.maxConnectionsPerCaller} connections per caller`)
      }
      reply.hijack()
      openStreams.add(reply)
      try {
        await sseHandler(request, reply)
      } finally {
        openStreams.delete(reply)
        counter.release(key)
      }
    },
  })

  // Going away: event streams end (their clients reconnect elsewhere); WebSockets are closed
  // with 1001 by @fastify/websocket's preClose (see graphql-routes.ts).
  app.addHook('preClose', async () => {
    for (const reply of openStreams) reply.raw.end()
  })

  const stats: SubscriptionStats = {
    get connections() {
      return counter.total
    },
    get subscriptions() {
      return options.activeSubscriptions()
    },
    get droppedSlowConsumers() {
      return droppedSlowConsumers
    },
  }
  return { wsHandler, stats }
}
