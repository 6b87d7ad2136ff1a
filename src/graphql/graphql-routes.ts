// The GraphQL endpoint, by the GraphQL-over-HTTP specification: POST /graphql with a JSON body
// (or a JSON array of up to maxBatch operations), GET /graphql?query=... for queries only, and
// the answer as application/json or application/graphql-response+json, as the client accepts.
//
// Mercurius builds the executable schema; the HTTP side is ours, so that content negotiation,
// status codes, CSRF refusal and error shapes follow the specification and the service's error
// vocabulary. Subscriptions (WebSocket on the same path, SSE on /graphql/stream) are in
// subscriptions/subscription-server.ts.
//
// Every operation goes through the operation pipeline (operation-pipeline.ts), as those of the
// WebSocket and the event stream do: its hash resolved (persisted queries, trusted documents), its
// lexical and shape limits checked on a parse kept by text, its points charged, then validated
// (once per document) and run (compiled by graphql-jit from its second use). A document sent with
// its hash is registered only once its operation has run (it parsed and validated).
// An answer that carries errors is never cached: no-store, and no ETag.
import fastifyWebsocket from '@fastify/websocket'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { GraphQLError, type GraphQLFormattedError, type GraphQLSchema, NoSchemaIntrospectionCustomRule, OperationTypeNode, printSchema } from 'graphql'
import { handleProtocols } from 'graphql-ws'
import mercurius from 'mercurius'
import type { Authenticate, CurrentCallers } from '../core/caller.js'
import type { CallerTopics } from '../core/caller-changed.js'
import type { GraphQLConfig } from '../config.js'
import { AppError } from '../errors.js'
import { isAcceptable, isMediaType, parseAccept } from '../http/accept.js'
import type { Events } from '../events/events.js'
import type { IdempotentWrites } from '../idempotency/idempotent-writes.js'
import type { Limiter } from '../limits/limiter.js'
import { MAX_ANSWER_BYTES } from '../limits/answer-bytes.js'
import { callerKey, type RateLimitCharger, type RateLimitConsumer } from '../limits/rate-limit.js'
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../collections/pagination.js'
import { type GraphQLContext, Loaders } from './context.js'
import { formatError } from './errors.js'
import { graphiqlRoutes } from '../pages/graphiql.js'
import { MAX_TOKENS } from './document-limits/parser-guard.js'
import { costLimitRules } from './document-limits/query-limit-rules.js'
import {
  type AdmittedOperation,
  createOperationPipeline,
  answerTooLarge,
  boundAnswer,
  isRefused,
  type OperationPipeline,
  type Payer,
  type RefusedOperation,
  type StageTracer,
} from './operation-pipeline.js'
import { createPersistedQueries, type PersistedQueryStore } from './persisted-queries.js'
import { chooseOperation, readRequestParams } from './request-params.js'
import { attachSubscriptions, buildResolvers, type GraphQLPart, typeDefsOf } from './schema.js'
import type { OperationTracer } from './subscriptions/operation-preparation.js'
import { STREAM_PATH, subscriptionServer, type SubscriptionServerOptions, type SubscriptionStats } from './subscriptions/subscription-server.js'

const GRAPHQL_PATH = '/graphql'

const JSON_TYPE = 'application/json; charset=utf-8'
const GRAPHQL_RESPONSE_TYPE = 'application/graphql-response+json; charset=utf-8'

type MediaType = typeof JSON_TYPE | typeof GRAPHQL_RESPONSE_TYPE

interface Answer {
  /** 'request-error': the document or variables were refused before execution; 'too-large': its answer was past MAX_ANSWER_BYTES. */
  outcome: 'executed' | 'request-error' | 'too-large'
  body: { data?: unknown; errors?: GraphQLFormattedError[] }
}

