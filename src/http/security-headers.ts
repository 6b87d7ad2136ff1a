// Headers sent with every answer, so that a browser never sniffs our JSON as something else, frames
// or runs it, or leaks our URLs in Referer.
import type { FastifyInstance } from 'fastify'

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
}

export function addSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(SECURITY_HEADERS)
    done()
  })
}
