// The GraphQL endpoint, by the GraphQL-over-HTTP specification: POST /graphql with a JSON body
// (or a JSON array of up to maxBatch operations), GET /graphql?query=... for queries only, and
// the answer as application/json or application/graphql-response+json, as the client accepts.
//
// The executable schema is graphql-js's, built from the parts' SDL with their resolvers set on it;
// the HTTP side is ours, so that content negotiation, status codes, CSRF refusal and error shapes
// follow the specification and the service's error vocabulary. Subscriptions (WebSocket on the
// same path, SSE on /graphql/stream) are in subscriptions/subscription-server.ts.
//
// Every operation is prepared by the operation pipeline (pipeline/operation-pipeline.ts), as those of the
// WebSocket and the event stream are: its hash resolved (persisted queries, trusted documents), its
// lexical and shape limits checked on a parse kept by text, its type one the method carries, its
// points charged, then validated (once per document) and allowed to its caller; here it is run
// (compiled by graphql-jit from its second use) and its answer framed. A document sent with its
// hash is registered only once its operation has run (it parsed and validated).
// An answer that carries errors is never cached: no-store, and no ETag.
import { setImmediate as nextLoopTurn } from 'node:timers/promises'
import fastifyWebsocket from '@fastify/websocket'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { buildSchema, type GraphQLFormattedError, type GraphQLSchema, NoSchemaIntrospectionCustomRule, printSchema } from 'graphql'
import { handleProtocols } from 'graphql-ws'
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
import type { ListSizes } from './document-limits/cost-measure.js'
import { costLimitRules } from './document-limits/query-limit-rules.js'
import {
  answerTooLarge,
  boundAnswer,
  createOperationPipeline,
  GRAPHQL_PATH,
  isRefused,
  type OperationPipeline,
  paidOverHttp,
  type PreparedOperation,
  QUERIES,
  QUERIES_AND_MUTATIONS,
  type RefusedOperation,
  type StageTracer,
  type Transport,
} from './pipeline/operation-pipeline.js'
import { createPersistedQueries, type PersistedQueries, type PersistedQueryStore } from './pipeline/persisted-queries.js'
import { readRequestParams, type RequestParams } from './pipeline/request-params.js'
import { attachResolvers, attachSubscriptions, type GraphQLPart, typeDefsOf } from './schema.js'
import type { OperationTracer } from './subscriptions/operation-preparation.js'
import { subscriptionServer, type SubscriptionServerOptions, type SubscriptionStats } from './subscriptions/subscription-server.js'

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
  /** Charges a request the points of its operations past the 1 it took on arrival (src/graphql/pipeline/metering.ts). */
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

export async function graphqlRoutes(app: FastifyInstance, options: GraphQLRoutesOptions): Promise<void> {
  const { config, parts } = options
  const listSizes = { defaultLimit: DEFAULT_PAGE_LIMIT, maxLimit: MAX_PAGE_LIMIT }
  // Without introspection, refusals keep their names of the schema to themselves (formatError).
  app.decorateRequest('graphqlSuggestions', config.introspection)
  // Every transport's operations are parsed, validated and run by the operation pipeline against
  // this schema. Built without the tokens and locations of the parse (0.6 MB kept for the life of
  // the process, which only a message about the SDL would read).
  const schema = buildSchema(typeDefsOf(parts), { noLocation: true })
  attachResolvers(schema, parts)
  attachSubscriptions(schema, parts)

  const persisted = createPersistedQueries(config.persistedQueries, options.persistedQueryStore, {
    allowance: options.persistedQueryAllowance,
    log: app.log,
  })
  const pipeline = pipelineOf(schema, options, persisted, listSizes)
  const answers = httpAnswers(schema, pipeline, persisted, options)
  app.post(GRAPHQL_PATH, answers.postRoute, answers.post)

  const subscriptions = subscriptionServer(app, {
    schema: () => schema,
    limits: config.subscriptions,
    pipeline,
    listSizes,
    chargeRateLimit: options.chargeRateLimit,
    authenticate: options.authenticate,
    currentCallers: options.currentCallers,
    consumeRateLimit: options.consumeRateLimit,
    activeSubscriptions: options.activeSubscriptions,
    events: options.events,
    schedule: options.schedule,
    now: options.now,
    tracer: options.tracer,
  })
  await registerWebSockets(app, config, subscriptions.closeSockets)
  options.exposeStats(subscriptions.stats)

  // GET: queries over HTTP, and the WebSocket upgrade for subscriptions (graphql-transport-ws).
  app.route({
    method: 'GET',
    url: GRAPHQL_PATH,
    config: { access: 'public', errorBody: 'graphql', refusesTokensInProtocol: true },
    wsHandler: subscriptions.wsHandler,
    onSend: neverCacheErrors,
    handler: answers.get,
  })

  if (config.introspection) {
    const sdl = `${printSchema(schema)}\n`
    app.get(`${GRAPHQL_PATH}/schema.graphql`, { config: { access: 'public' } }, async (_request, reply) => reply.type('text/plain; charset=utf-8').send(sdl))
  }
  if (config.graphiql) await app.register(graphiqlRoutes, { endpoint: GRAPHQL_PATH, subscriptionEndpoint: GRAPHQL_PATH })
}

