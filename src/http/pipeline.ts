// The HTTP pipeline: the stages a request meets, in the order it meets them, each owning its hooks.
// This list is the one place the order is written: registerPipeline adds the stages' hooks in it,
// docs/pipeline.md is written from it (npm run docs:pipeline), and test/http/pipeline.test.ts runs
// requests through the app and checks that, in every phase of Fastify's lifecycle, the hooks run
// in this order. Within a phase Fastify runs the app's hooks in the order they were added, then
// those of the API's plugin, then each route's own (which the onRoute steps add): so a stage whose
// steps are a route's own hooks (compression) comes after the stages whose hooks are the app's.
import type { FastifyInstance, RouteOptions } from 'fastify'
import type { Authenticate } from '../core/caller.js'
import { bodyAjv, compileOnce, textAjv } from '../core/validation.js'
import type { FairScheduler } from '../limits/fair-scheduler.js'
import type { AnswerCharger } from '../limits/answer-bytes.js'
import type { RequestCounting } from '../limits/rate-limit.js'
import { enforceAccess, requireRouteAccess, resolveCaller } from './access.js'
import { registerAnswerBytes } from './answer-bytes.js'
import { type CachingOptions, markRepresentationCacheable, registerCaching } from './caching.js'
import { refuseWhileClosing } from './closing.js'
import { registerCompression } from './compression.js'
import { registerContentTypes } from './content-types.js'
import { registerCors } from './cors.js'
import { type ErrorRenderer, registerErrorHandling } from './error-handler.js'
import { limitRequestsInFlight, scheduleLaterWork } from './in-flight.js'
import { answerUnservedMethods } from './method-not-allowed.js'
import { observeHooks, type PipelineObserver } from './pipeline-observer.js'
import { honourReturnPreference } from './prefer.js'
import { judgeQueryParameters } from './query-parameters.js'
import { registerRateLimit } from './rate-limit-hooks.js'
import { echoRequestId } from './request-id.js'
import { keepRouteConfig } from '../core/route-config-read.js'
import { addSecurityHeaders } from './security-headers.js'
import { redirectTrailingSlash } from './trailing-slash.js'
import { registerUpgradeRequests } from './upgrade-requests.js'
import { type ApiVersion, DEFAULT_API_VERSION, versionHook } from './versioning.js'

/** What the stages are built from: the composition root's parts, handed in (the http layer imports no feature). */
export interface PipelineOptions {
  /** Puts each request in its span (OTEL_* on); absent, nothing is traced. */
  readonly traceRequests?: (app: FastifyInstance) => void
  /** Counts each answer by route, method and status (METRICS on); absent, nothing is counted. */
  readonly countAnswers?: (app: FastifyInstance) => void
  /** How an error is written on a route that says `config.errorBody: 'graphql'`. */
  readonly graphqlErrorBody: ErrorRenderer
  /** false: no request id or security headers (measured without them). */
  readonly headers: boolean
  /** The origins CORS admits; none, no CORS. */
  readonly corsOrigins: readonly string[]
  /** Who a bearer token names. */
  readonly authenticate: Authenticate
  /** The rate limit: the charge of an answer's bytes, and how every request is counted (`requests` undefined when it is off). */
  readonly rateLimit: {
    readonly chargeAnswer: AnswerCharger | undefined
    readonly requests: RequestCounting | undefined
  }
  /** The slots handlers run in (the in-flight limit); undefined, none. */
  readonly scheduler: FairScheduler | undefined
  /** How long an answer may wait on a client that takes none of its bytes. */
  readonly sendTimeoutMs: number
  /** HTTP caching and the representation cache; undefined, neither (measured without validators). */
  readonly caching: CachingOptions | undefined
  /** false: no answer is compressed (measured without compression). */
  readonly compression: boolean
  /** Idempotency-Key on the API's writes: the hooks it gives each API route. */
  readonly idempotentWrites: { readonly onApiRoute: (route: RouteOptions) => void }
  /** Told of each stage's hook as it runs (tests check the order); the hooks are wrapped, so never in production. */
  readonly observe?: PipelineObserver
}

/** A Fastify hook a step runs in; `onRoute` for a step that rewrites each route as it is registered. */
export type StepHook = 'onRoute' | 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend' | 'onResponse'

/** One concern of a stage, for docs/pipeline.md: where it runs, what it does and may reject. */
export interface Step {
  readonly hook: StepHook
  /** A hook of each route's own, which the stage's onRoute hook gives the route as it is registered. */
  readonly perRoute?: true
  readonly name: string
  readonly does: string
  /** Only when: the setting that turns it on. */
  readonly when?: string
}

