// Per-request plumbing: the request id (the client's X-Request-Id when it is sane, else a UUID)
// echoed on every response, and one log line per request instead of Fastify's two.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify'

const SANE_REQUEST_ID = /^[\w.:@-]{1,128}$/

export function generateRequestId(request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID()
}

/** Logs each request once, when it completes: route, status, latency and the caller. */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      route: request.routeOptions.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
      userId: request.caller?.userId,
    }
    if (error) request.log.error({ ...line, err: error }, 'request failed')
    else request.log.info(line, 'request')
  }
}

export function registerRequestContext(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
}