/** The operation pipeline of the schema, by the GraphQL config. */
function pipelineOf(schema: GraphQLSchema, { config, tracer }: GraphQLRoutesOptions, persisted: PersistedQueries, listSizes: ListSizes): OperationPipeline {
  return createOperationPipeline({
    schema: () => schema,
    limits: config.limits,
    listSizes,
    maxTokens: MAX_TOKENS,
    persisted,
    // The shape limits (fields, depth, aliases, directives) are the pipeline's, checked before these.
    validationRules: [...costLimitRules(config.limits, listSizes), ...(config.introspection ? [] : [NoSchemaIntrospectionCustomRule])],
    jit: config.jit,
    tracer,
  })
}

/**
 * What POST and GET carry, and how their operations are paid for. The rate limit counts the work a
 * request asks, all of it before any of it runs: its operations, their mutation fields and their
 * cost (src/graphql/pipeline/metering.ts). The request took 1 point on arrival.
 */
function httpTransports({ chargeRateLimit, idempotentWrites }: GraphQLRoutesOptions) {
  const pay = paidOverHttp(chargeRateLimit)
  /** Queries and mutations: a mutation's Idempotency-Key is checked once its document is known, before it is charged (a replayed answer costs nothing). */
  const post: Transport<FastifyReply, 'replayed'> = {
    carries: QUERIES_AND_MUTATIONS,
    pay,
    async beforeMutation(request, reply) {
      // A request that runs a mutation accepts write tokens only: its answer says so (access.ts sets the header for the route).
      if (request.caller !== null) reply.header('x-accepted-oauth-scopes', 'write')
      return (await idempotentWrites.begin(request, reply)) === 'replayed' ? 'replayed' : undefined
    },
  }
  /** Queries only: a mutation must not run from a link or an <img>. */
  const get: Transport<FastifyReply> = { carries: QUERIES, pay }
  return { post, get }
}

