// Subscriptions over WebSocket on /graphql: the graphql-transport-ws protocol, by the protocol
// server of the graphql-ws package (`makeServer`) on @fastify/websocket's sockets. Here: who is
// calling (the upgrade's Authorization header or the connection_init payload, looked up again on
// each subscribe), the connection slot, the subscriptions a socket carries, the rate limit on
// subscribe messages, keep-alive pings, and the sockets that do not read dropped.
//
// The glue between graphql-ws and Fastify is ours (about what its adapter is), because a client's
// protocol fault closes with 4400 and is logged through the request's logger, not 4500 and
// console.error.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { GraphQLSchema } from 'graphql'
import { CloseCode, type Context as WsContext, makeServer } from 'graphql-ws'
import type { WebSocket } from 'ws'
import type { Authenticate } from '../../core/caller.js'
import type { GraphQLConfig } from '../../config.js'
import { maskedMessage, toAppError } from '../../http/to-app-error.js'
import { AppError, isAppError } from '../../errors.js'
import { callerKey, type RateLimitConsumer, type RateLimitVerdict } from '../../limits/rate-limit.js'
import { type ConnectionCaller, type ConnectionRights, REVOKED_MESSAGE } from './connection-rights.js'
import type { Reservation } from './subscription-budget.js'
import { EVERY_OPERATION, isRefused, type OperationPipeline, type Transport } from '../pipeline/operation-pipeline.js'
import { readRequestParams } from '../pipeline/request-params.js'
import type { ConnectionCounter } from './connection-counter.js'
import { badRequest, FormattedError, revokedError } from './formatted-error.js'
import { connectionContext, formatResult, type OperationPreparation } from './operation-preparation.js'
import type { SlowConsumers } from './slow-consumers.js'

/** RFC 6455 §7.4.1: the subscriber broke a policy of the server (here: it fell too far behind). */
const CLOSE_TOO_SLOW = 1008
/** RFC 6455: the server is going away (shutting down). */
const CLOSE_GOING_AWAY = 1001
/** RFC 6455 (IANA registry): try again later — the caller holds too many connections now. */
const CLOSE_TRY_AGAIN_LATER = 1013

/** How long a socket told to go away may take to close before it is cut. */
const GOING_AWAY_GRACE_MS = 1000

export interface WebSocketTransportOptions {
  schema: () => GraphQLSchema
  limits: GraphQLConfig['subscriptions']
  authenticate: Authenticate
  consumeRateLimit: RateLimitConsumer | undefined
  /** The connection slots, shared with the event streams. */
  counter: ConnectionCounter
  /** Where each signed-in socket's caller is followed. */
  rights: ConnectionRights
  operations: OperationPreparation
  slowConsumers: SlowConsumers
  /** Trusted documents, limits and the operation's points, as over HTTP. */
  pipeline: OperationPipeline
}

interface SocketExtra {
  socket: WebSocket
  request: FastifyRequest
  /** The connection's caller as it stands now (set once connection_init is accepted). */
  connectionCaller?: ConnectionCaller
  /** The Authorization value the connection was opened with, checked again on each subscribe. */
  authorization?: string
  /** Its subscriptions' claims on the caller's budget, released with the socket at the latest. */
  reserved: Set<Reservation>
}

type SocketContext = WsContext<Record<string, unknown> | undefined, SocketExtra>

/** A message refused by the rate limit (or its store away), with the seconds to wait. */
const rateLimited = ({ error, retryAfterS }: RateLimitVerdict & { allowed: false }) =>
  new FormattedError({ message: error.message, extensions: { code: error.code, retryAfter: retryAfterS } })

const internalError = (requestId: string) => new FormattedError({ message: maskedMessage(requestId), extensions: { code: 'INTERNAL_ERROR' } })

/**
 * The WebSocket handler (for the GET /graphql route's wsHandler) and the shutdown step that tells
 * every socket to go away.
 */
