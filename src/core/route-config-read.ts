// The config of the route a request matched (its flags: src/http/route-config.ts), read once a request.
import type { FastifyInstance, FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyRequest {
    /** The route's config once routeConfigOf has read it; null before. */
    routeConfigRead: RouteConfig | null
  }
}

/** A route's config: the flags src/http/route-config.ts declares, and its URL pattern and method (Fastify's own). */
export type RouteConfig = FastifyRequest['routeOptions']['config']

/**
 * The config of the route a request matched. Fastify builds `request.routeOptions` anew on each
 * read (an object of a dozen fields), and a request's hooks ask for the config ten times: it is read
 * once and kept on the request.
 */
export function routeConfigOf(request: FastifyRequest): RouteConfig {
  return (request.routeConfigRead ??= request.routeOptions.config)
}

/** Makes the kept config part of every request's shape (called once, on the root app). */
export function keepRouteConfig(app: FastifyInstance): void {
  app.decorateRequest('routeConfigRead', null)
}
