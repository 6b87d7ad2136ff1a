// GraphQL subscriptions, over two transports that share everything but the wire:
//   - WebSocket on /graphql, the graphql-transport-ws protocol, by the protocol server of the
//     graphql-ws package (`makeServer`) on @fastify/websocket's sockets;
//   - Server-Sent Events on /graphql/stream, the graphql-sse protocol's distinct connections
//     mode, by the graphql-sse package's handler.
// Both parse and validate with the HTTP endpoint's rules and limits, run the same resolvers with
// the same context, and format errors the same way. Around them: who is calling (the upgrade's
// Authorization header or the connection_init payload), how many connections a caller holds, how
// many subscriptions a WebSocket carries, the rate limit on subscribe messages, and the bounded
// queue that drops a subscriber too slow to keep up.
//
// The glue between the packages and Fastify is ours (about what their adapters are), for three
// things theirs do not do: a client's protocol fault closes with 4400 and is logged through the
// request's logger (not 4500 and console.error); an event stream applies back-pressure, so a
// slow SSE client fills our bounded queue instead of an unbounded one inside graphql-sse; and a
// stream's connection slot is released when its socket closes, whatever the handler does.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  type ExecutionArgs,
  getOperationAST,
  GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  OperationTypeNode,
  parse,
  specifiedRules,
  subscribe,
  validate,
  type ValidationRule,
} from 'graphql'
import { createHandler as createSseHandler, print as printStreamEvent } from 'graphql-sse'
import { CloseCode, type Context as WsContext, makeServer } from 'graphql-ws'
import type { WebSocket } from 'ws'
import type { Authenticate, CurrentCallers } from '../../core/caller.js'
import type { GraphQLConfig } from '../../config.js'
import { databaseAppError } from '../../db/database-errors.js'
import { AppError, isAppError } from '../../errors.js'
import type { Events } from '../../events/events.js'
import { callerKey, type RateLimitConsumer } from '../../limits/rate-limit.js'
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../collections/pagination.js'
import { ConnectionRights, REVOKED_MESSAGE, type Seat } from '../connection-rights.js'
import { isReservation, type Reservation, SubscriptionBudget } from '../subscription-budget.js'
import { type GraphQLContext, Loaders } from '../context.js'
import { formatError } from '../errors.js'
import { operationCosts } from '../document-limits/cost-measure.js'
import { parserLimitError } from '../document-limits/parser-guard.js'
import { chooseOperation, type OperationParams, readParams } from '../request-params.js'

/** RFC 6455 §7.4.1: the subscriber broke a policy of the server (here: it fell too far behind). */
const CLOSE_TOO_SLOW = 1008
/** RFC 6455: the server is going away (shutting down). */
const CLOSE_GOING_AWAY = 1001
/** RFC 6455 (IANA registry): try again later — the caller holds too many connections now. */
const CLOSE_TRY_AGAIN_LATER = 1013

export const STREAM_PATH = '/graphql/stream'

/** The page sizes the cost model counts a list by (as the HTTP endpoint's). */
const LIST_SIZES = { defaultLimit: DEFAULT_PAGE_LIMIT, maxLimit: MAX_PAGE_LIMIT }

/**
 * Retry-After on an event stream refused for the connections already open: a slot frees when one
 * of them closes, which nothing here can foresee; a short, fixed hint.
 */
const CONNECTION_RETRY_AFTER_S = 5

/** How long a socket told to go away may take to close before it is cut. */
const GOING_AWAY_GRACE_MS = 1000

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
  events: Pick<Events, 'subscribe'>
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

interface SocketExtra {
  socket: WebSocket
  request: FastifyRequest
  /** The connection's caller as it stands now (set once connection_init is accepted). */
  seat?: Seat
  /** The Authorization value the connection was opened with, checked again on each subscribe. */
  authorization?: string
  /** Its subscriptions' claims on the caller's budget, released with the socket at the latest. */
  reserved: Set<Reservation>
}

type SocketContext = WsContext<Record<string, unknown> | undefined, SocketExtra>

/** graphql-sse types its context as a record; ours is a GraphQLContext. */
type SseContext = GraphQLContext & Record<PropertyKey, unknown>

