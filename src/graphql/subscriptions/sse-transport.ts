// Subscriptions over Server-Sent Events on /graphql/stream: the graphql-sse protocol's distinct
// connections mode, by the graphql-sse package's handler. Here: content negotiation, the
// operation taken through the operation pipeline before the stream opens (trusted documents,
// limits, its points charged as over POST /graphql: refused with the answer's status, nothing run),
// the connection slot (refused with 429 or 503 and Retry-After), the stream's caller followed (a
// revoked one ends the stream with an UNAUTHENTICATED error), and the answer written by us: each
// event with the id its subscription gave it (`id:`), and a stream sent with Last-Event-ID
// resumed after that id, by the subscriptions whose events have ids.
//
// The glue between graphql-sse and Fastify is ours (about what its adapter is), because an event
// stream applies back-pressure here, so a slow client fills our bounded queue instead of an
// unbounded one inside graphql-sse; and a stream's connection slot is released when its socket
// closes, whatever the handler does.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ExecutionArgs, GraphQLError, GraphQLSchema } from 'graphql'
import { createHandler as createSseHandler, print as printStreamEvent } from 'graphql-sse'
import type { GraphQLConfig } from '../../config.js'
import type { EventStreamOptions } from '../../events/event-stream.js'
import { AppError } from '../../errors.js'
import { isAcceptable, isMediaType, parseAccept } from '../../http/accept.js'
import { callerKey, type RateLimitCharger } from '../../limits/rate-limit.js'
import type { ConnectionCaller, ConnectionRights } from './connection-rights.js'
import type { Reservation } from './subscription-budget.js'
import type { GraphQLContext } from '../context.js'
import {
  EVERY_OPERATION,
  isRefused,
  type OperationPipeline,
  paidOverHttp,
  type PreparedOperation,
  QUERIES_AND_SUBSCRIPTIONS,
  STREAM_PATH,
  type Transport,
} from '../pipeline/operation-pipeline.js'
import { readRequestParams } from '../pipeline/request-params.js'
import type { ConnectionCounter } from './connection-counter.js'
import { revokedError } from './formatted-error.js'
import { connectionContext, formatResult, type OperationPreparation } from './operation-preparation.js'
import type { SlowConsumers } from './slow-consumers.js'

export { STREAM_PATH }

/**
 * Retry-After on an event stream refused for the connections already open: a slot frees when one
 * of them closes, which nothing here can foresee; a short, fixed hint.
 */
const CONNECTION_RETRY_AFTER_S = 5

export interface SseTransportOptions {
  schema: () => GraphQLSchema
  limits: GraphQLConfig['subscriptions']
  /** The connection slots, shared with the WebSockets. */
  counter: ConnectionCounter
  /** Where each signed-in stream's caller is followed. */
  rights: ConnectionRights
  operations: OperationPreparation
  slowConsumers: SlowConsumers
  /** Trusted documents, limits and the operation's points, as over POST /graphql. */
  pipeline: OperationPipeline
  /** Charges the stream's request its operation's points past the 1 it took on arrival. */
  chargeRateLimit: RateLimitCharger | undefined
}

/** graphql-sse types its context as a record; ours is a GraphQLContext. */
type SseContext = GraphQLContext & Record<PropertyKey, unknown>

interface SseRequestContext {
  reply: FastifyReply
  flow: Flow
  connectionCaller: ConnectionCaller
  /** The operation the pipeline prepared (and charged) for this stream. */
  operation: PreparedOperation
  /** The stream's subscription budget reservation, released with the stream. */
  reserved: Set<Reservation>
  /** The id of each result handed to graphql-sse, in order (undefined: one without an id), for its `id:` line. */
  ids: (string | undefined)[]
  /** The id the subscription's resolver gave the result being made. */
  identified: string | undefined
}

/** graphql-sse's handler, run for one request: the body of its answer and how it begins. */
type StreamHandler = ReturnType<typeof createSseHandler<FastifyRequest, SseRequestContext, SseContext>>

