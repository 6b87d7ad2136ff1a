// Closing without losing a request (SIGTERM/SIGINT, src/server.ts). While the app closes, requests
// in flight finish, and a request that arrives on a connection still open (kept alive, pipelined,
// or accepted just before the close) is answered 503 with Retry-After and Connection: close, so the
// client retries elsewhere on a new connection.
//
// A client's connection is established once the kernel has it, before the server has accepted it:
// closing the listening socket resets every connection still in its backlog, and the client loses
// a request it had sent. Under load the backlog is not empty (the loop is busy with handlers, one
// caller's queue behind the in-flight limit), and a signal then reset most of 40 concurrent
// requests. So, before the server closes, the loop takes a turn (which accepts what waits in the
// backlog), and then waits, briefly, until every connection accepted so far has been read from: its
// request then runs, or is refused 503 as above.
import { setImmediate as nextLoopTurn } from 'node:timers/promises'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'

/**
 * Node closes the idle connections once, when the server closes; a connection whose request
 * finishes later would stay open for its keep-alive timeout and hold the close, so idle ones are
 * closed every CLOSE_IDLE_EVERY_MS until the server is closed.
 */
const CLOSE_IDLE_EVERY_MS = 100

/** How often the close looks whether the connections accepted before it have been read from. */
const UNREAD_POLL_MS = 5

/** How long after it was accepted a connection may say nothing before the close closes it (a client that connects and says nothing). */
const UNREAD_GRACE_MS = 1000

export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false
  let reaper: NodeJS.Timeout | undefined
  // Connections that have not delivered a byte yet, with when each was accepted: one entry per
  // connection, gone at its first read or its close (per connection, not per request: nothing is
  // added to the request path).
  const unread = new Map<Socket, number>()
  let lastAcceptedAt = 0
  app.server.on('connection', (socket: Socket) => {
    lastAcceptedAt = performance.now()
    unread.set(socket, lastAcceptedAt)
    socket.once('close', () => unread.delete(socket))
  })
  /**
   * Until no connection has been accepted for a turn of UNREAD_POLL_MS (the backlog is empty) and
   * every one accepted has been read from, or has said nothing for UNREAD_GRACE_MS since it was
   * accepted: such a connection carries no request (a client's spare connection, one that connects
   * and says nothing), and would hold the close until its client gives up on it, so it is closed.
   * At most UNREAD_GRACE_MS in all, however many connections keep arriving.
   */
  const waitUntilRead = async () => {
    const deadline = performance.now() + UNREAD_GRACE_MS
    for (;;) {
      const polledAt = performance.now()
      await new Promise((resolve) => setTimeout(resolve, UNREAD_POLL_MS))
      // A timer that came due while the loop was held (a slow handler, the process descheduled)
      // runs before that turn's poll for I/O: only after the poll has run are the connections
      // waiting in the backlog accepted and the accepted ones read.
      await nextLoopTurn()
      const now = performance.now()
      for (const [socket, acceptedAt] of unread) {
        if (socket.bytesRead > 0 || socket.destroyed) unread.delete(socket)
        else if (now - acceptedAt >= UNREAD_GRACE_MS) {
          unread.delete(socket)
          socket.destroy()
        }
      }
      if ((unread.size === 0 && lastAcceptedAt < polledAt) || now >= deadline) return
    }
  }
  app.addHook('preClose', async () => {
    closing = true
    if (app.server.listening) await waitUntilRead()
    reaper = setInterval(() => app.server.closeIdleConnections(), CLOSE_IDLE_EVERY_MS)
  })
  app.addHook('onClose', (_app, done) => {
    clearInterval(reaper)
    done()
  })
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done()
    reply.header('connection', 'close')
    done(new AppError('SERVICE_UNAVAILABLE', 'This instance is shutting down: retry, and another will answer'))
  })
}