/** An error already in the service's shape, sent as it is by graphql-ws. */
class FormattedError extends GraphQLError {
  constructor(readonly formatted: GraphQLFormattedError) {
    super(formatted.message)
  }

  override toJSON(): GraphQLFormattedError {
    return this.formatted
  }
}

const badRequest = (message: string) => new FormattedError({ message, extensions: { code: 'BAD_REQUEST' } })
const revokedError = () => new FormattedError({ message: REVOKED_MESSAGE, extensions: { code: 'UNAUTHENTICATED' } })

/** The context of one operation on a long-lived connection: its caller is read from the seat each time. */
function connectionContext(seat: Seat, stream: GraphQLContext['stream']): GraphQLContext {
  return {
    get caller() {
      return seat.caller
    },
    loaders: new Loaders(() => seat.caller),
    stream,
  }
}
const internalError = () => new FormattedError({ message: 'Internal server error', extensions: { code: 'INTERNAL_ERROR' } })

/** Open connections per caller (user, or client address when anonymous). */
class ConnectionCounter {
  private readonly open = new Map<string, number>()
  total = 0

  constructor(
    private readonly maxPerCaller: number,
    private readonly maxTotal: number,
  ) {}

  /**
   * Takes a slot for `key`; the returned release frees it (once, however often it is called), or
   * which limit is reached: the caller's, or the instance's.
   */
  acquire(key: string): (() => void) | 'caller' | 'instance' {
    if (this.total >= this.maxTotal) return 'instance'
    const count = this.open.get(key) ?? 0
    if (count >= this.maxPerCaller) return 'caller'
    this.open.set(key, count + 1)
    this.total++
    let released = false
    return () => {
      if (released) return
      released = true
      const left = (this.open.get(key) ?? 1) - 1
      if (left <= 0) this.open.delete(key)
      else this.open.set(key, left)
      this.total--
    }
  }
}

/**
 * Registers the SSE route and returns the WebSocket handler (for the GET /graphql route's
 * wsHandler), the shutdown step for WebSockets, and the stats.
 */
