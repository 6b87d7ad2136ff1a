// Who is calling, and who may reach a route at all. Every route declares `config.access`; a route
// without one stops the app at start-up (fail closed). What a caller may do once there is the
// services' business.
//
// Two hooks, so the rate limiter can run between them: `resolveCaller` reads the token (a bad one
// is remembered, not thrown, so it still counts against the client's address), and
// `enforceAccess` then refuses what needs refusing.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { type Authenticate, type Caller, grants, insufficientScope, type Scope } from '../core/caller.js'
import { type AppError, isAppError, unauthenticated } from '../errors.js'
import { routeConfigOf } from '../core/route-config-read.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in caller, or null for an anonymous request. */
    caller: Caller | null
    /** Why the token sent was refused, to be answered once the request has been counted. */
    authenticationError: AppError | null
  }
}

export function requireRouteAccess(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const access = (route.config as { access?: unknown } | undefined)?.access
    if (access !== 'public' && access !== 'signed-in') {
      throw new Error(`Route ${String(route.method)} ${route.url} declares no access rule (config.access)`)
    }
  })
}

export function resolveCaller(app: FastifyInstance, authenticate: Authenticate): void {
  app.decorateRequest('caller', null)
  app.decorateRequest('authenticationError', null)
  // Callbacks, not async functions: both hooks run for every request, most of them without a token.
  app.addHook('onRequest', (request, _reply, done) => {
    const authorization = request.headers.authorization
    if (authorization === undefined || routeConfigOf(request).ownAuthorization === true) return done()
    authenticate(authorization).then(
      (caller) => {
        request.caller = caller
        done()
      },
      (error: unknown) => {
        // A refused token waits for the route's verdict; a store that failed the lookup (a busy database) is answered at once.
        if (!isAppError(error) || error.code !== 'UNAUTHENTICATED') return done(error as Error)
        request.authenticationError = error
        done()
      },
    )
  })
}

/**
 * A token that is sent must be valid, even where none is needed: a wrong token is never ignored.
 * A WebSocket upgrade to a route that says so is let through, to be refused in its protocol.
 * A valid token must have the scope the route needs (403 insufficient_scope); its answer names the
 * token's scope and the one the route accepts, as GitHub's X-OAuth-Scopes and X-Accepted-OAuth-Scopes.
 */
export function enforceAccess(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const config = routeConfigOf(request)
    const inProtocol = config.refusesTokensInProtocol === true && isWebSocketUpgrade(request)
    if (request.authenticationError !== null && !inProtocol) return done(request.authenticationError)
    const { caller } = request
    if (caller === null) return done(config.access === 'signed-in' ? unauthenticated() : undefined)
    // What no route serves (its 404, or the 405 of a path served with other methods) changes nothing.
    const needed = request.is404 ? 'read' : scopeNeeded(request.method, config)
    reply.header('x-oauth-scopes', caller.scope).header('x-accepted-oauth-scopes', needed)
    done(grants(caller, needed) ? undefined : insufficientScope(needed))
  })
}

/** Methods that change nothing: a read token may send them anywhere. */
const READING_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The scope a token needs for a route: its own word, else `read` for a method that changes nothing and `write` for the others. */
export const scopeNeeded = (method: string, config: { scope?: Scope } | undefined): Scope => config?.scope ?? (READING_METHODS.has(method) ? 'read' : 'write')

/** A real upgrade, as Node's HTTP parser saw it (Connection: Upgrade), not just an Upgrade header. */
const isWebSocketUpgrade = (request: FastifyRequest): boolean =>
  (request.raw as { upgrade?: boolean }).upgrade === true && request.headers.upgrade?.toLowerCase() === 'websocket'