export function webSocketTransport(app: FastifyInstance, options: WebSocketTransportOptions) {
  const { operations } = options
  const overWebSocket = socketTransport(options.consumeRateLimit)
  const wsServer = makeServer<Record<string, unknown> | undefined, SocketExtra>({
    schema: options.schema(),
    subscribe: operations.subscribe,
    execute: operations.execute,
    connectionInitWaitTimeout: options.limits.initTimeoutMs,
    onConnect: guarded(false, async (ctx: SocketContext) => acceptConnection(options, ctx)),
    onSubscribe: guarded(
      (request) => [internalError(request.id)],
      async (ctx: SocketContext, _id: string, payload: unknown) => subscribeOperation(options, overWebSocket, ctx, payload),
    ),
    onNext: async (ctx: SocketContext, _id, _payload, _args, result) => operations.bound(ctx.extra.request, formatResult(ctx.extra.request, result) ?? result),
  })

  /** Going away: every socket is told 1001 (after what is queued for it); one that does not close in time is cut. */
  function closeSockets(): void {
    for (const client of app.websocketServer.clients) {
      client.close(CLOSE_GOING_AWAY, 'Server shutting down')
      setTimeout(() => client.terminate(), GOING_AWAY_GRACE_MS).unref()
    }
  }

  return { wsHandler: (socket: WebSocket, request: FastifyRequest) => serveSocket(wsServer, options, socket, request), closeSockets }
}

/** A socket carries every operation type; an operation's points past its message's first are counted as its messages are. */
function socketTransport(consumeRateLimit: RateLimitConsumer | undefined): Transport<undefined> {
  return {
    carries: EVERY_OPERATION,
    async pay(request, _reply, points) {
      const rest = points > 1 ? await consumeRateLimit?.(request, points - 1, { refundRefused: true }) : undefined
      if (rest !== undefined && !rest.allowed) throw new AppError(rest.error.code, rest.error.message, undefined, { retryAfterS: rest.retryAfterS })
    },
  }
}

/**
 * connection_init: who is calling (a token in its payload wins over the upgrade's header; without
 * one, the header's caller or its refusal stands), the connection slot, and the caller followed.
 */
async function acceptConnection({ authenticate, counter, rights }: WebSocketTransportOptions, ctx: SocketContext): Promise<boolean> {
  const { socket, request } = ctx.extra
  const unauthorized = (message: string) => {
    socket.close(CloseCode.Unauthorized, message.slice(0, 120))
    return false
  }
  const params = ctx.connectionParams ?? {}
  const lower = params.authorization ?? undefined
  const upper = params.Authorization ?? undefined
  if (lower !== undefined && upper !== undefined && lower !== upper) return unauthorized('connection_init carries two different tokens')
  const authorization = lower ?? upper
  let caller = request.caller
  if (authorization !== undefined) {
    if (typeof authorization !== 'string') return unauthorized('connection_init authorization must be "Bearer <token>"')
    try {
      caller = await authenticate(authorization)
    } catch (error) {
      // Only a refused token is the client's; the database busy or away is ours (guarded: 1013).
      if (isAppError(error) && error.code === 'UNAUTHENTICATED') return unauthorized(error.message)
      throw error
    }
  } else if (request.authenticationError !== null) {
    return unauthorized(request.authenticationError.message)
  }
  // The socket may have gone while the token was looked up: take no slot for it.
  if (socket.readyState !== socket.OPEN) return false
  const release = counter.acquire(callerKey(request, caller))
  if (typeof release === 'string') {
    socket.close(CLOSE_TRY_AGAIN_LATER, counter.refusal(release))
    return false
  }
  // From now on the caller's rights are followed: a revoked token, an expiry or a deleted user
  // closes the socket with 4401, a changed role applies to the next operation and delivery.
  const connectionCaller = rights.follow(caller, () => socket.close(CloseCode.Unauthorized, REVOKED_MESSAGE))
  socket.once('close', () => {
    release()
    connectionCaller.release()
  })
  // The connection's caller is the one the rate limiter counts its messages against.
  request.caller = caller
  ctx.extra.connectionCaller = connectionCaller
  ctx.extra.authorization = caller === null ? undefined : (authorization ?? request.headers.authorization)
  return true
}

