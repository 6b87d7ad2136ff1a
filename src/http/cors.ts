// CORS (the Fetch standard, §3.2) for browser pages on the origins in CORS_ORIGINS. Tokens travel
// in Authorization, not cookies, so credentials stay off; the headers a client needs to page, cache
// and pace itself are exposed.
//
// Our own hook rather than @fastify/cors: with a list of origins and preflights told apart from
// other OPTIONS, the plugin merged its options into two new objects of some twenty fields on every
// request, and read Fastify's route options (built anew on each read) twice. That was a third of a
// cached GET's time (docs/decisions/0076-cors-as-one-hook.md); what is left here is a set lookup
// and three headers.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { varyAdder } from './vary.js'

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE'
const ALLOWED_HEADERS = 'Accept, Authorization, Content-Type, If-Match, If-None-Match, If-Modified-Since, Idempotency-Key, Prefer, X-Request-Id'
const EXPOSED_HEADERS = [
  'API-Version',
  'ETag',
  'Idempotent-Body-Omitted',
  'Idempotent-Replayed',
  'Last-Modified',
  'Link',
  'Location',
  'Preference-Applied',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'WWW-Authenticate',
  'X-Accepted-OAuth-Scopes',
  'X-OAuth-Scopes',
  'X-RateLimit-Cost',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Request-Id',
].join(', ')
/** How long a browser may keep a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE_S = '600'

/**
 * A preflight is an OPTIONS with an Origin and Access-Control-Request-Method (§3.2.2). Any other
 * OPTIONS is an ordinary request: the router answers it, 204 with Allow on a known path and 404
 * elsewhere (src/http/method-not-allowed.ts).
 */
const isPreflight = (request: FastifyRequest) => request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined

/**
 * Answers the preflights of the allowed origins, and tells those origins, on every other answer,
 * that they may read it and which headers. Every answer names Origin in Vary, with or without an
 * Origin asked: whether a stored answer carries Access-Control-Allow-Origin depends on it (§3.2.5).
 * A preflight or request from any other origin gets no CORS header: the browser refuses to hand the
 * answer to the page.
 */
export function registerCors(app: FastifyInstance, origins: readonly string[]): void {
  const allowed = new Set(origins)
  const addVaryOrigin = varyAdder('Origin')
  app.addHook('onRequest', (request, reply, done) => {
    addVaryOrigin(reply)
    const origin = request.headers.origin
    if (origin === undefined || !allowed.has(origin)) return done()
    reply.header('access-control-allow-origin', origin)
    if (!isPreflight(request)) {
      reply.header('access-control-expose-headers', EXPOSED_HEADERS)
      return done()
    }
    reply.header('access-control-allow-methods', ALLOWED_METHODS)
    reply.header('access-control-allow-headers', ALLOWED_HEADERS)
    reply.header('access-control-max-age', PREFLIGHT_MAX_AGE_S)
    // Answered here, before the caller is known (a preflight carries no credentials): the chain
    // stops without done(). Content-Length 0, which some browsers wait for on a 204.
    reply.code(204).header('content-length', '0').send()
  })
}