export function subscriptionServer(app: FastifyInstance, options: SubscriptionServerOptions) {
  const { limits } = options
  const counter = new ConnectionCounter(limits.maxConnectionsPerCaller, limits.maxConnections)
  const refusal = (limit: 'caller' | 'instance') =>
    limit === 'caller'
      ? `At most ${limits.maxConnectionsPerCaller} connections per caller`
      : `This instance holds its most subscription connections (${limits.maxConnections}); try again later`
  let droppedSlowConsumers = 0
  const openStreams = new Set<FastifyReply>()
  const rights = new ConnectionRights({ events: options.events, currentCallers: options.currentCallers, log: app.log })
  const budget = new SubscriptionBudget(limits)
  /** Each subscription's reservation, by the context of its operation. */
  const reservations = new WeakMap<object, Reservation>()
  app.addHook('onClose', async () => {
    rights.close()
    budget.close()
  })
  /** graphql's subscribe, each event admitted by the budget before its selection runs. */
  const meteredSubscribe = (args: ExecutionArgs) => {
    const reservation = reservations.get(args.contextValue as object)
    return reservation === undefined ? subscribe(args) : budget.subscribe(args, reservation)
  }

  /**
   * Parses and validates an operation as the HTTP endpoint would, and picks it out of its
   * document; the execution arguments, or the errors in the service's shape.
   */
  function prepare(request: FastifyRequest, params: OperationParams, context: GraphQLContext, reserved: Set<Reservation>): ExecutionArgs | FormattedError[] {
    const tooLong = parserLimitError(params.query, options.maxTokens)
    if (tooLong !== undefined) return [new FormattedError(formatError(tooLong, request))]
    let document
    try {
      document = parse(params.query, { maxTokens: options.maxTokens })
    } catch (error) {
      return [new FormattedError(formatError(error instanceof GraphQLError ? error : new GraphQLError(String(error)), request))]
    }
    const errors = validate(options.schema(), document, [...specifiedRules, ...options.validationRules])
    if (errors.length > 0) return errors.map((error) => new FormattedError(formatError(error, request)))
    const operation = chooseOperation(document, params.operationName)
    if (operation instanceof GraphQLError) return [badRequest(operation.message)]
    if (operation.operation === OperationTypeNode.SUBSCRIPTION) {
      // Its selection runs again for every event: its cost is claimed from the caller's budget
      // until it ends (released by the metered subscribe, or with the connection).
      const cost = operationCosts(document, options.schema(), LIST_SIZES).find(([node]) => node === operation)?.[1] ?? 0
      const reservation = budget.reserve(callerKey(request, request.caller), cost)
      if (!isReservation(reservation)) {
        const { message, limit, value, max } = reservation
        return [new FormattedError({ message, extensions: { code: 'BAD_REQUEST', limit, value, max } })]
      }
      // Held by the connection too (released with it at the latest), and forgotten once released.
      const held: Reservation = {
        key: reservation.key,
        cost: reservation.cost,
        release: () => {
          reservation.release()
          reserved.delete(held)
        },
      }
      reserved.add(held)
      reservations.set(context, held)
    }
    return { schema: options.schema(), document, variableValues: params.variables, operationName: params.operationName, contextValue: context }
  }

  const formatResult = <R extends { errors?: readonly GraphQLError[] }>(request: FastifyRequest, result: R) =>
    result.errors === undefined ? undefined : { ...result, errors: result.errors.map((error) => formatError(error, request)) }

  const streamOptions = (request: FastifyRequest, drop: () => void) => ({
    maxPending: limits.maxPendingEvents,
    onOverflow: () => {
      droppedSlowConsumers++
      request.log.warn({ maxPendingEvents: limits.maxPendingEvents }, 'subscriber too slow: dropped')
      drop()
    },
  })

  // ---- WebSocket (graphql-transport-ws) ----

  const wsServer = makeServer<Record<string, unknown> | undefined, SocketExtra>({
    schema: options.schema(),
    subscribe: meteredSubscribe,
    connectionInitWaitTimeout: limits.initTimeoutMs,

    onConnect: guarded(false, async (ctx: SocketContext) => {
      const { socket, request } = ctx.extra
      const unauthorized = (message: string) => {
        socket.close(CloseCode.Unauthorized, message.slice(0, 120))
        return false
      }
      // A token in connection_init wins over the upgrade's header; without one, the header's
      // caller (or its refusal) stands.
      const params = ctx.connectionParams ?? {}
      const lower = params.authorization ?? undefined
      const upper = params.Authorization ?? undefined
      if (lower !== undefined && upper !== undefined && lower !== upper) return unauthorized('connection_init carries two different tokens')
      const authorization = lower ?? upper
      let caller = request.caller
      if (authorization !== undefined) {
        if (typeof authorization !== 'string') return unauthorized('connection_init authorization must be "Bearer <token>"')
        try {
          caller = await options.authenticate(authorization)
        } catch (error) {
          if (isAppError(error)) return unauthorized(error.message)
          throw error
        }
      } else if (request.authenticationError !== null) {
        return unauthorized(request.authenticationError.message)
      }
      // The socket may have gone while the token was looked up: take no slot for it.
      if (socket.readyState !== socket.OPEN) return false
      const release = counter.acquire(callerKey(request, caller))
      if (typeof release === 'string') {
        socket.close(CLOSE_TRY_AGAIN_LATER, refusal(release))
        return false
      }
      // From now on the caller's rights are followed: a revoked token, an expiry or a deleted user
      // closes the socket with 4401, a changed role applies to the next operation and delivery.
      const seat = rights.seat(caller, () => socket.close(CloseCode.Unauthorized, REVOKED_MESSAGE))
      socket.once('close', () => {
        release()
        seat.release()
      })
      // The connection's caller is the one the rate limiter counts its messages against.
      request.caller = caller
      ctx.extra.seat = seat
      ctx.extra.authorization = caller === null ? undefined : (authorization ?? request.headers.authorization)
      return true
    }),

    onSubscribe: guarded([internalError()], async (ctx: SocketContext, _id: string, payload: unknown) => {
      const { socket, request, seat } = ctx.extra
      if (seat === undefined) return [internalError()]
      if (seat.revoked) return [revokedError()]
      if (Object.keys(ctx.subscriptions).length > limits.maxPerConnection) {
        return [badRequest(`At most ${limits.maxPerConnection} subscriptions per connection`)]
      }
      const verdict = await options.consumeRateLimit?.(request)
      if (verdict !== undefined && !verdict.allowed) {
        const { error, retryAfterS } = verdict
        return [new FormattedError({ message: error.message, extensions: { code: error.code, retryAfter: retryAfterS } })]
      }
      let params
      try {
        params = readParams(payload, 'body')
      } catch (error) {
        if (isAppError(error)) return [new FormattedError({ message: error.message, extensions: { code: error.code, details: error.details } })]
        throw error
      }
      // Rights are judged at use: the token is looked up again (one indexed read) before anything runs.
      if (seat.caller !== null && ctx.extra.authorization !== undefined) {
        try {
          seat.update(await options.authenticate(ctx.extra.authorization))
        } catch (error) {
          if (!isAppError(error)) throw error
          seat.revoke()
          return [revokedError()]
        }
      }
      const drop = () => socket.close(CLOSE_TOO_SLOW, `Too slow: more than ${limits.maxPendingEvents} events undelivered`)
      return prepare(request, params, connectionContext(seat, streamOptions(request, drop)), ctx.extra.reserved)
    }),

    onNext: (ctx: SocketContext, _id, _payload, _args, result) => formatResult(ctx.extra.request, result),
  })

  /**
   * Runs a protocol hook; a failure of ours (not of the client's message) is logged as an error
   * and closes the socket as the protocol says for server errors (4500), or asks the client to
   * come back later (1013) when the database is busy or unreachable. graphql-ws would take it for a bad message.
   */
  function guarded<A extends unknown[], R>(refused: R, hook: (ctx: SocketContext, ...args: A) => Promise<R>) {
    return async (ctx: SocketContext, ...args: A): Promise<R> => {
      try {
        return await hook(ctx, ...args)
      } catch (error) {
        const { socket, request } = ctx.extra
        const fromDatabase = databaseAppError(error)
        if (fromDatabase?.code === 'SERVICE_UNAVAILABLE') {
          request.log.warn({ err: error }, fromDatabase.message)
          socket.close(CLOSE_TRY_AGAIN_LATER, fromDatabase.message)
        } else {
          request.log.error({ err: error }, 'subscription server failed')
          socket.close(CloseCode.InternalServerError, `Internal server error; quote request id ${request.id}`)
        }
        return refused
      }
    }
  }

  /** @fastify/websocket's handler for one upgraded socket: the protocol server, keep-alive pings, and quiet faults. */
  function wsHandler(socket: WebSocket, request: FastifyRequest): void {
    const reserved = new Set<Reservation>()
    let pongWait: NodeJS.Timeout | undefined
    const pinger =
      limits.keepAliveMs > 0
        ? setInterval(() => {
            if (socket.readyState !== socket.OPEN) return
            pongWait = setTimeout(() => socket.terminate(), limits.keepAliveMs)
            socket.once('pong', () => clearTimeout(pongWait))
            socket.ping()
          }, limits.keepAliveMs)
        : undefined
    const closed = wsServer.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve()
            // A client that does not read while its subscriptions deliver is dropped, not buffered for.
            if (socket.bufferedAmount > limits.maxBufferedBytes) {
              droppedSlowConsumers++
              request.log.warn({ bufferedBytes: socket.bufferedAmount }, 'subscriber too slow: dropped')
              socket.close(CLOSE_TOO_SLOW, `Too slow: more than ${limits.maxBufferedBytes} bytes unsent`)
              return resolve()
            }
            socket.send(data, (error) => (error ? reject(error) : resolve()))
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', (data: Buffer) => {
            handle(data.toString()).catch((error: unknown) => {
              // Our hooks catch their own failures (guarded), so what reaches here is graphql-ws
              // refusing a message out of protocol (a client sending `next`): the client's fault,
              // said with 4400, not the 4500 of a server error.
              request.log.debug({ err: error }, 'WebSocket message out of protocol')
              if (socket.readyState === socket.OPEN) socket.close(CloseCode.BadRequest, 'Invalid message')
            })
          }),
      },
      { socket, request, reserved },
    )
    socket.once('close', (code, reason) => {
      clearInterval(pinger)
      clearTimeout(pongWait)
      for (const reservation of reserved) reservation.release()
      void closed(code, reason.toString())
    })
  }

  /** Going away: every socket is told 1001 (after what is queued for it); one that does not close in time is cut. */
  function closeSockets(): void {
    for (const client of app.websocketServer.clients) {
      client.close(CLOSE_GOING_AWAY, 'Server shutting down')
      setTimeout(() => client.terminate(), GOING_AWAY_GRACE_MS).unref()
    }
  }

  // ---- Server-Sent Events (graphql-sse, distinct connections) ----

  const sseHandler = createSseHandler<FastifyRequest, SseRequestContext, SseContext>({
    schema: options.schema(),
    subscribe: (args) => meteredSubscribe(args),
    // Distinct connections mode only: no stream reservations (tokens) to hold.
    authenticate: () => null,
    onSubscribe: (req, params) => {
      const request = req.raw
      const { reply, seat, reserved } = req.context
      const prepared = prepare(request, params as OperationParams, connectionContext(seat, streamOptions(request, () => reply.raw.destroy())), reserved)
      if (Array.isArray(prepared)) return jsonAnswer(400, { errors: prepared.map((error) => error.formatted) })
      const operation = getOperationAST(prepared.document, prepared.operationName)
      if (request.method === 'GET' && operation?.operation === OperationTypeNode.MUTATION) {
        return jsonAnswer(405, { errors: [{ message: 'Mutations cannot be sent with GET; use POST', extensions: { code: 'METHOD_NOT_ALLOWED' } }] }, { allow: 'POST' })
      }
      return prepared as ExecutionArgs & { contextValue: SseContext }
    },
    // Back-pressure: the next event is taken from the subscription's bounded queue only once the
    // client has received the ones before it.
    onNext: async (_ctx, req, result) => {
      await req.context.flow.sent()
      return formatResult(req.raw, result as { errors?: readonly GraphQLError[] })
    },
  })

  app.route({
    method: ['GET', 'POST'],
    url: STREAM_PATH,
    config: { access: 'public', errorBody: 'graphql', longLived: true },
    handler: async (request, reply) => {
      if (!acceptsEventStream(request.headers.accept)) {
        throw new AppError('NOT_ACCEPTABLE', 'This endpoint streams text/event-stream (graphql-sse, distinct connections mode)')
      }
      // Checked here, so a malformed request is answered in the service's words.
      const params = readParams(request.method === 'GET' ? request.query : request.body, request.method === 'GET' ? 'query' : 'body')
      const release = counter.acquire(callerKey(request, request.caller))
      if (release === 'caller') {
        // The answer's counters speak of the limit that refused it (the caller's open connections),
        // not of the request allowance it is still inside.
        const max = limits.maxConnectionsPerCaller
        reply.headers({
          'x-ratelimit-limit': max,
          'x-ratelimit-remaining': 0,
          'x-ratelimit-reset': CONNECTION_RETRY_AFTER_S,
          'ratelimit-policy': `"connections";q=${max}`,
          ratelimit: `"connections";r=0;t=${CONNECTION_RETRY_AFTER_S}`,
        })
        throw new AppError('RATE_LIMITED', refusal(release), undefined, { retryAfterS: CONNECTION_RETRY_AFTER_S })
      }
      if (release === 'instance') throw new AppError('SERVICE_UNAVAILABLE', refusal(release), undefined, { retryAfterS: CONNECTION_RETRY_AFTER_S })
      // The client may have gone while its token was looked up: its 'close' has fired already.
      if (request.raw.socket.destroyed) {
        release()
        reply.hijack()
        return
      }
      reply.hijack()
      openStreams.add(reply)
      // The stream's caller is followed: when they lose the right, the stream ends with an error.
      const seat = rights.seat(request.caller, () => endRevokedStream(reply))
      reply.raw.once('close', () => {
        openStreams.delete(reply)
        release()
        seat.release()
      })
      await serveEventStream(request, reply, params, seat)
    },
  })

  /** Runs graphql-sse's handler for one request and writes its answer, one event at a time. */
  async function serveEventStream(request: FastifyRequest, reply: FastifyReply, params: OperationParams, seat: Seat): Promise<void> {
    const flow = new Flow(reply)
    const reserved = new Set<Reservation>()
    reply.raw.once('close', () => {
      for (const reservation of reserved) reservation.release()
    })
    const [body, init] = await sseHandler({
      method: request.method,
      url: request.url,
      // graphql-sse compares Accept to exactly text/event-stream; the route has negotiated it.
      headers: { get: (key) => (key.toLowerCase() === 'accept' ? 'text/event-stream' : headerValue(request.headers[key.toLowerCase()])) },
      body: () => Promise.resolve(params as unknown as Record<string, unknown>),
      raw: request,
      context: { reply, flow, seat, reserved },
    })
    const response = reply.raw
    if (response.destroyed) return
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = String(value)
    response.writeHead(init.status, init.statusText, { ...headers, ...init.headers })
    if (typeof body !== 'object' || body === null) {
      response.end(body ?? undefined)
      return
    }
    const stop = () => void body.return(undefined)
    response.once('close', stop)
    // Revoked while the operation was being prepared: told now that the stream is open.
    if (seat.revoked) endRevokedStream(reply)
    try {
      for await (const chunk of body) {
        if (!response.writable) break
        await new Promise<void>((resolve) => response.write(chunk, () => resolve()))
        if (chunk.startsWith('event: next')) flow.delivered()
      }
    } finally {
      response.off('close', stop)
      if (response.writable) response.end()
      flow.close()
    }
  }

  // Going away: event streams end (their clients reconnect elsewhere).
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
  return { wsHandler, closeSockets, stats }
}

