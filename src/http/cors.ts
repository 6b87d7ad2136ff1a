// CORS for browser clients of the origins in CORS_ORIGINS. Tokens travel in Authorization, not
// cookies, so credentials stay off; the headers a client needs to page, cache and pace itself
// are exposed.
import type { FastifyCorsOptions } from '@fastify/cors'
import type { FastifyRequest } from 'fastify'

const CORS_OPTIONS: FastifyCorsOptions = {
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  allowedHeaders: ['Accept', 'Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'If-Modified-Since', 'Idempotency-Key', 'Prefer', 'X-Request-Id'],
  // Joined once here: the plugin joins an array on every request.
  exposedHeaders: [
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
  ].join(', '),
  credentials: false,
  maxAge: 600,
}

/**
 * A preflight is an OPTIONS with an Origin and Access-Control-Request-Method (Fetch standard,
 * §3.2.2); @fastify/cors answers it before routing. Any other OPTIONS is an ordinary request: it
 * goes on to the router, which answers 204 with Allow on a known path and 404 elsewhere — left to
 * the plugin, it would be a text/plain 400 "Invalid Preflight Request" (strictPreflight) or a 204
 * without Allow.
 */
const isPreflight = (request: FastifyRequest) =>
  request.method === 'OPTIONS' && request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined

/** The options of @fastify/cors for these origins, preflights told from other OPTIONS per request. */
export function corsOptions(origins: readonly string[]): FastifyCorsOptions {
  const preflights: FastifyCorsOptions = { ...CORS_OPTIONS, origin: [...origins] }
  const others: FastifyCorsOptions = { ...preflights, preflight: false }
  return { delegator: (request, callback) => callback(null, isPreflight(request) ? preflights : others) }
}