/** A subscribe message: refused while the connection is revoked or full, else its first point taken and its operation prepared in a slot. */
async function subscribeOperation(options: WebSocketTransportOptions, overWebSocket: Transport<undefined>, ctx: SocketContext, payload: unknown) {
  const { request, connectionCaller } = ctx.extra
  const { limits } = options
  if (connectionCaller === undefined) return [internalError(request.id)]
  if (connectionCaller.revoked) return [revokedError()]
  if (Object.keys(ctx.subscriptions).length > limits.maxPerConnection) {
    return [badRequest(`At most ${limits.maxPerConnection} subscriptions per connection`)]
  }
  // The message's first point, as an HTTP request's on arrival; its operation's others once it is admitted.
  const verdict = await options.consumeRateLimit?.(request)
  if (verdict !== undefined && !verdict.allowed) return [rateLimited(verdict)]
  // The rest, its preparation, runs in a slot of the caller's (its execution in another:
  // OperationPreparation.execute); it waits however many of the caller's do, since a connection
  // holds at most maxPerConnection operations.
  return options.operations.inSlot(request, async () => prepareOnSocket(options, overWebSocket, ctx, connectionCaller, payload), 'unbounded')
}

/** The operation of a subscribe message, prepared by the pipeline as over HTTP, then started on the connection. */
async function prepareOnSocket(
  { authenticate, pipeline, limits, operations, slowConsumers }: WebSocketTransportOptions,
  overWebSocket: Transport<undefined>,
  ctx: SocketContext,
  connectionCaller: ConnectionCaller,
  payload: unknown,
) {
  const { socket, request } = ctx.extra
  let params
  try {
    params = readRequestParams(payload, 'body')
  } catch (error) {
    if (isAppError(error)) return [new FormattedError({ message: error.message, extensions: { code: error.code, details: error.details } })]
    throw error
  }
  // Rights are judged at use: the token is looked up again (one indexed read) before anything runs.
  if (connectionCaller.caller !== null && ctx.extra.authorization !== undefined) {
    try {
      connectionCaller.update(await authenticate(ctx.extra.authorization))
    } catch (error) {
      if (!isAppError(error) || error.code !== 'UNAUTHENTICATED') throw error
      connectionCaller.revoke()
      return [revokedError()]
    }
  }
  let operation
  try {
    operation = await pipeline.prepare(request, undefined, params, overWebSocket, connectionCaller.caller)
  } catch (error) {
    if (isAppError(error) && error.retryAfterS !== undefined) return [rateLimited({ allowed: false, error, retryAfterS: error.retryAfterS })]
    throw error
  }
  if (isRefused(operation)) return operation.refused.map((error) => new FormattedError(error))
  const drop = () => socket.close(CLOSE_TOO_SLOW, `Too slow: more than ${limits.maxPendingEvents} events undelivered`)
  return operations.start(request, operation, connectionContext(connectionCaller, slowConsumers.streamOptions(request, drop)), ctx.extra.reserved)
}

/** @fastify/websocket's handler for one upgraded socket: the protocol server, keep-alive pings, and quiet faults. */
function serveSocket(
  wsServer: ReturnType<typeof makeServer<Record<string, unknown> | undefined, SocketExtra>>,
  { limits, slowConsumers }: WebSocketTransportOptions,
  socket: WebSocket,
  request: FastifyRequest,
): void {
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
            slowConsumers.dropped++
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

/**
 * Runs a protocol hook; a failure of ours (not of the client's message) is logged as an error
 * and closes the socket as the protocol says for server errors (4500), or asks the client to
 * come back later (1013) when the database is busy or unreachable. graphql-ws would take it for a bad message.
 */
function guarded<A extends unknown[], R>(refused: R | ((request: FastifyRequest) => R), hook: (ctx: SocketContext, ...args: A) => Promise<R>) {
  return async (ctx: SocketContext, ...args: A): Promise<R> => {
    try {
      return await hook(ctx, ...args)
    } catch (error) {
      const { socket, request } = ctx.extra
      const failure = toAppError(error, request, { in: 'subscription server' })
      socket.close(failure.code === 'SERVICE_UNAVAILABLE' ? CLOSE_TRY_AGAIN_LATER : CloseCode.InternalServerError, failure.message)
      return typeof refused === 'function' ? (refused as (request: FastifyRequest) => R)(request) : refused
    }
  }
}