/** Registers the event-stream route, and the end of every open stream when the server goes away. */
export function sseTransport(app: FastifyInstance, options: SseTransportOptions): void {
  const openStreams = new Set<FastifyReply>()
  const pay = paidOverHttp(options.chargeRateLimit)
  /** Every operation type over POST; over GET, no mutation (405, as GET /graphql). */
  const overPost: Transport<FastifyReply> = { carries: EVERY_OPERATION, pay }
  const overGet: Transport<FastifyReply> = { carries: QUERIES_AND_SUBSCRIPTIONS, pay }
  const sseHandler = streamHandler(options)

  app.route({
    method: ['GET', 'POST'],
    url: STREAM_PATH,
    // A mutation sent here needs the write scope: judged with the operation (../pipeline/operation-pipeline.ts).
    config: { access: 'public', scope: 'read', errorBody: 'graphql', longLived: true },
    handler: async (request, reply) => {
      if (!acceptsEventStream(request.headers.accept)) {
        throw new AppError('NOT_ACCEPTABLE', 'This endpoint streams text/event-stream (graphql-sse, distinct connections mode)')
      }
      // Checked here, so a malformed request is answered in the service's words.
      const params = readRequestParams(request.method === 'GET' ? request.query : request.body, request.method === 'GET' ? 'query' : 'body')
      // Prepared in a slot of the caller's, as over POST /graphql (its execution acquires another:
      // OperationPreparation.execute).
      const transport = request.method === 'GET' ? overGet : overPost
      const operation = await options.operations.inSlot(
        request,
        async () => options.pipeline.prepare(request, reply, params, transport, request.caller),
        'bounded',
      )
      if (isRefused(operation)) return reply.code(400).type('application/json; charset=utf-8').send({ errors: operation.refused })
      const release = acquireConnection(options, request, reply)
      // The client may have gone while its token was looked up: its 'close' has fired already.
      if (request.raw.socket.destroyed) {
        release()
        reply.hijack()
        return
      }
      reply.hijack()
      openStreams.add(reply)
      // The stream's caller is followed: when they lose the right, the stream ends with an error.
      const connectionCaller = options.rights.follow(request.caller, () => endRevokedStream(reply))
      reply.raw.once('close', () => {
        openStreams.delete(reply)
        release()
        connectionCaller.release()
      })
      await serveEventStream(sseHandler, request, reply, operation, connectionCaller)
    },
  })

  // Going away: event streams end (their clients reconnect elsewhere).
  app.addHook('preClose', async () => {
    for (const reply of openStreams) reply.raw.end()
  })
}

/** graphql-sse's handler: the operation prepared already, started on the stream, its events sent as the client takes them. */
function streamHandler({ schema, operations, slowConsumers, pipeline }: SseTransportOptions): StreamHandler {
  return createSseHandler<FastifyRequest, SseRequestContext, SseContext>({
    schema: schema(),
    subscribe: (args) => operations.subscribe(args),
    execute: (args) => operations.execute(args),
    // Validated by the pipeline already (once per document); graphql-sse would run every rule again for each stream.
    validate: (_schema, document) => [...pipeline.validate(document)],
    // Distinct connections mode only: no stream reservations (tokens) to hold.
    authenticate: () => null,
    onSubscribe: (req) => {
      const request = req.raw
      const { reply, connectionCaller, reserved, operation } = req.context
      const stream: EventStreamOptions = {
        ...slowConsumers.streamOptions(request, () => reply.raw.destroy()),
        // A browser's EventSource sends it on its own when it reconnects.
        resumeAfter: headerValue(request.headers['last-event-id']) ?? undefined,
        identify: (id) => (req.context.identified = id),
      }
      const prepared = operations.start(request, operation, connectionContext(connectionCaller, stream), reserved)
      if (Array.isArray(prepared)) return jsonAnswer(400, { errors: prepared.map((error) => error.formatted) })
      return prepared as ExecutionArgs & { contextValue: SseContext }
    },
    // Back-pressure: the next event is taken from the subscription's bounded queue only once the
    // client has received the ones before it.
    onNext: async (_ctx, req, result) => {
      req.context.ids.push(req.context.identified)
      req.context.identified = undefined
      await req.context.flow.sent()
      // Bounded and charged by its length (graphql-sse types a result's errors as graphql's; ours are formatted already).
      return (await operations.bound(req.raw, formatResult(req.raw, result as { errors?: readonly GraphQLError[] }) ?? result)) as typeof result
    },
  })
}

/**
 * A connection slot for the stream, or its refusal: 429 past the caller's open connections (the
 * answer's counters speak of that limit, not of the request allowance it is still inside), 503
 * past the instance's; both with Retry-After.
 */
