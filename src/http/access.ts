// Who may reach a route at all. Every route declares `config.access`; a route without one stops
// the app at start-up (fail closed). What a caller may do once there is the services' business.
import type { FastifyInstance } from 'fastify'
import type { Caller } from '../caller.js'
import { unauthenticated } from '../errors.js'
import type { TokensService } from '../tokens/tokens.service.js'

/** `public`: anyone, signed in or not. `signed-in`: a valid bearer token is required (else 401). */
export type RouteAccess = 'public' | 'signed-in'

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess
  }
  interface FastifyRequest {
    /** The signed-in caller, or null for an anonymous request. */
    caller: Caller | null
  }
}

export function registerAccess(app: FastifyInstance, tokens: TokensService): void {
  app.addHook('onRoute', (route) => {
    const access = (route.config as { access?: unknown } | undefined)?.access
    if (access !== 'public' && access !== 'signed-in') {
      throw new Error(`Route ${String(route.method)} ${route.url} declares no access rule (config.access)`)
    }
  })

  app.decorateRequest('caller', null)

  // A token that is sent must be valid, even where none is needed: a wrong token is never ignored.
  app.addHook('onRequest', async (request) => {
    const authorization = request.headers.authorization
    if (authorization !== undefined) {
      request.caller = await tokens.authenticate(authorization)
    } else if (request.routeOptions.config.access === 'signed-in') {
      throw unauthenticated()
    }
  })
}
