// The composition root: opens the store, builds the services, and wires them into Fastify.
// buildApp is the table of contents of the service: the infrastructure, the HTTP pipeline's stages
// (their order: src/http/pipeline.ts), the operations and pages, the features' REST API, GraphQL.
// Tests build the app with this same function.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import type { Redis } from 'ioredis'
import type { Config } from './config.js'
import {
  API_INDEX,
  APP_TOPICS,
  type AppTopics,
  createServices,
  embeddedIn,
  FEATURE_TOPICS,
  FEATURES,
  graphqlParts,
  landingCounts,
  type Services,
} from './features.js'
import { type Database, openDatabase, SERVING_PAGE_CACHE_KIB } from './db/create-database.js'
import { MAX_COUNTED_TOTAL } from './db/list-page.js'
import type { Events } from './events/events.js'
import { createMemoryEvents } from './events/memory-events.js'
import { createRedisEvents } from './events/redis-events.js'
import { requestError } from './graphql/errors.js'
import { graphqlRoutes } from './graphql/graphql-routes.js'
import { createPersistedQueryStores } from './graphql/pipeline/persisted-query-stores.js'
import type { SubscriptionStats } from './graphql/subscriptions/subscription-server.js'
import { DOCS_PATH, docsPageRoutes } from './pages/docs-page.js'
import { landingPageRoutes } from './pages/landing-page.js'
import { HEALTH_PATH } from './operations/health.js'
import { STREAM_PATH } from './graphql/subscriptions/subscription-server.js'
import { onClientError, onFrameworkError } from './http/error-handler.js'
import { OPENAPI_JSON_PATH, registerOpenApi } from './http/openapi/openapi-plugin.js'
import { createIdempotencyStore, purgeExpiredKeys } from './idempotency/idempotency-store.js'
import { createIdempotentWrites, type IdempotentWrites } from './idempotency/idempotent-writes.js'
import { healthRoutes } from './operations/health.js'
import { countedEvents, createMetrics, metricsRoute } from './operations/metrics.js'
import { generateRequestId } from './http/request-id.js'
import { lazyChildLogger, OneLinePerRequest } from './http/request-log.js'
import { buildSharedSerializer } from './http/serializer-cache.js'
import { API_MOUNTS, DEFAULT_API_VERSION } from './http/versioning.js'
import { MAX_BODY_BYTES } from './http/content-types.js'
import { type Pipeline, type PipelineOptions, registerPipeline } from './http/pipeline.js'
import type { PipelineObserver } from './http/pipeline-observer.js'
import { createPasswordAllowances } from './limits/password-allowances.js'
import { droppedLogLines, logs, prettyLogStream, stdoutLogStream } from './operations/log-destination.js'
import { createFairScheduler, type FairScheduler } from './limits/fair-scheduler.js'
import { createLoopDelay, type LoopDelay } from './limits/loop-delay.js'
import { createRateLimit } from './limits/rate-limit.js'
import { closeRedisConnection, createRedisConnection, firstAttempt } from './redis/connection.js'
import { startTracing, type Tracing } from './tracing/start-tracing.js'

/** The topics subscriptions listen to: their listeners are the open subscriptions. */
const FEATURE_TOPIC_NAMES = Object.keys(FEATURE_TOPICS) as (keyof typeof FEATURE_TOPICS)[]

const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops

declare module 'fastify' {
  interface FastifyInstance {
    /** Open subscription connections and dropped slow subscribers. */
    readonly subscriptionStats: SubscriptionStats
    /** Failures the service absorbed (Redis away), each logged when a run of them starts. */
    readonly faults: Faults
    /** Traces, when the OTEL_* variables turn them on: `flush()` exports the spans ended so far. */
    readonly tracing: Pick<Tracing, 'flush'> | undefined
  }
}

/** Counts of failures the service rode out instead of failing requests; for tests and (later) metrics. */
export interface Faults {
  /** Requests, sign-ins and password changes the rate-limit store could not count (let through, or refused with 503, by RATE_LIMIT_ON_REDIS_ERROR). */
  readonly rateLimitStoreErrors: number
  /** Events that could not be published (no instance delivers them). */
  readonly eventPublishFailures: number
  /** Times live events to this instance were interrupted (subscribers were told). */
  readonly eventInterruptions: number
}

/**
 * Conventions a benchmark leaves out, one at a time, to price each (`npm run bench`'s table, through
 * bench/serve-without.mjs): validators (ETag, Last-Modified, 304 and the representation cache),
 * compression, headers (the request id and security headers). The others have settings of their
 * own (RATE_LIMIT_MAX=0, LOG_LEVEL, METRICS, CORS_ORIGINS, HTTP_MAX_IN_FLIGHT=0). Without them the
 * answers break what docs/rest.md documents: no configuration reaches this.
 */