function acquireConnection({ counter, limits }: SseTransportOptions, request: FastifyRequest, reply: FastifyReply): () => void {
  const release = counter.acquire(callerKey(request, request.caller))
  if (release === 'caller') {
    const max = limits.maxConnectionsPerCaller
    reply.headers({
      'x-ratelimit-limit': max,
      'x-ratelimit-remaining': 0,
      'x-ratelimit-reset': CONNECTION_RETRY_AFTER_S,
      'ratelimit-policy': `"connections";q=${max}`,
      ratelimit: `"connections";r=0;t=${CONNECTION_RETRY_AFTER_S}`,
    })
    throw new AppError('RATE_LIMITED', counter.refusal(release), undefined, { retryAfterS: CONNECTION_RETRY_AFTER_S })
  }
  if (release === 'instance') throw new AppError('SERVICE_UNAVAILABLE', counter.refusal(release), undefined, { retryAfterS: CONNECTION_RETRY_AFTER_S })
  return release
}

/** Runs graphql-sse's handler for one request and writes its answer, one event at a time. */
async function serveEventStream(
  sseHandler: StreamHandler,
  request: FastifyRequest,
  reply: FastifyReply,
  operation: PreparedOperation,
  connectionCaller: ConnectionCaller,
): Promise<void> {
  const flow = new Flow(reply)
  const reserved = new Set<Reservation>()
  const ids: (string | undefined)[] = []
  reply.raw.once('close', () => {
    for (const reservation of reserved) reservation.release()
  })
  const [body, init] = await sseHandler({
    method: request.method,
    url: request.url,
    // graphql-sse compares Accept to exactly text/event-stream; the route has negotiated it.
    headers: { get: (key) => (key.toLowerCase() === 'accept' ? 'text/event-stream' : headerValue(request.headers[key.toLowerCase()])) },
    body: () => Promise.resolve({ query: operation.query, variables: operation.variables, operationName: operation.operationName }),
    raw: request,
    context: { reply, flow, connectionCaller, reserved, operation, ids, identified: undefined },
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
  // Revoked while the operation was being prepared: told now that the stream is open.
  if (connectionCaller.revoked) endRevokedStream(reply)
  await writeEvents(body, response, ids, flow)
}

/**
 * Writes the stream's events as graphql-sse makes them, each next event with its id. The events of
 * one turn of the event loop leave in one write to the socket (a resumed stream's missed events
 * come many at once); past the socket's buffer, the next waits for it to drain.
 */
async function writeEvents(body: AsyncGenerator<string>, response: FastifyReply['raw'], ids: (string | undefined)[], flow: Flow): Promise<void> {
  const stop = () => void body.return(undefined)
  response.once('close', stop)
  let corked = false
  const uncork = () => {
    corked = false
    response.uncork()
  }
  try {
    for await (const chunk of body) {
      if (!response.writable) break
      const next = chunk.startsWith('event: next')
      // The event's id, for the client's Last-Event-ID when it reconnects.
      const id = next ? ids.shift() : undefined
      if (!corked) {
        corked = true
        response.cork()
        setImmediate(uncork)
      }
      if (!response.write(id === undefined ? chunk : `id: ${id}\n${chunk}`)) await drained(response)
      if (next) flow.delivered()
    }
  } finally {
    response.off('close', stop)
    if (response.writable) response.end()
    flow.close()
  }
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
 * Events of one stream handed to graphql-sse versus events taken by the response (within its
 * buffer: past it, the stream waits for the client to read): `sent()` resolves once the response
 * has all but the one in hand, so graphql-sse's own queue never grows.
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

/** Resolves once the response's buffer has drained, or the response is closed. */
function drained(response: FastifyReply['raw']): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done)
      response.off('close', done)
      resolve()
    }
    response.once('drain', done)
    response.once('close', done)
  })
}

/** Accept names text/event-stream at a quality above 0. */
function acceptsEventStream(accept: string | undefined): boolean {
  return parseAccept(accept).some((range) => isMediaType(range, 'text/event-stream') && isAcceptable(range))
}

const headerValue = (value: string | string[] | undefined): string | null => (value === undefined ? null : Array.isArray(value) ? value.join(', ') : value)

const jsonAnswer = (status: number, body: unknown) =>
  [JSON.stringify(body), { status, statusText: 'Bad Request', headers: { 'content-type': 'application/json; charset=utf-8' } }] as const
