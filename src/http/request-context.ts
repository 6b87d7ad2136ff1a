// Per-request plumbing: the request id (the client's X-Request-Id when it is sane, else a UUID)
// echoed on every response, security headers, the redirect of a trailing slash, and one log line
// per request instead of Fastify's two.
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { IncomingMessage } from 'node:http'
import { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify'

const SANE_REQUEST_ID = /^[\w.:@-]{1,128}$/

export function generateRequestId(request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID()
}

/** Where the line of a request that went well is written, and from which level on it is. */
export interface RequestLines {
  write(line: string): void
  /** Lines of requests that went well are written at info (debug for machines' quiet routes). */
  readonly info: boolean
  readonly debug: boolean
  /**
   * One line for a person at a terminal (LOG_FORMAT=pretty) instead of JSON: time, method, URL,
   * status, latency. The URL, query included, is shown here only: the terminal is the developer's own.
   * @default undefined
   */
  readonly pretty?: { colors: boolean }
}

const HOSTNAME = JSON.stringify(hostname())

/**
 * Logs each request once, when it completes: route, status, latency and the caller. The line of a
 * request that went well is written here, as pino writes its lines (the same fields, in the same
 * order), straight to the log's destination: through pino, with its redaction paths and its
 * serializers, it was a tenth of GET one user's throughput, and its fields are known and hold
 * nothing secret (the route's template, not the URL; a request id that is a UUID or passed
 * SANE_REQUEST_ID). Failures go through the request's own logger, redacted, as every other line.
 */
export class OneLinePerRequest extends LogController {
  constructor(private readonly lines: RequestLines) {
    super()
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const ms = Math.round(reply.elapsedTime * 100) / 100
    if (error) {
      const line = { method: request.method, route: request.routeOptions.url, status: reply.statusCode, ms, userId: request.caller?.userId }
      request.log.error({ ...line, err: error }, 'request failed')
      return
    }
    const quiet = request.routeOptions.config.quietLog === true && reply.statusCode < 400
    if (quiet ? !this.lines.debug : !this.lines.info) return
    if (this.lines.pretty !== undefined) {
      this.lines.write(prettyRequestLine(request.method, request.url, reply.statusCode, ms, this.lines.pretty.colors))
      return
    }
    const route = request.routeOptions.url
    const userId = request.caller?.userId
    this.lines.write(
      `{"level":${quiet ? 20 : 30},"time":${Date.now()},"pid":${process.pid},"hostname":${HOSTNAME},"reqId":${JSON.stringify(request.id)},` +
        `"method":${JSON.stringify(request.method)}${route === undefined ? '' : `,"route":${JSON.stringify(route)}`},"status":${reply.statusCode},"ms":${ms}` +
        `${userId === undefined ? '' : `,"userId":${userId}`},"msg":"request"}\n`,
    )
  }
}

const two = (n: number): string => String(n).padStart(2, '0')
const STATUS_COLORS = { 2: 32, 3: 36, 4: 33, 5: 31 } as Record<number, number> // green, cyan, yellow, red

/** `[01:02:03.456] GET /api/v1/users?limit=2 → 200 3.1 ms`, in local time as pino-pretty writes its lines. */
export function prettyRequestLine(method: string, url: string, status: number, ms: number, colors: boolean): string {
  const now = new Date()
  const time = `${two(now.getHours())}:${two(now.getMinutes())}:${two(now.getSeconds())}.${String(now.getMilliseconds()).padStart(3, '0')}`
  const color = STATUS_COLORS[Math.floor(status / 100)]
  const shownStatus = colors && color !== undefined ? `\x1b[${color}m${status}\x1b[39m` : String(status)
  // A URL is printable ASCII on the wire (Node refuses control characters in the request line).
  return `[${time}] ${method} ${url} → ${shownStatus} ${ms.toFixed(1)} ms\n`
}

/**
 * Sent with every answer: the request id, and headers that keep a browser from sniffing JSON as
 * something else, from framing or running it, and from leaking our URLs in Referer.
 */
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
}

export function registerRequestContext(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
    reply.headers(SECURITY_HEADERS)
  })
}

/**
 * A path with a trailing slash names the same resource without it: redirect there, before
 * routing (the router would match `/users/` as `/users/:id` with an empty id). 301 for reads;
 * 308 for writes, which must keep their method and body.
 */
export function redirectTrailingSlash(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const canonical = withoutTrailingSlash(request.url)
    if (canonical === undefined) return
    const status = request.method === 'GET' || request.method === 'HEAD' ? 301 : 308
    return reply.code(status).header('location', canonical).send()
  })
}

/**
 * The URL without the trailing slash of its path (the query kept), or undefined when there is
 * none to remove. Only plain paths are redirected: a browser reads "//host" and "/\\host" as
 * another site, so a backslash (raw or %5C) or a leading "//" is never sent back in Location.
 */
function withoutTrailingSlash(url: string): string | undefined {
  const queryAt = url.indexOf('?')
  const pathEnd = queryAt === -1 ? url.length : queryAt
  if (pathEnd <= 1 || url.charCodeAt(pathEnd - 1) !== 47 /* / */) return undefined
  const path = url.slice(0, pathEnd).replace(/\/+$/, '')
  if (!/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/.test(path) || path.startsWith('//') || /%5c/i.test(path)) return undefined
  return path + url.slice(pathEnd)
}