export interface PipelineStage {
  readonly name: string
  readonly summary: string
  /** Its concerns, in the order they run in each phase. */
  readonly steps: readonly Step[]
  /** Adds its hooks to the app. */
  readonly register?: (app: FastifyInstance, options: PipelineOptions) => void | Promise<void>
  /** Adds its hooks to each mount of the REST API. */
  readonly registerOnApi?: (api: FastifyInstance, options: PipelineOptions, version: ApiVersion | 'negotiated') => void
}

const observation: PipelineStage = {
  name: 'observation',
  summary: 'What operators see of a request, around everything after it.',
  steps: [
    { hook: 'onRequest', name: 'span', does: "the request's span, continuing the caller's trace", when: 'OTEL_*' },
    { hook: 'preValidation', name: 'span', does: 'the span entered again after the body is read', when: 'OTEL_*' },
    { hook: 'onResponse', name: 'metrics', does: 'the answer counted by route, method and status', when: 'METRICS' },
  ],
  register(app, { traceRequests, countAnswers }) {
    traceRequests?.(app)
    countAnswers?.(app)
  },
}

const admission: PipelineStage = {
  name: 'admission',
  summary: 'What any request meets before its caller is known: the error body, the headers every answer carries, what is refused at the door.',
  steps: [
    { hook: 'onRequest', name: 'request id', does: 'X-Request-Id echoed or generated; security headers' },
    { hook: 'onRequest', name: 'closing', does: 'the app is closing → 503 with Retry-After and Connection: close' },
    { hook: 'preParsing', name: 'content types', does: 'a body in another charset than UTF-8, or with a Content-Encoding → 415' },
    { hook: 'onRoute', name: 'access declared', does: 'a route without config.access stops the start (fail closed)' },
    { hook: 'onRequest', name: 'CORS', does: 'preflights answered, headers exposed', when: 'CORS_ORIGINS' },
  ],
  async register(app, options) {
    app.setValidatorCompiler(({ schema, httpPart }) => compileOnce(httpPart === 'body' ? bodyAjv : textAjv, schema))
    registerErrorHandling(app, { graphql: options.graphqlErrorBody })
    if (options.headers) {
      echoRequestId(app)
      addSecurityHeaders(app)
    }
    refuseWhileClosing(app)
    registerContentTypes(app)
    requireRouteAccess(app)
    if (options.corsOrigins.length > 0) registerCors(app, options.corsOrigins)
  },
}

const identityAndLimits: PipelineStage = {
  name: 'identity and limits',
  summary: 'Who is calling, how much they may ask, and where they may go; the rate limit counts the redirects and refusals after it.',
  steps: [
    { hook: 'onRequest', name: 'caller', does: "the token read (own, or an outside issuer's JWT); a bad one remembered, not yet refused" },
    {
      hook: 'onRequest',
      name: 'rate limit',
      does: "counted per user or address (with Redis, from the caller's lease when it holds the point); headers set; over the allowance → 429",
    },
    { hook: 'onRequest', name: 'upgrade requests', does: 'a WebSocket handshake checked (400); any other Upgrade answered as plain HTTP, its socket ended' },
    { hook: 'onRequest', name: 'trailing slash', does: '/users/ → 301 (308 for writes) to /users, query kept' },
    {
      hook: 'onRequest',
      name: 'access',
      does: "a sent token must be valid (401); `signed-in` routes need one (401); a token without the route's scope → 403 insufficient_scope (a WebSocket upgrade to /graphql carries a bad token into the protocol: 4401)",
    },
    { hook: 'onRoute', name: '405s', does: "each path's methods recorded" },
    { hook: 'onRequest', name: '405s', does: 'a path no route matched with this method, that others serve: OPTIONS → 204, any other → 405, with Allow' },
    {
      hook: 'preHandler',
      name: 'in-flight limit',
      does: "a slot of the fair scheduler (probes and streams take none); the caller's queue full → 429 with Retry-After",
      when: 'HTTP_MAX_IN_FLIGHT > 0',
    },
    { hook: 'onSend', name: 'rate limit', does: 'an answer given before the count (a CORS preflight) counted as it leaves' },
    {
      hook: 'onSend',
      name: 'in-flight limit',
      does: "the slot released: the handler's work has ended (what the answer reads later, an export's pages, takes slots of its own: request.inSlot)",
      when: 'HTTP_MAX_IN_FLIGHT > 0',
    },
    { hook: 'onResponse', name: 'upgrade requests', does: 'the socket of an upgrade request that did not become a WebSocket ended' },
  ],
  register(app, options) {
    resolveCaller(app, options.authenticate)
    registerRateLimit(app, options.rateLimit)
    registerUpgradeRequests(app)
    redirectTrailingSlash(app)
    enforceAccess(app)
    answerUnservedMethods(app, { graphql: options.graphqlErrorBody })
    if (options.scheduler !== undefined) limitRequestsInFlight(app, options.scheduler, { sendTimeoutMs: options.sendTimeoutMs })
    scheduleLaterWork(app, options.scheduler)
  },
}