/** The handlers of POST and GET /graphql: each operation prepared by the pipeline, then run, bounded and sent. */
function httpAnswers(schema: GraphQLSchema, pipeline: OperationPipeline, persisted: PersistedQueries, options: GraphQLRoutesOptions) {
  const { config, idempotentWrites } = options
  const over = httpTransports(options)
  /** Runs the operation, then registers its document if it was sent with its hash and ran: one refused before execution is not kept. */
  const runAndRegister = async (request: FastifyRequest, operation: PreparedOperation) => {
    const answer = await run(pipeline, schema, request, operation)
    if (answer.outcome === 'executed') await persisted.register(operation, callerKey(request, request.caller ?? null))
    return answer
  }
  /** Runs the operation, its answer bounded (stage 9): PAYLOAD_TOO_LARGE in its place past `budget`. */
  const runBounded = async (request: FastifyRequest, operation: PreparedOperation, budget?: number): Promise<{ answer: Answer; length: number }> => {
    const answer = await runAndRegister(request, operation)
    const bounded = boundAnswer(answer.body, budget)
    return 'refused' in bounded ? { answer: { outcome: 'too-large', body: bounded.refused }, length: bounded.length } : { answer, length: bounded.length }
  }
  const answerOne = async (request: FastifyRequest, reply: FastifyReply, params: RequestParams, transport: Transport<FastifyReply, 'replayed'>) => {
    const media = negotiate(request.headers.accept)
    const operation = await pipeline.prepare(request, reply, params, transport, request.caller)
    if (operation === 'replayed') return reply
    if (isRefused(operation)) return send(reply, media, refusalAnswer(operation))
    return send(reply, media, (await runBounded(request, operation)).answer)
  }
  const batching: Batching = { pipeline, maxBatch: config.maxBatch, transport: over.post, runBounded }

  return {
    // Errors raised before the resolvers run (bad JSON, a refused token, the rate limit) are
    // GraphQL responses too (`errorBody: 'graphql'`), with the status that says what happened.
    // A mutation's answer is kept first of the route's onSend hooks; its writes mark the key they
    // run under done, in their own transactions (watchWrites).
    postRoute: {
      config: { access: 'public', scope: 'read', errorBody: 'graphql' },
      preHandler: idempotentWrites.watchWrites,
      onSend: idempotentWrites.keepAnswer,
    } as const,
    post: async (request: FastifyRequest, reply: FastifyReply) => {
      requireJsonBody(request)
      if (Array.isArray(request.body)) return answerBatch(batching, request, reply, request.body)
      return answerOne(request, reply, readRequestParams(request.body, 'body'), over.post)
    },
    get: async (request: FastifyRequest, reply: FastifyReply) => answerOne(request, reply, readRequestParams(request.query, 'query'), over.get),
  }
}

/** What a batch is answered with: the pipeline, its size bound, what POST carries, and how one operation is run. */
interface Batching {
  pipeline: OperationPipeline
  maxBatch: number
  transport: Transport<FastifyReply, 'replayed'>
  runBounded: (request: FastifyRequest, operation: PreparedOperation, budget?: number) => Promise<{ answer: Answer; length: number }>
}

/** A POST of a JSON array: every operation prepared (and paid for) at once, then run one after the other. */
async function answerBatch({ pipeline, maxBatch, transport, runBounded }: Batching, request: FastifyRequest, reply: FastifyReply, operations: unknown[]) {
  const media = negotiate(request.headers.accept)
  if (maxBatch === 0) throw new AppError('BAD_REQUEST', 'Batched operations are turned off: send one operation per request')
  if (operations.length === 0 || operations.length > maxBatch) {
    throw new AppError('BAD_REQUEST', `A batch holds from 1 to ${maxBatch} operations; this one holds ${operations.length}`)
  }
  const read = operations.map((operation, i) => readRequestParams(operation, `body[${i}]`))
  const prepared = await pipeline.prepareBatch(request, reply, read, transport, request.caller)
  if (prepared === 'replayed') return reply
  // One after the other: mutations in a batch apply in the order given. The answers share one
  // bound: an operation whose answer would take the batch past it gets PAYLOAD_TOO_LARGE in its place.
  const bodies = []
  let left = MAX_ANSWER_BYTES - 2
  for (const [at, operation] of prepared.entries()) {
    // A loop turn between two operations: the sockets are read and other callers' slots handed
    // out, so a batch holds the loop for one operation at a time, not ten.
    if (at > 0) await nextLoopTurn()
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

/** WebSockets on /graphql: graphql-transport-ws only; closed with 1001 when the server goes away. */
async function registerWebSockets(app: FastifyInstance, config: GraphQLConfig, closeSockets: () => void): Promise<void> {
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
      closeSockets()
      done()
    },
  })
}

/** Execution (stage 8) of an operation the pipeline has prepared, and its result in the service's shape. */
async function run(pipeline: OperationPipeline, schema: GraphQLSchema, request: FastifyRequest, operation: PreparedOperation): Promise<Answer> {
  const { document, operationName } = operation
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