interface SseRequestContext {
  reply: FastifyReply
  flow: Flow
  seat: Seat
  /** The stream's subscription budget reservation, released with the stream. */
  reserved: Set<Reservation>
}

/**
 * Ends an event stream whose caller lost the right: an error result, then complete, then the end
 * of the response. Before its head is written, serveEventStream does it once the head is out.
 */
function endRevokedStream(reply: FastifyReply): void {
  const response = reply.raw
  if (!response.headersSent || !response.writable) return
  response.write(printStreamEvent({ event: 'next', data: { errors: [revokedError()] } }))
  response.end(printStreamEvent({ event: 'complete', data: null }))
}

/**
 * Events of one stream handed to graphql-sse versus events written to the client: `sent()`
 * resolves once the client has all but the one in hand, so graphql-sse's own queue never grows.
 */
class Flow {
  private handed = 0
  private written = 0
  private waiting: (() => void) | undefined
  private closed = false

  constructor(reply: FastifyReply) {
    reply.raw.once('close', () => this.close())
  }

  sent(): Promise<void> {
    this.handed++
    if (this.closed || this.handed - this.written <= 1) return Promise.resolve()
    return new Promise((resolve) => (this.waiting = resolve))
  }

  delivered(): void {
    this.written++
    if (this.handed - this.written <= 1) this.wake()
  }

  close(): void {
    this.closed = true
    this.wake()
  }

  private wake(): void {
    const resolve = this.waiting
    this.waiting = undefined
    resolve?.()
  }
}

/** Accept names text/event-stream at a quality above 0. */
function acceptsEventStream(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase())
    const q = parameters.find((p) => p.startsWith('q='))
    return type === 'text/event-stream' && (q === undefined || Number(q.slice(2)) > 0)
  })
}

const headerValue = (value: string | string[] | undefined): string | null =>
  value === undefined ? null : Array.isArray(value) ? value.join(', ') : value

const jsonAnswer = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  [JSON.stringify(body), { status, statusText: status === 405 ? 'Method Not Allowed' : 'Bad Request', headers: { 'content-type': 'application/json; charset=utf-8', ...headers } }] as const
