// A known path asked with a method it does not serve is 405 with an Allow header (RFC 9110
// §15.5.6), not 404 — whatever the method, TRACE and WebDAV's PROPFIND included. OPTIONS on a path
// answers 204 with Allow (RFC 9110 §9.3.7); with CORS on, a browser's preflight is answered by an
// earlier hook (src/http/cors.ts) and any other OPTIONS comes here.
//
// Fastify's router knows only exact method+path pairs, and keeps a tree per method: a route for
// each method a path lacks (some thirty of Node's) made most of the time and memory of the app's
// start. Instead the paths are kept once, in a router of their own, and asked only by the requests
// Fastify's router found nothing for (its 404s).
import { METHODS } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, HTTPMethods } from 'fastify'
import FindMyWay from 'find-my-way'
import { AppError } from '../errors.js'
import { type ErrorRenderer, sendError } from './error-handler.js'

/** The methods a path may serve, in the order Allow lists them. */
const ANSWERED: readonly HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

/**
 * Every method Node's parser reads (any other is a 400 before routing). CONNECT never reaches a
 * route: Node hands it to the server's 'connect' listener, and without one closes the socket.
 */
const PARSED_METHODS = METHODS.filter((method) => method !== 'CONNECT')

/** What is known of a path: the methods its routes serve, and how its errors are written. */
interface ServedPath {
  readonly served: Set<string>
  errorBody: 'graphql' | undefined
}

/** The one method the paths are kept under in their own router: it stands for "any". */
const KEPT_UNDER = 'GET'

/**
 * Records every route's path and methods as it is registered, and answers a request Fastify's
 * router did not match whose path another method serves: OPTIONS → 204, any other → 405, both
 * with Allow. Register after the hooks that must run first (the caller, the rate limit, access):
 * those are the ones the answer passes through, as any route's would.
 */
export function answerUnservedMethods(app: FastifyInstance, renderers: { graphql: ErrorRenderer }): void {
  // Fastify routes only the methods it was told of; the rest would fall to no handler at all.
  for (const method of PARSED_METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true })
  }
  // The same defaults as Fastify's own router (the app sets none of its options), so a path
  // matches here as it would there.
  const paths = FindMyWay({ defaultRoute: () => {} })

  const answer = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const path = paths.find(KEPT_UNDER, request.url)?.store as ServedPath | undefined
    // Unknown, or served with this method under a constraint the request did not meet: a 404.
    if (path === undefined || path.served.has(request.method)) return done()
    const allow = [...ANSWERED.filter((method) => path.served.has(method)), 'OPTIONS'].join(', ')
    reply.header('allow', allow)
    if (request.method === 'OPTIONS') {
      reply.code(204).send()
      return
    }
    // Refused before the body is read: a QUERY or PROPFIND is not parsed only to be turned away.
    const refusal = new AppError('METHOD_NOT_ALLOWED', `${request.method} is not served here; use ${allow}`)
    sendError(refusal, request, reply, path.errorBody === 'graphql' ? renderers.graphql : undefined)
  }

  app.addHook('onRoute', (route) => {
    // Two patterns the router reads as one ('/users/:id', '/users/:userId') are one path.
    let path = paths.findRoute(KEPT_UNDER, route.url)?.store as ServedPath | undefined
    if (path === undefined) {
      path = { served: new Set(), errorBody: undefined }
      paths.on(KEPT_UNDER, route.url, () => {}, path)
    }
    for (const method of [route.method].flat()) path.served.add(method)
    path.errorBody ??= route.config?.errorBody
  })

  // What Fastify's router matched to no path: its 404s.
  app.addHook('onRequest', (request, reply, done) => (request.is404 ? answer(request, reply, done) : done()))
}
