// The request id: the client's X-Request-Id when it is sane, else a UUID; echoed on every answer,
// and quoted by the log lines and by a masked INTERNAL_ERROR.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'

/** What a request id may be: short, and nothing a log line or a header would have to escape. */
const SANE_REQUEST_ID = /^[\w.:@-]{1,128}$/

/** Fastify's `genReqId`: the id a request is known by. */
export function generateRequestId(request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID()
}

/** Every answer carries its request's id in X-Request-Id. */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
}