export interface GraphQLRoutesOptions {
  config: GraphQLConfig
  /** What each feature brings to the schema (src/features.ts), in order. */
  parts: readonly GraphQLPart[]
  /** Who an Authorization header names, on the WebSocket and event-stream transports. */
  authenticate: Authenticate
  /** The callers of open connections' tokens as they stand now (their rights follow them). */
  currentCallers: CurrentCallers
  consumeRateLimit: RateLimitConsumer | undefined
  /** Charges a request the points of its operations past the 1 it took on arrival (src/graphql/metering.ts). */
  chargeRateLimit: RateLimitCharger | undefined
  /** Runs an operation over a WebSocket or an event stream in a slot of its caller's, as HTTP requests acquire theirs. */
  schedule: SubscriptionServerOptions['schedule']
  /** Receives the subscription counters once they exist. */
  exposeStats: (stats: SubscriptionStats) => void
  activeSubscriptions: () => number
  /** Where open connections hear that their caller's rights changed (callerChanged). */
  events: Pick<Events<CallerTopics>, 'subscribe'>
  /** Where the documents of persisted queries are registered (this process's, or shared through Redis). */
  persistedQueryStore: PersistedQueryStore
  /** Bytes of documents each caller may register per window (GRAPHQL_PERSISTED_QUERIES_CALLER_BYTES), as points. */
  persistedQueryAllowance: Pick<Limiter, 'consume'>
  /** A POST carrying a mutation honours its Idempotency-Key: the key checked before it runs, its answer kept. */
  idempotentWrites: Pick<IdempotentWrites, 'begin' | 'watchWrites' | 'keepAnswer'>
  /** The clock of the subscriptions' delivery windows. @default Date.now */
  now?: () => number
  /** Spans for the pipeline's stages, each operation on a connection and each delivery (src/tracing/), when tracing is on. */
  tracer?: StageTracer & OperationTracer
}

