// The config of the route a request matched (its flags: src/http/route-config.ts), read once a request.
import type { FastifyInstance, FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The route's config once routeConfigOf has read it; null before (undefined on the requests
     * Fastify makes for its own errors, a malformed URL's, which skip the decorations).
     */
    routeConfigRead: RouteConfig | null | undefined
  }
}

/** A route's config: the flags src/http/route-config.ts declares, and its URL pattern and method (Fastify's own). */
export type RouteConfig = FastifyRequest['routeOptions']['config']

/**
 * The config of the route a request matched. Fastify builds `request.routeOptions` anew on each
 * read (an object of a dozen fields), and a request's hooks ask for the config ten times: it is read
 * once and kept on the request. A request a route hands on to the not-found handler
 * (`reply.callNotFound()`) is read again: its route is then the not-found one (`request.is404`, a
 * plain lookup).
 */
export function routeConfigOf(request: FastifyRequest): RouteConfig {
  const kept = request.routeConfigRead
  if (kept !== null && kept !== undefined && (kept.url === undefined) === request.is404) return kept
  return (request.routeConfigRead = request.routeOptions.config)
}

/** Makes the kept config part of every request's shape (called once, on the root app). */
export function keepRouteConfig(app: FastifyInstance): void {
  app.decorateRequest('routeConfigRead', null)
}
