// What a route says about itself in its `config` (Fastify's per-route context config): every flag,
// in one place, with what it means and which module reads it. A route declares most of them; a few
// are set by an onRoute hook as the route is registered. The modules that read a flag read it with
// routeConfigOf(request) (src/core/route-config-read.ts), or from the route's options as it is
// registered, and declare nothing.
import type { CollectionSpec } from '../collections/collection-spec.js'
import type { Reference } from '../collections/embedding.js'
import type { Scope } from '../core/caller.js'
import type { RouteOpenApi } from './openapi/route-openapi.js'

/** `public`: anyone, signed in or not. `signed-in`: a valid bearer token is required (else 401). */
export type RouteAccess = 'public' | 'signed-in'

/** The fields `select` may name and the relations `include` may, each one object or a capped list. */
export interface RepresentationShape {
  readonly fields: readonly string[]
  readonly relations: Readonly<Record<string, 'one' | 'list'>>
  /** Of each `one` relation, where its object comes from (json-server's `_expand` reads it: query-parameters.ts). */
  readonly references: Readonly<Record<string, Reference>>
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Who may reach the route; required on every route (access.ts stops the start without
     * it). The API description reads it too, for the operation's `security`.
     */
    access?: RouteAccess
    /**
     * The scope a token needs here (access.ts): `read` for GET and HEAD, `write` for the other
     * methods unless the route says otherwise. POST /graphql says `read`: its mutations need
     * `write`, judged with the operation (graphql/pipeline/operation-pipeline.ts).
     */
    scope?: Scope
    /** A WebSocket upgrade here with a refused token is let through, to be refused by its protocol with close 4401 (access.ts). */
    refusesTokensInProtocol?: boolean
    /** The route reads the Authorization header itself (GET /metrics and METRICS_TOKEN): it names no user (access.ts). */
    ownAuthorization?: boolean
    /**
     * How the route's errors are written: the REST envelope (the default), or GraphQL's `errors`
     * list (error-handler.ts; method-not-allowed.ts gives the route's 405s the same).
     */
    errorBody?: 'graphql'
    /**
     * Not counted against the rate limit, and acquires no slot of the scheduler: probes and scrapers,
     * GET /health, /ready, /metrics (limits/rate-limit.ts, rate-limit-hooks.ts, in-flight.ts).
     */
    unmetered?: boolean
    /**
     * The answer is a file of the package (a page's script or style): the same for every caller, held
     * once in memory, cached by browsers for a day. Charged its request's point, not its bytes
     * (answer-bytes.ts).
     */
    packagedFile?: boolean
    /** The route holds its connection open (an event stream): it acquires no slot of the scheduler (in-flight.ts). */
    longLived?: boolean
    /**
     * false: an Idempotency-Key sent to this write is ignored and its answer never kept (sign-in:
     * its answer holds a token, which the store keeps only as a hash). Read as the API's routes are
     * registered (idempotency/idempotent-writes.ts).
     */
    idempotencyKeys?: false
    /** Asked every few seconds by machines (probes, scrapers): its request line is logged at debug, not info (request-log.ts). */
    quietLog?: boolean
    /**
     * Set as a route with a WebSocket handler is registered: an upgrade request there becomes a
     * WebSocket session (set and read by upgrade-requests.ts; in-flight.ts reads it too).
     */
    upgrades?: boolean
    /**
     * Set on the API's routes as they are registered: their GET answers depend only on the data,
     * the URL, Accept and the caller, so the representation cache may keep them (caching.ts).
     */
    representationCacheable?: boolean
    /**
     * The tables a GET's representation is read from, its own first (a comment: comments, then the
     * posts that decide whether it is seen and the users whose names it shows): the representation
     * cache keeps the answer until one of them changes (of one resource, until its own row does).
     * Absent: the answer depends on every table.
     */
    reads?: readonly string[]
    /**
     * false for answers that embed other resources (a comment's author): their own updatedAt
     * cannot date the whole answer, so only the ETag validates them (caching.ts).
     */
    lastModifiedCoversAll?: boolean
    /** The collection a list route reads: its query parameters are described from it (openapi/openapi-plugin.ts). */
    collection?: CollectionSpec
    /**
     * What a GET route's `select` and `include` may name (representationShapeOf writes it): its
     * query parameters are described from it (openapi/openapi-plugin.ts).
     */
    representation?: RepresentationShape
    /**
     * The route's text for the API description; required on every route of a described mount, or
     * the app does not start (openapi/openapi-plugin.ts).
     */
    openapi?: RouteOpenApi
  }
}
