// The composition root: opens the store, builds the services, and wires them into Fastify.
// The list of registrations below is the table of contents of the service, in the order a
// request meets them. Tests build the app with this same function.
import { createRequire } from 'node:module'
import fastifyCors from '@fastify/cors'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import pino from 'pino'
import type { Config } from './config.js'
import { APP_TOPICS, type AppTopics, createServices, FEATURES, graphqlParts } from './features.js'
import { type Database, openDatabase, SERVING_PAGE_CACHE_KIB } from './db/create-database.js'
import { countRows, MAX_COUNTED_TOTAL } from './db/list-page.js'
import type { Events } from './events/events.js'
import { createMemoryEvents } from './events/memory-events.js'
import { createRedisEvents } from './events/redis-events.js'
import { requestError } from './graphql/errors.js'
import { graphqlRoutes } from './graphql/graphql-routes.js'
import { createLruStore, createRedisStore } from './graphql/persisted-queries.js'
import type { SubscriptionStats } from './graphql/subscriptions/subscription-server.js'
import { enforceAccess, requireRouteAccess, resolveCaller } from './http/access.js'
import { markRepresentationCacheable, registerCaching } from './http/caching.js'
import { MAX_BODY_BYTES, registerContentTypes } from './http/content-types.js'
import { registerCompression } from './http/compression.js'
import { corsOptions } from './http/cors.js'
import { DOCS_PATH, docsPageRoutes } from './pages/docs-page.js'
import { frontDoorRoutes, type ResourceCounts } from './pages/front-door.js'
import { visible } from './posts/post-visibility.js'
import { HEALTH_PATH } from './operations/health.js'
import { STREAM_PATH } from './graphql/subscriptions/subscription-server.js'
import { onClientError, onFrameworkError, registerErrorHandling } from './http/error-handler.js'
import { trackAllowedMethods } from './http/method-not-allowed.js'
import { OPENAPI_JSON_PATH, registerOpenApi } from './http/openapi/openapi-plugin.js'
import { healthRoutes } from './operations/health.js'
import { countedEvents, createMetrics, metricsRoute } from './operations/metrics.js'
import { generateRequestId, OneLinePerRequest, redirectTrailingSlash, registerRequestContext } from './http/request-context.js'
import { refuseWhileClosing } from './http/closing.js'
import { registerUpgradeRequests } from './http/upgrade-requests.js'
import { API_MOUNTS, DEFAULT_API_VERSION, versionHook } from './http/versioning.js'
import { createLimiter, storeFailureLog } from './limits/limiter.js'
import { createFairScheduler } from './limits/fair-scheduler.js'
import { limitRequestsInFlight } from './limits/in-flight.js'
import { registerRateLimit } from './limits/rate-limit.js'
import { closeRedisConnection, createRedisConnection, firstAttempt } from './redis/connection.js'
import { bodyAjv, textAjv } from './core/validation.js'

/** Whether lines at `line` are written when the log is at `level` ('silent' is above them all). */
const logs = (level: Config['logLevel'], line: 'info' | 'debug'): boolean => (pino.levels.values[level] ?? Infinity) <= (pino.levels.values[line] ?? 0)

const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops

