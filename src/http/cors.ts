// CORS for browser clients of the origins in CORS_ORIGINS. Tokens travel in Authorization, not
// cookies, so credentials stay off; the headers a client needs to page, cache and pace itself
// are exposed.
import type { FastifyCorsOptions } from '@fastify/cors'

export const CORS_OPTIONS: FastifyCorsOptions = {
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  allowedHeaders: ['Accept', 'Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'If-Modified-Since', 'X-Request-Id'],
  exposedHeaders: [
    'API-Version',
    'ETag',
    'Last-Modified',
    'Link',
    'Location',
    'Retry-After',
    'RateLimit',
    'RateLimit-Policy',
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
    'X-Request-Id',
  ],
  credentials: false,
  maxAge: 600,
  strictPreflight: true,
}