export async function graphqlRoutes(
  app: FastifyInstance,
  {
    config,
    parts,
    authenticate,
    currentCallers,
    consumeRateLimit,
    chargeRateLimit,
    schedule,
    exposeStats,
    activeSubscriptions,
    events,
    persistedQueryStore,
    persistedQueryAllowance,
    idempotentWrites,
    now,
    tracer,
  }: GraphQLRoutesOptions,
): Promise<void> {
  const listSizes = { defaultLimit: DEFAULT_PAGE_LIMIT, maxLimit: MAX_PAGE_LIMIT }
  // The shape limits (fields, depth, aliases, directives) are the pipeline's, checked before these.
  const validationRules = [...costLimitRules(config.limits, listSizes), ...(config.introspection ? [] : [NoSchemaIntrospectionCustomRule])]
  // Without introspection, refusals keep their names of the schema to themselves (formatError).
  app.decorateRequest('graphqlSuggestions', config.introspection)
  // Mercurius builds the executable schema (app.graphql.schema); every transport's operations are
  // parsed, validated and run by the operation pipeline, so mercurius keeps no documents of its own.
  await app.register(mercurius, { schema: typeDefsOf(parts), resolvers: buildResolvers(parts), routes: false, graphiql: false, jit: 0, cache: false })

  const persisted = createPersistedQueries(config.persistedQueries, persistedQueryStore, { allowance: persistedQueryAllowance, log: app.log })
  const pipeline = createOperationPipeline({
    schema: () => app.graphql.schema,
    limits: config.limits,
    listSizes,
    maxTokens: MAX_TOKENS,
    persisted,
    validationRules,
    jit: config.jit,
    tracer,
  })
  // The rate limit counts the work a request asks, all of it before any of it runs: its
  // operations, their mutation fields and their cost (src/graphql/metering.ts). The request took 1 point on arrival.
  const payer =
    (request: FastifyRequest, reply: FastifyReply): Payer =>
    async (points) =>
      chargeRateLimit?.(request, reply, points - 1)
  /** Runs the operation, then registers its document if it was sent with its hash and ran: one refused before execution is not kept. */
  const runAndRegister = async (request: FastifyRequest, operation: AdmittedOperation) => {
    const answer = await run(pipeline, app.graphql.schema, request, operation)
    if (answer.outcome === 'executed') await persisted.register(operation, callerKey(request, request.caller ?? null))
    return answer
  }
  /** Runs the operation, its answer bounded (stage 9): PAYLOAD_TOO_LARGE in its place past `budget`. */
  const runBounded = async (request: FastifyRequest, operation: AdmittedOperation, budget?: number): Promise<{ answer: Answer; length: number }> => {
    const answer = await runAndRegister(request, operation)
    const bounded = boundAnswer(answer.body, budget)
    return 'refused' in bounded ? { answer: { outcome: 'too-large', body: bounded.refused }, length: bounded.length } : { answer, length: bounded.length }
  }

  // Errors raised before the resolvers run (bad JSON, a refused token, the rate limit) are
  // GraphQL responses too (`errorBody: 'graphql'`), with the status that says what happened.
  // A mutation's Idempotency-Key is checked once its document is known, before it is charged: a
  // replayed answer costs nothing. Its answer is kept first of the route's onSend hooks.
  // Its writes mark the key they run under done, in their own transactions (watchWrites).
  const route = {
    config: { access: 'public', scope: 'read', errorBody: 'graphql' },
    preHandler: idempotentWrites.watchWrites,
    onSend: idempotentWrites.keepAnswer,
  } as const
  app.post(GRAPHQL_PATH, route, async (request, reply) => {
    requireJsonBody(request)
    const media = negotiate(request.headers.accept)
    if (Array.isArray(request.body)) return sendBatch(request, reply, media, request.body)
    const operation = await pipeline.admit(request, readRequestParams(request.body, 'body'))
    if (isRefused(operation)) return send(reply, media, refusalAnswer(operation))
    if (isMutation(operation) && (acceptWrites(request, reply), await idempotentWrites.begin(request, reply)) === 'replayed') return reply
    await pipeline.charge([operation], payer(request, reply))
    return send(reply, media, (await runBounded(request, operation)).answer)
  })

  attachSubscriptions(app.graphql.schema, parts)
  const subscriptions = subscriptionServer(app, {
    schema: () => app.graphql.schema,
    limits: config.subscriptions,
    pipeline,
    listSizes,
    chargeRateLimit,
    authenticate,
    currentCallers,
    consumeRateLimit,
    activeSubscriptions,
    events,
    schedule,
    now,
    tracer,
  })
  // WebSockets close with 1001 when the server goes away, after what was queued for them is sent
  // (cut a second later if they do not close).
  await app.register(fastifyWebsocket, {
    // Only graphql-transport-ws is agreed; anything else is refused in the handshake.
    options: { maxPayload: config.subscriptions.maxMessageBytes, handleProtocols },
    // A client's bad frame (too large, not UTF-8, unmasked) is its fault: ws has closed the socket
    // with the right code; it is logged at debug, not as a server error.
    errorHandler(error, socket, request) {
      const clientFault = (error as { code?: string }).code?.startsWith('WS_ERR_') === true
      if (clientFault) request.log.debug({ err: error }, 'WebSocket client fault')
      else request.log.error({ err: error }, 'WebSocket handler failed')
      socket.terminate()
    },
    preClose(done) {
      subscriptions.closeSockets()
      done()
    },
  })
  exposeStats(subscriptions.stats)

  // GET: queries over HTTP, and the WebSocket upgrade for subscriptions (graphql-transport-ws).
  app.route({
    method: 'GET',
    url: GRAPHQL_PATH,
    config: { access: 'public', errorBody: 'graphql', refusesTokensInProtocol: true },
    wsHandler: subscriptions.wsHandler,
    onSend: neverCacheErrors,
    handler: async (request, reply) => {
      const media = negotiate(request.headers.accept)
      const operation = await pipeline.admit(request, readRequestParams(request.query, 'query'))
      if (isRefused(operation)) return send(reply, media, refusalAnswer(operation))
      // Only queries travel by GET: a mutation must not run from a link or an <img>.
      const refusal = refuseOutsideQuery(operation)
      if (refusal === OperationTypeNode.MUTATION) {
        reply.header('allow', 'POST')
        throw new AppError('METHOD_NOT_ALLOWED', 'Only queries may be sent with GET; send mutations with POST')
      }
      if (refusal !== undefined) {
        const error = refusal === OperationTypeNode.SUBSCRIPTION ? new GraphQLError(SUBSCRIPTIONS_ELSEWHERE) : refusal
        return send(reply, media, { outcome: 'request-error', body: { errors: [formatError(error, request)] } })
      }
      await pipeline.charge([operation], payer(request, reply))
      return send(reply, media, (await runBounded(request, operation)).answer)
    },
  })

  if (config.introspection) {
    const sdl = `${printSchema(app.graphql.schema)}\n`
    app.get(`${GRAPHQL_PATH}/schema.graphql`, { config: { access: 'public' } }, async (_request, reply) => reply.type('text/plain; charset=utf-8').send(sdl))
  }

  if (config.graphiql) await app.register(graphiqlRoutes, { endpoint: GRAPHQL_PATH, subscriptionEndpoint: GRAPHQL_PATH })

  async function sendBatch(request: FastifyRequest, reply: FastifyReply, media: MediaType, operations: unknown[]) {
    if (config.maxBatch === 0) throw new AppError('BAD_REQUEST', 'Batched operations are turned off: send one operation per request')
    if (operations.length === 0 || operations.length > config.maxBatch) {
      throw new AppError('BAD_REQUEST', `A batch holds from 1 to ${config.maxBatch} operations; this one holds ${operations.length}`)
    }
    const read = operations.map((operation, i) => readRequestParams(operation, `body[${i}]`))
    const admitted = []
    for (const operation of read) admitted.push(await pipeline.admit(request, operation))
    if (
      admitted.some((operation) => !isRefused(operation) && isMutation(operation)) &&
      (acceptWrites(request, reply), await idempotentWrites.begin(request, reply)) === 'replayed'
    )
      return reply
    await pipeline.charge(admitted, payer(request, reply))
    // One after the other: mutations in a batch apply in the order given. The answers share one
    // bound: an operation whose answer would take the batch past it gets PAYLOAD_TOO_LARGE in its place.
    const bodies = []
    let left = MAX_ANSWER_BYTES - 2
    for (const [at, operation] of admitted.entries()) {
      // A loop turn between two operations: the sockets are read and other callers' slots handed
      // out, so a batch holds the loop for one operation at a time, not ten.
      if (at > 0) await new Promise((resolve) => setImmediate(resolve))
      // Past the bound already, an operation is not run: no answer of it could be sent.
      const { answer, length } = isRefused(operation)
        ? { answer: refusalAnswer(operation), length: 0 }
        : left <= 0
          ? { answer: { outcome: 'too-large' as const, body: answerTooLarge() }, length: 0 }
          : await runBounded(request, operation, left)
      bodies.push(answer.body)
      left -= length + 1
    }
    return reply.code(200).type(media).send(bodies)
  }
}