declare module 'fastify' {
  interface FastifyInstance {
    /** Open subscription connections and dropped slow subscribers. */
    readonly subscriptionStats: SubscriptionStats
    /** Failures the service absorbed (Redis away), each logged when a run of them starts. */
    readonly faults: Faults
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
}

/** How often the server looks for connections past their headers or request timeout. */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1000

/**
 * The JSON lines, to stdout: gathered up to 4 KB and written synchronously, and at least every 100
 * ms, so a line waits a tenth of a second at most; what is pending is written when the process
 * exits, whatever the reason (a machine that loses power, or a SIGKILL, may lose the last tenth of
 * a second). One write(2) per request was a sixth of GET one user's throughput. An asynchronous
 * destination was slower still (8,400 against 9,500 req/s on one core: the write moved to a thread
 * of the same core, and cost more to hand over than to make). One per process: stdout is one.
 */
let stdoutLog: ReturnType<typeof pino.destination> | undefined
function stdoutLogStream(): NodeJS.WritableStream {
  if (stdoutLog === undefined) {
    const stream = pino.destination({ dest: 1, sync: true, minLength: 4096, periodicFlush: 100 })
    process.on('exit', () => stream.flushSync())
    stdoutLog = stream
  }
  return stdoutLog as unknown as NodeJS.WritableStream
}

/**
 * pino-pretty, loaded only when the log is pretty (stdout a terminal, or LOG_FORMAT=pretty); written
 * synchronously, as pino's default stream is. The request lines come readable already
 * (OneLinePerRequest's pretty form) and pass through it as they are.
 */
function prettyLogStream(): NodeJS.WritableStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as (options: object) => NodeJS.WritableStream
  return pretty({ sync: true, colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
}

/**
 * What an anonymous caller can see of each resource, for the front door: every user and todo,
 * published posts and the comments on them (the services' rule for drafts, posts/post-visibility).
 * Each counted as the lists' totals are, up to one past MAX_COUNTED_TOTAL (the page says "10,000+"):
 * a full count of a large table would hold SQLite's synchronous driver, and so the event loop, for
 * as long as the count takes, on every view of the page.
 */
async function countResources(db: Database['db']): Promise<ResourceCounts> {
  const anonymous = { allDrafts: false, ownerId: null }
  const [users, posts, comments, todos] = await Promise.all([
    countRows(db, db.selectFrom('users')),
    countRows(db, db.selectFrom('posts').where(visible('posts', anonymous))),
    countRows(db, db.selectFrom('comments').innerJoin('posts', 'posts.id', 'comments.post_id').where(visible('posts', anonymous))),
    countRows(db, db.selectFrom('todos')),
  ])
  return { users, posts, comments, todos }
}

export async function buildApp(config: Config, dependencies: AppDependencies = {}): Promise<FastifyInstance> {
  const database = dependencies.database ?? openDatabase(config.database, { pageCacheKib: SERVING_PAGE_CACHE_KIB })
  const { db } = database

  let subscriptionStats: SubscriptionStats = { connections: 0, subscriptions: 0, droppedSlowConsumers: 0 }
  const logStream = dependencies.logStream ?? (config.logFormat === 'pretty' ? prettyLogStream() : stdoutLogStream())
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers.cookie', '*.headers.authorization', '*.headers.cookie', '*.password'],
      stream: logStream,
    },
    // A request that arrives while the app closes is answered by refuseWhileClosing, in our words.
    return503OnClosing: false,
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
  // Shared through Redis when REDIS_URL is set (events across instances, one rate-limit allowance),
  // else in this process. A Redis that is away holds the start for at most a moment.
  const { url: redisUrl, keyPrefix } = config.redis
  const rateLimitRedis =
    redisUrl === undefined || config.rateLimit.max === 0
      ? undefined
      : createRedisConnection({ url: redisUrl, name: `${keyPrefix}rate-limit`, log: app.log, mode: 'commands' })
  // The documents of persisted queries: registered on one instance, known to all. They go over the
  // rate limit's connection (both are plain commands), or one of their own when there is none.
  const persisted = config.graphql.persistedQueries
  const sharesPersisted = redisUrl !== undefined && persisted.enabled && !persisted.trustedOnly
  const ownPersistedRedis =
    sharesPersisted && rateLimitRedis === undefined
      ? createRedisConnection({ url: redisUrl, name: `${keyPrefix}persisted-queries`, log: app.log, mode: 'commands' })
      : undefined
  const persistedRedis = sharesPersisted ? (rateLimitRedis ?? ownPersistedRedis) : undefined
  const persistedLocal = createLruStore(persisted.cacheBytes)
  const persistedQueryStore =
    persistedRedis === undefined
      ? persistedLocal
      : createRedisStore({ redis: persistedRedis, keyPrefix, ttlMs: persisted.ttlMs, budgetBytes: persisted.redisBytes, local: persistedLocal, log: app.log })
  // Each caller's registered bytes, counted where the documents go. Redis away lets registrations
  // through uncounted: they then stay in this process's LRU, which bounds itself.
  const persistedQueryAllowance = createLimiter({
    name: 'persisted-query-bytes',
    points: persisted.callerBytes,
    windowMs: persisted.callerWindowMs,
    redis: persistedRedis && { redis: persistedRedis, keyPrefix },
    onStoreError: 'open',
    log: app.log,
    counts: 'persisted-query registrations',
    now: dependencies.now,
  })
  const [eventsAdapter] = await Promise.all([
    dependencies.events ??
      (redisUrl === undefined
        ? createMemoryEvents<AppTopics>({ log: app.log })
        : createRedisEvents({ url: redisUrl, keyPrefix, log: app.log, topics: APP_TOPICS })),
    rateLimitRedis && firstAttempt(rateLimitRedis),
    ownPersistedRedis && firstAttempt(ownPersistedRedis),
  ])
  const metrics = config.operations.metrics ? createMetrics({ subscriptionStats: () => subscriptionStats, faults: () => app.faults, database }) : undefined
  const events = metrics === undefined ? eventsAdapter : countedEvents(eventsAdapter, metrics.events)
  // Password work has allowances of its own (config.passwords says which and why), counted where
  // the rate limit counts: in Redis when it is shared, else in this process. One store, so one log
  // of its failures for the four (one line per outage, not one per allowance).
  const { passwords } = config
  const passwordFailures = storeFailureLog(app.log, 'password-allowances', config.rateLimit.onStoreError, 'sign-ins and password changes')
  const passwordAllowance = (name: string, points: number, windowMs: number) =>
    createLimiter({
      name,
      points,
      windowMs,
      redis: rateLimitRedis && { redis: rateLimitRedis, keyPrefix },
      onStoreError: config.rateLimit.onStoreError,
      log: app.log,
      failures: passwordFailures,
      now: dependencies.now,
    })
  const services = createServices({
    db,
    events,
    ...(database.dataVersion === undefined ? {} : { dataVersion: database.dataVersion }),
    passwordChanges: passwordAllowance('password-changes', passwords.changesMax, passwords.changesWindowMs),
    scryptN: passwords.scryptN,
    tokenTtlMs: config.tokenTtlMs,
    signInAllowance: {
      perAddress: passwordAllowance('sign-in-address', passwords.signInMaxPerAddress, passwords.signInWindowMs),
      perAccountAndAddress: passwordAllowance('sign-in-account-address', passwords.signInMaxPerAccountAndAddress, passwords.signInWindowMs),
      perAccount: passwordAllowance('sign-in-account', passwords.signInMaxPerAccount, passwords.signInWindowMs),
    },
  })
  app.addHook('onClose', async () => {
    await events.close()
    if (rateLimitRedis !== undefined) await closeRedisConnection(rateLimitRedis)
    if (ownPersistedRedis !== undefined) await closeRedisConnection(ownPersistedRedis)
    await database.close()
  })

  // HTTP wiring, in the order a request meets it: validation and errors; request id and security
  // headers; CORS (so even refusals can be read by the browser); who is calling; the rate limit
  // (which counts redirects and refusals too); requests that ask to upgrade the connection;
  // trailing-slash redirects; who may reach the route; caching and compression of the answer.
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema))
  registerErrorHandling(app, { graphql: (error) => ({ errors: [requestError(error)] }) })
  if (!config.measureWithout.has('headers')) registerRequestContext(app)
  refuseWhileClosing(app)
  metrics?.observe(app)
  registerContentTypes(app)
  requireRouteAccess(app)
  const answerUnservedMethods = trackAllowedMethods(app)
  if (config.corsOrigins.length > 0) await app.register(fastifyCors, corsOptions(config.corsOrigins))
  const { tokens } = services
  const authenticate = (authorization: string) => tokens.authenticate(authorization)
  resolveCaller(app, authenticate)
  const rateLimitStore = rateLimitRedis && { redis: rateLimitRedis, keyPrefix }
  const rateLimit = await registerRateLimit(app, config.rateLimit, rateLimitStore, metrics?.rateLimitRejected, dependencies.now)
  app.decorate('chargeRateLimit', rateLimit.charge)
  registerUpgradeRequests(app)
  redirectTrailingSlash(app)
  enforceAccess(app)
  const scheduler =
    config.http.maxInFlight > 0 ? createFairScheduler({ concurrency: config.http.maxInFlight, maxQueuedPerCaller: config.http.maxQueuedPerCaller }) : undefined
  app.decorate('scheduler', scheduler)
  if (scheduler !== undefined) limitRequestsInFlight(app, scheduler)
  if (!config.measureWithout.has('validators')) {
    const { dataVersion } = database
    registerCaching(app, {
      maxAgeS: config.cacheMaxAgeS,
      ...(dataVersion === undefined ? {} : { representations: { budgetBytes: config.http.representationCacheMb * 2 ** 20, dataVersion } }),
    })
  }
  if (!config.measureWithout.has('compression')) await registerCompression(app)
  app.decorateRequest('apiVersion', DEFAULT_API_VERSION)

  // Operations: liveness, readiness (the database decides; Redis is reported), metrics.
  healthRoutes(app, {
    db,
    timeoutMs: config.operations.readyTimeoutMs,
    redis: () => {
      if (redisUrl === undefined) return undefined
      const up = (rateLimitRedis === undefined || rateLimitRedis.status === 'ready') && (events.connected?.() ?? true)
      return up ? 'up' : 'down'
    },
  })
  if (metrics !== undefined) metricsRoute(app, metrics, config.operations.metricsToken)

  // The API description, gathered from the routes below as they are registered (OpenAPI 3.1).
  // The interactive reference reads that document: without it (OPENAPI=false) there is no page.
  if (config.openapi) await registerOpenApi(app, { cacheMaxAgeS: config.cacheMaxAgeS })
  if (config.openapi && config.docs) await app.register(docsPageRoutes, { specUrl: OPENAPI_JSON_PATH })

  // The front door at /: a page for a browser, the API's index (URL templates) for anything else.
  await app.register(frontDoorRoutes, {
    counts: () => countResources(db),
    countCap: MAX_COUNTED_TOTAL,
    apiPrefix: `/api/v${DEFAULT_API_VERSION}`,
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

  // The REST API, once per version prefix and once unversioned (version from Accept).
  for (const mount of API_MOUNTS) {
    await app.register(
      async (api) => {
        api.addHook('onRequest', versionHook(mount.version))
        api.addHook('onRoute', markRepresentationCacheable)
        for (const feature of FEATURES) await api.register(feature.routes, services)
      },
      { prefix: mount.prefix },
    )
  }

  // GraphQL: one endpoint over the same services.
  await app.register(graphqlRoutes, {
    config: config.graphql,
    parts: graphqlParts(services),
    authenticate,
    currentCallers: (tokenIds) => tokens.activeCallers(tokenIds),
    consumeRateLimit: rateLimit.consume,
    chargeRateLimit: rateLimit.charge,
    schedule: scheduler && ((key, work, options) => scheduler.run(key, work, options)),
    exposeStats: (stats) => (subscriptionStats = stats),
    activeSubscriptions: () => events.listenerCount('commentAdded'),
    events,
    persistedQueryStore,
    persistedQueryAllowance,
    now: dependencies.now,
  })
  app.decorate('subscriptionStats', { getter: () => subscriptionStats })
  app.decorate('faults', {
    getter: (): Faults => ({
      // The password allowances count in the same store: their failures are the same fault.
      rateLimitStoreErrors: rateLimit.storeErrors + passwordFailures.failures,
      eventPublishFailures: events.stats.publishFailures,
      eventInterruptions: events.stats.interruptions,
    }),
  })

  answerUnservedMethods()
  return app
}
