// A known path asked with a method it does not serve is 405 with an Allow header (RFC 9110
// §15.5.6), not 404 — whatever the method, TRACE and WebDAV's PROPFIND included. The router knows
// only exact method+path pairs, so once every route is registered, each path gets a route for the
// methods it lacks. OPTIONS on a path answers 204 with Allow (RFC 9110 §9.3.7); with CORS on, a
// browser's preflight is answered before routing (src/http/cors.ts) and any other OPTIONS comes here.
import { METHODS } from 'node:http'
import type { FastifyInstance, HTTPMethods } from 'fastify'
import { AppError } from '../errors.js'

/** The methods a path may serve, in the order Allow lists them. */
const ANSWERED: readonly HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

/**
 * Every method Node's parser reads (any other is a 400 before routing). CONNECT never reaches a
 * route: Node hands it to the server's 'connect' listener, and without one closes the socket.
 */
const PARSED_METHODS = METHODS.filter((method) => method !== 'CONNECT')

/** A catch-all is not a resource: its 405 would answer every unknown path (CORS's `OPTIONS *` is one). */
const isCatchAll = (url: string) => url === '*' || url === '/*'

/** Starts recording routes; call the returned function after the last route is registered. */
export function trackAllowedMethods(app: FastifyInstance): () => void {
  // Fastify routes only the methods it was told of; the rest would fall to the 404 handler.
  for (const method of PARSED_METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true })
  }
  const methodsByUrl = new Map<string, Set<string>>()
  // A 405 is written like the path's other errors (GraphQL's shape at /graphql).
  const errorBodyByUrl = new Map<string, 'graphql'>()
  app.addHook('onRoute', (route) => {
    if (isCatchAll(route.url)) return
    const methods = methodsByUrl.get(route.url) ?? new Set<string>()
    for (const method of [route.method].flat()) methods.add(method)
    methodsByUrl.set(route.url, methods)
    const errorBody = route.config?.errorBody
    if (errorBody !== undefined) errorBodyByUrl.set(route.url, errorBody)
  })

  return () => {
    for (const [url, served] of [...methodsByUrl]) {
      const answersOptions = !served.has('OPTIONS')
      const allow = [...ANSWERED.filter((method) => served.has(method)), 'OPTIONS'].join(', ')
      if (answersOptions) {
        app.route({ method: 'OPTIONS', url, handler: async (_request, reply) => reply.code(204).header('allow', allow).send() })
      }
      const missing = app.supportedMethods.filter((method) => method !== 'OPTIONS' && !served.has(method))
      if (missing.length === 0) continue
      app.route({
        method: missing,
        url,
        config: { access: 'public', scope: 'read', errorBody: errorBodyByUrl.get(url) },
        // Refused before the body is read: a QUERY or PROPFIND is not parsed only to be turned away.
        onRequest: async (request, reply) => {
          reply.header('allow', allow)
          throw new AppError('METHOD_NOT_ALLOWED', `${request.method} is not served here; use ${allow}`)
        },
        handler: async () => {
          throw new Error('unreachable: onRequest refuses every method of this route')
        },
      })
    }
  }
}