/**
 * Validation (with the refusal of subscriptions, which HTTP cannot carry) and execution of an
 * operation the pipeline has admitted and charged: the stages every transport shares.
 */
async function run(pipeline: OperationPipeline, schema: GraphQLSchema, request: FastifyRequest, operation: AdmittedOperation): Promise<Answer> {
  const { document, operationName } = operation
  const refused = pipeline.validate(document)
  if (refused.length > 0) return { outcome: 'request-error', body: { errors: refused.map((error) => formatError(error, request)) } }
  const chosen = chooseOperation(document, operationName)
  if (chosen instanceof GraphQLError) return { outcome: 'request-error', body: { errors: [formatError(chosen, request)] } }
  if (chosen.operation === OperationTypeNode.SUBSCRIPTION) {
    return { outcome: 'request-error', body: { errors: [formatError(new GraphQLError(SUBSCRIPTIONS_ELSEWHERE, { nodes: chosen }), request)] } }
  }
  const forbidden = pipeline.authorize(chosen, request.caller)
  if (forbidden !== undefined) return { outcome: 'request-error', body: { errors: [formatError(forbidden, request)] } }
  const context: GraphQLContext = { caller: request.caller, loaders: new Loaders(() => request.caller) }
  const result = await pipeline.execute({ schema, document, contextValue: context, variableValues: operation.variables, operationName })
  const errors = result.errors?.map((error) => formatError(error, request))
  // No data at all: the operation never started (its variables were refused).
  if (result.data === undefined) return { outcome: 'request-error', body: { errors } }
  return { outcome: 'executed', body: errors?.length ? { errors, data: result.data } : { data: result.data } }
}

/**
 * application/json answers every GraphQL outcome with 200 (the errors are in the body);
 * application/graphql-response+json answers a refused request with 400 and no data.
 * An answer with errors goes out serialized already, so HTTP caching gives it no Cache-Control
 * of a read (neverCacheErrors then says no-store).
 */
