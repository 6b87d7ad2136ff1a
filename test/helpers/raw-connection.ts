// A raw TCP connection to a test server: what is written goes as it is, and what comes back is
// kept as text, for tests of what HTTP clients would hide (slow bodies, pipelining, cut sockets).
import { connect, type Socket } from 'node:net'

export interface Conversation {
  socket: Socket
  /** Everything the server sent so far. */
  received(): string
  /** Resolves with the time (ms since open) at which the server closed the connection. */
  closed: Promise<number>
}

/** Opens a connection to 127.0.0.1:`port`; resolves once it is connected. */
export function openRaw(port: number): Promise<Conversation> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const socket = connect(port, '127.0.0.1')
    let data = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (data += chunk))
    socket.on('error', () => undefined) // a reset is one way of being closed
    const closed = new Promise<number>((done) => socket.on('close', () => done(performance.now() - started)))
    socket.once('connect', () => resolve({ socket, received: () => data, closed }))
    socket.once('error', reject)
  })
}