export const MEASURABLE_CONVENTIONS = ['validators', 'compression', 'headers'] as const
export type MeasurableConvention = (typeof MEASURABLE_CONVENTIONS)[number]

export interface AppDependencies {
  /** An open store to serve from (the app closes it); by default the one config names is opened. */
  database?: Database
  /** The events adapter (the app closes it); by default in-process. */
  events?: Events<AppTopics>
  /** Where the log lines go (tests read them); by default stdout. */
  logStream?: { write(line: string): void }
  /** Told of every route as it is registered (tests list what is served). */
  onRoute?: (route: RouteOptions & { prefix: string }) => void
  /** The clock of the windows counted in this process: allowances, delivery budgets (tests move it instead of waiting). @default Date.now */
  now?: () => number
  /** Told of the scheduler requests acquire their slots from, when there is one (tests watch its load). */
  onScheduler?: (scheduler: FairScheduler) => void
  /** Told of each HTTP stage's hook as it runs (tests check the pipeline's order); the hooks are wrapped for it, so never in production. */
  observePipeline?: PipelineObserver
  /** Conventions left out, to measure what each costs (MEASURABLE_CONVENTIONS). @default none */
  measureWithout?: ReadonlySet<MeasurableConvention>
}

/**
 * How long a write with an Idempotency-Key may run before its key is free for a retry: a claim
 * without an answer past it was left by a process that stopped. Longer than any write takes.
 */
const IDEMPOTENCY_LEASE_MS = 60_000
/** How often expired Idempotency-Keys are purged. */
const IDEMPOTENCY_PURGE_INTERVAL_MS = 60_000

/** How often the server looks for connections past their headers or request timeout. */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1000

/** What the app is built from, opened once: the store, the shared connections, the services and the limits. */
interface AppParts {
  readonly database: Database
  readonly redisUrl: string | undefined
  /** The connection the rate limit and the password allowances count in (and persisted queries share), when Redis is on. */
  readonly rateLimitRedis: Redis | undefined
  readonly tracing: Tracing | undefined
  readonly events: Events<AppTopics>
  readonly metrics: ReturnType<typeof createMetrics> | undefined
  readonly persistedQueries: ReturnType<typeof createPersistedQueryStores>
  readonly passwordAllowances: ReturnType<typeof createPasswordAllowances>
  readonly services: Services
  readonly idempotentWrites: IdempotentWrites
  readonly rateLimit: ReturnType<typeof createRateLimit>
  /** The loop's delay, which the scheduler sheds load by and /health reports. */
  readonly loopDelay: LoopDelay
  readonly scheduler: FairScheduler | undefined
  /** Open subscription connections, as the GraphQL plugin last told them. */
  readonly live: { subscriptionStats: SubscriptionStats }
}

export async function buildApp(config: Config, dependencies: AppDependencies = {}): Promise<FastifyInstance> {
  const app = createFastify(config, dependencies)
  const parts = await openParts(app, config, dependencies)
  const pipeline = await registerPipeline(app, pipelineOptions(config, parts, dependencies))
  registerOperations(app, config, parts)
  await registerPages(app, config, parts)
  // How the collections' CSV and NDJSON answers are bounded (src/http/collection-export.ts).
  app.decorate('collectionExports', { maxRows: config.http.exportMaxRows })
  await registerRestApi(app, parts, pipeline)
  await registerGraphql(app, config, parts, dependencies)
  decorateApp(app, parts)
  return app
}