function send(reply: FastifyReply, media: MediaType, answer: Answer) {
  const status = answer.outcome === 'too-large' ? 413 : media === GRAPHQL_RESPONSE_TYPE && answer.outcome === 'request-error' ? 400 : 200
  if (answer.body.errors === undefined || answer.body.errors.length === 0) return reply.code(status).type(media).send(answer.body)
  const serialized = JSON.stringify(answer.body)
  answersWithErrors.set(reply.request, { serialized, media })
  return reply.code(status).type(media).send(serialized)
}

/** The GET answers that carry errors, serialized: they are neither cached nor validated. */
const answersWithErrors = new WeakMap<FastifyRequest, { serialized: string; media: MediaType }>()

/**
 * For GET (after the HTTP caching's own onSend): an answer that carries errors is no-store, without
 * an ETag; a 304 that If-None-Match made of it is turned back into the answer. A callback hook, not
 * an async one: every GET passes here, and most leave at the first line.
 */
function neverCacheErrors(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
  const answer = answersWithErrors.get(request)
  if (answer === undefined) return done(null, payload)
  reply.removeHeader('etag')
  reply.header('cache-control', 'no-store')
  if (reply.statusCode !== 304) return done(null, payload)
  reply.code(200).type(answer.media)
  done(null, answer.serialized)
}

/** An operation the pipeline refused: a request error (PersistedQueryNotFound keeps its message, as the client's link expects). */
const refusalAnswer = (operation: RefusedOperation): Answer => ({ outcome: 'request-error', body: { errors: [...operation.refused] } })

/** A request that runs a mutation accepts write tokens only: its answer says so (access.ts sets the header for the route). */
function acceptWrites(request: FastifyRequest, reply: FastifyReply): void {
  if (request.caller !== null) reply.header('x-accepted-oauth-scopes', 'write')
}

/** Whether the operation the request runs is a mutation (one that cannot be chosen is not: it runs nothing). */
function isMutation(operation: AdmittedOperation): boolean {
  const chosen = chooseOperation(operation.document, operation.operationName)
  return !(chosen instanceof GraphQLError) && chosen.operation === OperationTypeNode.MUTATION
}

/** For GET: the operation's type when it is not a query; a GraphQLError when the operation cannot be chosen; undefined for a query. */
function refuseOutsideQuery(operation: AdmittedOperation): OperationTypeNode.MUTATION | OperationTypeNode.SUBSCRIPTION | GraphQLError | undefined {
  const chosen = chooseOperation(operation.document, operation.operationName)
  if (chosen instanceof GraphQLError) return chosen
  return chosen.operation === OperationTypeNode.QUERY ? undefined : chosen.operation
}

const SUBSCRIPTIONS_ELSEWHERE = `Subscriptions are served over WebSocket at ${GRAPHQL_PATH} (graphql-transport-ws) or Server-Sent Events at ${STREAM_PATH} (graphql-sse)`

/** POST bodies are application/json only: what a cross-site form can send (and merge-patch) is refused. */
function requireJsonBody(request: FastifyRequest): void {
  const type = request.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase()
  if (type !== 'application/json') throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the GraphQL request as application/json')
}

/**
 * The answer's media type from Accept: application/graphql-response+json when the client takes it
 * (at the highest quality it gives), else application/json (also for no Accept, * / * and
 * application/ *); 406 when it takes neither.
 */
function negotiate(accept: string | undefined): MediaType {
  const ranges = parseAccept(accept)
  if (ranges.length === 0) return JSON_TYPE
  let best: { media: MediaType; q: number } | undefined
  for (const range of ranges.filter(isAcceptable)) {
    const { q } = range
    const media = isMediaType(range, 'application/graphql-response+json')
      ? GRAPHQL_RESPONSE_TYPE
      : isMediaType(range, 'application/json') || isMediaType(range, 'application/*') || isMediaType(range, '*/*')
        ? JSON_TYPE
        : undefined
    if (media === undefined) continue
    if (best === undefined || q > best.q || (q === best.q && media === GRAPHQL_RESPONSE_TYPE)) best = { media, q }
  }
  if (best === undefined) {
    throw new AppError('NOT_ACCEPTABLE', 'This endpoint answers application/graphql-response+json or application/json')
  }
  return best.media
}
