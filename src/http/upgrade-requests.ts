// Requests that ask to switch protocols (an Upgrade header). Node hands every one of them to the
// server's 'upgrade' listener (the WebSocket plugin's), detached from its HTTP parser; the listener
// routes it through Fastify like any other request, and a route with a WebSocket handler takes the
// socket over. Any other answer leaves the socket with nobody: Node reads no more from it, applies
// none of its timeouts to it, and does not close it after the answer, so a client that goes away is
// never noticed (its socket stays in CLOSE-WAIT, a descriptor held until the process ends) and a
// flood of such requests fills the connection cap. So here:
//   - an upgrade to a WebSocket route is checked as the WebSocket library would check it, before it
//     is handed over, so a malformed handshake is refused in the route's error body, with the
//     request id and the security headers (the library would answer a bare text/html 400);
//   - any other upgrade request is answered as if it had not asked (HTTP lets a server ignore
//     Upgrade), with Connection: close; one with a body is refused, since after an upgrade Node
//     feeds the body to nobody and the request would wait for ever;
//   - every answer to an upgrade request that did not become a WebSocket (a refused handshake, the
//     rate limit, a 404, a plain answer) ends its socket once the answer is written.
import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import { routeConfigOf } from '../core/route-config-read.js'

/** RFC 6455 §4.2.1: 16 random bytes, base64. */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/

/** RFC 6455 §4.3: Sec-WebSocket-Protocol is a comma-separated list of tokens (RFC 9110 §5.6.2). */
const PROTOCOL_LIST = /^[\t ]*[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:[\t ]*,[\t ]*[!#$%&'*+\-.^_`|~0-9A-Za-z]+)*[\t ]*$/

/** How long an answered upgrade's socket may take to flush its answer to a client that does not read. */
const FLUSH_TIMEOUT_MS = 5000

/** The request reached us through Node's 'upgrade' event, outside its HTTP parser. */
export const isUpgradeRequest = (request: FastifyRequest): boolean => (request.raw as { upgrade?: boolean }).upgrade === true

/** Registered before any route, so that it sees each route's WebSocket handler as it is declared. */
export function registerUpgradeRequests(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if ((route as { wsHandler?: unknown }).wsHandler !== undefined && methods.includes('GET')) route.config = { ...route.config, upgrades: true }
  })

  app.addHook('onRequest', (request, reply, done) => {
    if (!isUpgradeRequest(request)) return done()
    // A WebSocket session writes its own 101; every other answer is the connection's last.
    reply.header('connection', 'close')
    if (routeConfigOf(request).upgrades === true) {
      const problem = handshakeProblem(request.headers)
      if (problem?.version === true) reply.header('sec-websocket-version', '13')
      return done(problem === undefined ? undefined : new AppError('BAD_REQUEST', problem.message))
    }
    if (request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined) {
      return done(new AppError('BAD_REQUEST', 'A request that asks to upgrade the connection cannot carry a body here: send it without Upgrade'))
    }
    done()
  })

  app.addHook('onResponse', (request, _reply, done) => {
    if (isUpgradeRequest(request)) endSocket(request.raw.socket)
    done()
  })
}

/** What the WebSocket library would refuse in a handshake, in our words (undefined: nothing). */
function handshakeProblem(headers: FastifyRequest['headers']): { message: string; version?: boolean } | undefined {
  if (headers.upgrade?.toLowerCase() !== 'websocket') {
    return { message: `Only WebSocket upgrades are served here (Upgrade: websocket), not ${JSON.stringify(headers.upgrade ?? '')}` }
  }
  const key = headers['sec-websocket-key']
  if (typeof key !== 'string' || !WEBSOCKET_KEY.test(key)) return { message: 'Sec-WebSocket-Key must be 16 bytes in base64' }
  if (headers['sec-websocket-version'] !== '13') return { message: 'Sec-WebSocket-Version must be 13', version: true }
  const protocols = headers['sec-websocket-protocol']
  if (protocols !== undefined) {
    if (!PROTOCOL_LIST.test(protocols)) return { message: 'Sec-WebSocket-Protocol must be a comma-separated list of tokens' }
    const names = protocols.split(',').map((name) => name.trim())
    if (new Set(names).size !== names.length) return { message: 'Sec-WebSocket-Protocol names a protocol twice' }
  }
  return undefined
}

/** Ends the socket once what was written to it is flushed, or cuts it if the client does not read. */
function endSocket(socket: Socket): void {
  if (socket.destroyed) return
  socket.setTimeout(FLUSH_TIMEOUT_MS, () => socket.destroy())
  socket.destroySoon()
}