/** Fastify, with the log, the framework's errors and the server's limits of slow and greedy clients. */
function createFastify(config: Config, dependencies: AppDependencies): FastifyInstance {
  const logStream = dependencies.logStream ?? (config.logFormat === 'pretty' ? prettyLogStream() : stdoutLogStream())
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers.cookie', '*.headers.authorization', '*.headers.cookie', '*.password'],
      stream: logStream,
    },
    // A request that arrives while the app closes is answered by refuseWhileClosing, in our words.
    return503OnClosing: false,
    schemaController: { compilersFactory: { buildSerializer: buildSharedSerializer } },
    childLoggerFactory: lazyChildLogger,
    logController: new OneLinePerRequest({
      write: (line) => logStream.write(line),
      info: logs(config.logLevel, 'info'),
      debug: logs(config.logLevel, 'debug'),
      ...(config.logFormat === 'pretty' ? { pretty: { colors: process.stdout.isTTY } } : {}),
    }),
    requestIdHeader: false,
    genReqId: generateRequestId,
    // A hop count trusts that many proxies in front (Fastify types take it as a function).
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    bodyLimit: MAX_BODY_BYTES,
    frameworkErrors: onFrameworkError,
    clientErrorHandler: onClientError,
    // Slow and greedy clients. Node 20 checks both timeouts in one pass every
    // connectionsCheckingInterval (30 s by default; here 1 s, so a cut comes on time), and ignores
    // the request timeout while the headers timeout is longer (the config refuses that). Both
    // timeouts go to the server as it is created: Node checks one against the other there.
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    http: {
      headersTimeout: config.http.headersTimeoutMs,
      requestTimeout: config.http.requestTimeoutMs,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
      maxHeaderSize: config.http.maxHeaderBytes,
    },
  }).withTypeProvider<TypeBoxTypeProvider>()
  if (config.http.maxConnections > 0) app.server.maxConnections = config.http.maxConnections
  if (dependencies.onRoute !== undefined) app.addHook('onRoute', dependencies.onRoute)
  return app
}

/**
 * The store, tracing, Redis, the events port and metrics, then what is built on them: the
 * services, the kept answers of Idempotency-Keys, the limits. All closed with the app.
 */
async function openParts(app: FastifyInstance, config: Config, dependencies: AppDependencies): Promise<AppParts> {
  const database = dependencies.database ?? openDatabase(config.database, { pageCacheKib: SERVING_PAGE_CACHE_KIB })
  const live = { subscriptionStats: { connections: 0, subscriptions: 0, droppedSlowConsumers: 0 } as SubscriptionStats }
  // Shared through Redis when REDIS_URL is set (events across instances, one rate-limit allowance),
  // else in this process. A Redis that is away holds the start for at most a moment.
  const { url: redisUrl, keyPrefix } = config.redis
  // Traces (OTEL_*): off by default, and then nothing of tracing is loaded or installed; on, each
  // part below is handed its instrumentation (docs/operations.md).
  const tracing = await startTracing(config.tracing, { eventsSystem: redisUrl === undefined ? 'memory' : 'redis' })
  tracing?.traceStatements(database, config.database)
  const rateLimitRedis =
    redisUrl === undefined || config.rateLimit.max === 0
      ? undefined
      : createRedisConnection({ url: redisUrl, name: `${keyPrefix}rate-limit`, log: app.log, mode: 'commands', observe: tracing?.redisCommands })
  // The documents of persisted queries: registered on one instance, known to all.
  const persistedQueries = createPersistedQueryStores(config.graphql.persistedQueries, {
    redisUrl,
    keyPrefix,
    sharedRedis: rateLimitRedis,
    log: app.log,
    now: dependencies.now,
    observeRedis: tracing?.redisCommands,
  })
  const [eventsAdapter] = await Promise.all([
    dependencies.events ??
      (redisUrl === undefined
        ? createMemoryEvents<AppTopics>({ log: app.log })
        : createRedisEvents({
            url: redisUrl,
            keyPrefix,
            log: app.log,
            topics: APP_TOPICS,
            headers: tracing?.eventHeaders,
            observeCommands: tracing?.redisCommands,
          })),
    rateLimitRedis && firstAttempt(rateLimitRedis),
    persistedQueries.ownRedis && firstAttempt(persistedQueries.ownRedis),
  ])
  const metrics = config.operations.metrics
    ? createMetrics({ subscriptionStats: () => live.subscriptionStats, faults: () => app.faults, droppedLogLines, database })
    : undefined
  const counted = metrics === undefined ? eventsAdapter : countedEvents(eventsAdapter, metrics.events)
  const events = tracing === undefined ? counted : tracing.traceEvents(counted)
  const opened = { database, redisUrl, rateLimitRedis, tracing, events, metrics, persistedQueries, live }
  return { ...opened, ...createServicesAndLimits(app, config, dependencies, opened) }
}

