// A known path asked with a method it does not serve is 405 with an Allow header (RFC 9110
// §15.5.6), not 404. The router knows only exact method+path pairs, so once every route is
// registered, each path gets a route for the methods it lacks.
import type { FastifyInstance, HTTPMethods } from 'fastify'
import { AppError } from '../errors.js'

const ANSWERED: readonly HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

/** Starts recording routes; call the returned function after the last route is registered. */
export function trackAllowedMethods(app: FastifyInstance): () => void {
  const methodsByUrl = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    const methods = methodsByUrl.get(route.url) ?? new Set<string>()
    for (const method of [route.method].flat()) methods.add(method)
    methodsByUrl.set(route.url, methods)
  })

  return () => {
    for (const [url, served] of [...methodsByUrl]) {
      const missing = ANSWERED.filter((method) => !served.has(method))
      if (missing.length === 0) continue
      const allow = ANSWERED.filter((method) => served.has(method)).join(', ')
      app.route({
        method: missing,
        url,
        config: { access: 'public' },
        handler: async (request, reply) => {
          reply.header('allow', allow)
          throw new AppError('METHOD_NOT_ALLOWED', `${request.method} is not served here; use ${allow}`)
        },
      })
    }
  }
}