const representation: PipelineStage = {
  name: 'representation',
  summary: 'The answer as it is cached, validated and charged.',
  steps: [
    { hook: 'preHandler', name: 'representation cache', does: "a cached GET's answer sent as it is kept (or 304)", when: 'HTTP_REPRESENTATION_CACHE_MB > 0' },
    { hook: 'preSerialization', name: 'caching', does: 'Last-Modified and Cache-Control of a read' },
    { hook: 'onSend', name: 'caching', does: 'ETag from the bytes; If-None-Match / If-Modified-Since → 304' },
    { hook: 'onSend', name: 'answer bytes', does: 'charged past 64 KiB (a point per 64 KiB); over 16 MiB → 413' },
  ],
  register(app, options) {
    if (options.caching !== undefined) registerCaching(app, options.caching)
    // After caching's 304 (charged for what it sends), before compression (which would hide the bytes made).
    registerAnswerBytes(app, { charge: options.rateLimit.chargeAnswer })
  },
}

const api: PipelineStage = {
  name: 'api',
  summary: "The REST API's own rules, on its routes alone (each mount: /api/v1 and the unversioned one).",
  steps: [
    { hook: 'onRequest', name: 'version', does: 'Accept admits no JSON (nor CSV or NDJSON, on a list), or names an unknown version → 406' },
    { hook: 'onRoute', name: 'representation cache', does: "the API's GETs marked cacheable" },
    {
      hook: 'preValidation',
      perRoute: true,
      name: 'query parameters',
      does: "a GET's json-server words (`_page`, `_sort`, `x_gte` …) read as Threadline's, or → 400 naming the form to use; a query parameter a route that is not a list does not declare → 400",
    },
    {
      hook: 'preHandler',
      perRoute: true,
      name: 'idempotency',
      does: "a write's Idempotency-Key: empty or > 255 → 400; used for another request → 422; still running → 409 + Retry-After; answered → the kept answer, replayed (points given back)",
    },
    { hook: 'onSend', perRoute: true, name: 'kept answer', does: "a write's Idempotency-Key completed with its answer (not a 429 or 5xx: released)" },
    { hook: 'onSend', perRoute: true, name: 'return preference', does: 'a write with Prefer: return=minimal → its status without the body (200 → 204)' },
  ],
  register(app) {
    app.decorateRequest('apiVersion', DEFAULT_API_VERSION)
    app.decorateRequest('queryWords', null)
  },
  registerOnApi(api, options, version) {
    api.addHook('onRequest', versionHook(version))
    api.addHook('onRoute', markRepresentationCacheable)
    api.addHook('onRoute', judgeQueryParameters)
    api.addHook('onRoute', honourReturnPreference)
    // After the return preference: the kept answer is the whole one, and a retry's own Prefer applies to it.
    api.addHook('onRoute', options.idempotentWrites.onApiRoute)
  },
}

const compression: PipelineStage = {
  name: 'compression',
  summary: "The answer's bytes encoded, last: a route's own onSend hook, after every other.",
  steps: [{ hook: 'onSend', perRoute: true, name: 'compression', does: 'br or gzip above 1 KiB, as Accept-Encoding asks' }],
  async register(app, options) {
    if (options.compression) await registerCompression(app)
  },
}

/** The stages, in the order a request meets them. */
export const PIPELINE: readonly PipelineStage[] = [observation, admission, identityAndLimits, representation, api, compression]

export interface Pipeline {
  /** Adds the stages' hooks to a mount of the REST API, before its routes. */
  registerOnApi(api: FastifyInstance, version: ApiVersion | 'negotiated'): void
}

/** Adds every stage's hooks to the app, in the declared order; call before any route is registered. */
export async function registerPipeline(app: FastifyInstance, options: PipelineOptions): Promise<Pipeline> {
  keepRouteConfig(app)
  for (const stage of PIPELINE) {
    const register = stage.register
    if (register !== undefined) await observeHooks(app, stage.name, options.observe, () => register(app, options))
  }
  return {
    registerOnApi(instance, version) {
      for (const stage of PIPELINE) {
        const registerOnApi = stage.registerOnApi
        if (registerOnApi !== undefined) observeHooks(instance, stage.name, options.observe, () => registerOnApi(instance, options, version))
      }
    },
  }
}