/** The services over the store and the events, the kept answers of Idempotency-Keys, the rate limit, the scheduler; and what closes them all. */
function createServicesAndLimits(
  app: FastifyInstance,
  config: Config,
  dependencies: AppDependencies,
  {
    database,
    rateLimitRedis,
    tracing,
    events,
    metrics,
    persistedQueries,
  }: Pick<AppParts, 'database' | 'rateLimitRedis' | 'tracing' | 'events' | 'metrics' | 'persistedQueries'>,
): Pick<AppParts, 'passwordAllowances' | 'services' | 'idempotentWrites' | 'rateLimit' | 'loopDelay' | 'scheduler'> {
  const { db } = database
  const { keyPrefix } = config.redis
  const passwordAllowances = createPasswordAllowances(config, {
    redis: rateLimitRedis && { redis: rateLimitRedis, keyPrefix },
    log: app.log,
    now: dependencies.now,
  })
  const services = createServices({
    db,
    events,
    // SQLite's feed hears every commit at once (another process's too); PostgreSQL's hears another
    // instance's a few milliseconds late, too late for a revoked token.
    ...(database.dataVersion === undefined ? {} : { dataVersion: database.dataVersion, changes: database.changes }),
    passwordChanges: passwordAllowances.changes,
    scryptN: config.passwords.scryptN,
    tokenTtlMs: config.tokenTtlMs,
    signInAllowance: passwordAllowances.signIn,
    ...(config.oidc === undefined ? {} : { oidc: config.oidc }),
  })
  // Writes sent with an Idempotency-Key: their answers kept in the store, expired ones purged off the request path.
  const idempotencyStore = createIdempotencyStore(db, { ttlMs: config.idempotencyTtlMs, leaseMs: IDEMPOTENCY_LEASE_MS, now: dependencies.now })
  const idempotentWrites = createIdempotentWrites(idempotencyStore, app.log)
  const stopPurging = purgeExpiredKeys(idempotencyStore, { intervalMs: Math.min(config.idempotencyTtlMs, IDEMPOTENCY_PURGE_INTERVAL_MS), log: app.log })
  app.addHook('onClose', async () => {
    await stopPurging()
    await events.close()
    if (rateLimitRedis !== undefined) await closeRedisConnection(rateLimitRedis)
    if (persistedQueries.ownRedis !== undefined) await closeRedisConnection(persistedQueries.ownRedis)
    await database.close()
    // Last: the spans of everything above are exported before the process may end.
    await tracing?.close()
  })
  const rateLimit = createRateLimit(config.rateLimit, {
    store: rateLimitRedis && { redis: rateLimitRedis, keyPrefix },
    log: app.log,
    onRefused: metrics?.rateLimitRejected,
    now: dependencies.now,
  })
  const loopDelay = createLoopDelay()
  // From here to ready the start loads and compiles: not a loop behind on requests.
  app.addHook('onReady', async () => loopDelay.restart())
  app.addHook('onClose', async () => loopDelay.close())
  const scheduler =
    config.http.maxInFlight > 0
      ? createFairScheduler({
          concurrency: config.http.maxInFlight,
          slowConcurrency: config.http.maxInFlightSlow,
          maxQueuedPerCaller: config.http.maxQueuedPerCaller,
          loopDelayMs: () => loopDelay.delayMs(),
          shedLoopDelayMs: config.http.shedLoopDelayMs,
        })
      : undefined
  if (scheduler !== undefined) dependencies.onScheduler?.(scheduler)
  return { passwordAllowances, services, idempotentWrites, rateLimit, loopDelay, scheduler }
}

/** What the HTTP stages are built from (src/http/pipeline.ts). */
function pipelineOptions(config: Config, parts: AppParts, dependencies: AppDependencies): PipelineOptions {
  const { tracing, metrics, services, rateLimit, scheduler, database, idempotentWrites } = parts
  const { tokens } = services
  const measureWithout = dependencies.measureWithout ?? new Set()
  return {
    traceRequests: tracing && ((app) => tracing.traceRequests(app)),
    countAnswers: metrics && ((app) => metrics.observe(app)),
    graphqlErrorBody: (error) => ({ errors: [requestError(error)] }),
    headers: !measureWithout.has('headers'),
    corsOrigins: config.corsOrigins,
    authenticate: (authorization) => tokens.authenticate(authorization),
    rateLimit,
    scheduler,
    sendTimeoutMs: config.http.sendTimeoutMs,
    caching: measureWithout.has('validators')
      ? undefined
      : {
          maxAgeS: config.cacheMaxAgeS,
          representationCache: { budgetBytes: config.http.representationCacheMb * 2 ** 20, changes: database.changes },
        },
    compression: !measureWithout.has('compression'),
    idempotentWrites,
    observe: dependencies.observePipeline,
  }
}

/** Operations: liveness, readiness (the database decides; Redis is reported), metrics. */
function registerOperations(
  app: FastifyInstance,
  config: Config,
  { database, redisUrl, rateLimitRedis, events, metrics, loopDelay, scheduler }: AppParts,
): void {
  healthRoutes(app, {
    db: database.db,
    loop: () => ({ delayMs: Math.round(loopDelay.delayMs()), shedding: scheduler?.load().shedding ?? false }),
    timeoutMs: config.operations.readyTimeoutMs,
    redis: () => {
      if (redisUrl === undefined) return undefined
      const up = (rateLimitRedis === undefined || rateLimitRedis.status === 'ready') && (events.connected?.() ?? true)
      return up ? 'up' : 'down'
    },
  })
  if (metrics !== undefined) metricsRoute(app, metrics, config.operations.metricsToken)
}

/** The API description and its reference page, and the landing page. */
async function registerPages(app: FastifyInstance, config: Config, { database }: AppParts): Promise<void> {
  // The API description, gathered from the routes below as they are registered (OpenAPI 3.1).
  // The interactive reference reads that document: without it (OPENAPI=false) there is no page.
  if (config.openapi) await registerOpenApi(app, { cacheMaxAgeS: config.cacheMaxAgeS })
  if (config.openapi && config.docs) await app.register(docsPageRoutes, { specUrl: OPENAPI_JSON_PATH })

  // The landing page at /: a page for a browser, the API's index (URL templates) for anything else.
  await app.register(landingPageRoutes, {
    // Each counted as the lists' totals are, up to one past MAX_COUNTED_TOTAL (the page says
    // "10,000+"): a full count of a large table would hold SQLite's synchronous driver, and so the
    // event loop, for as long as the count takes, on every view of the page.
    counts: () => landingCounts(database.db),
    countCap: MAX_COUNTED_TOTAL,
    apiPrefix: `/api/v${DEFAULT_API_VERSION}`,
    resources: API_INDEX,
    paths: {
      graphql: '/graphql',
      graphqlStream: STREAM_PATH,
      graphqlSchema: config.graphql.introspection ? '/graphql/schema.graphql' : undefined,
      graphiql: config.graphql.graphiql ? '/graphiql' : undefined,
      openapi: config.openapi ? OPENAPI_JSON_PATH : undefined,
      docs: config.openapi && config.docs ? DOCS_PATH : undefined,
      health: HEALTH_PATH,
    },
  })
}

/**
 * The REST API, once per version prefix and once unversioned (version from Accept): the API's own
 * stages, then each feature's routes with the relations the others embed in its items and the
 * rate limit's charge for reading them.
 */
async function registerRestApi(app: FastifyInstance, { services, rateLimit }: AppParts, pipeline: Pipeline): Promise<void> {
  const embedded = embeddedIn(services)
  for (const mount of API_MOUNTS) {
    await app.register(
      async (api) => {
        pipeline.registerOnApi(api, mount.version)
        for (const feature of FEATURES)
          await api.register(feature.routes, { ...services, embedded: embedded.get(feature.name) ?? {}, chargeRateLimit: rateLimit.charge })
      },
      { prefix: mount.prefix },
    )
  }
}

/** GraphQL: one endpoint over the same services. */
async function registerGraphql(app: FastifyInstance, config: Config, parts: AppParts, dependencies: AppDependencies): Promise<void> {
  const { services, rateLimit, scheduler, events, persistedQueries, idempotentWrites, tracing, live } = parts
  const { tokens } = services
  await app.register(graphqlRoutes, {
    config: config.graphql,
    parts: graphqlParts(services),
    authenticate: (authorization) => tokens.authenticate(authorization),
    currentCallers: (tokenIds) => tokens.activeCallers(tokenIds),
    consumeRateLimit: rateLimit.consume,
    chargeRateLimit: rateLimit.charge,
    schedule: scheduler && ((key, work, options) => scheduler.run(key, work, options)),
    exposeStats: (stats) => (live.subscriptionStats = stats),
    activeSubscriptions: () => FEATURE_TOPIC_NAMES.reduce((sum, topic) => sum + events.listenerCount(topic), 0),
    events,
    persistedQueryStore: persistedQueries.store,
    persistedQueryAllowance: persistedQueries.allowance,
    idempotentWrites,
    now: dependencies.now,
    tracer: tracing?.graphql,
  })
}

/** What tests and operators read off the app: subscriptions, traces, the faults ridden out. */
function decorateApp(app: FastifyInstance, { live, tracing, rateLimit, passwordAllowances, events }: AppParts): void {
  app.decorate('subscriptionStats', { getter: () => live.subscriptionStats })
  app.decorate('tracing', tracing)
  app.decorate('faults', {
    getter: (): Faults => ({
      // The password allowances count in the same store: their failures are the same fault.
      rateLimitStoreErrors: rateLimit.storeErrors + passwordAllowances.failures.failures,
      eventPublishFailures: events.stats.publishFailures,
      eventInterruptions: events.stats.interruptions,
    }),
  })
}
