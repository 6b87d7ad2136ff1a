// A TCP relay between a client under test and a real server, which a test can cut and restore:
// a network outage as the client sees it (connections dropped, new ones refused), with the real
// server left running for everyone else.
import { createServer, type Server, type Socket, connect } from 'node:net'

export interface TcpProxy {
  /** The port clients connect to (on 127.0.0.1). */
  readonly port: number
  /** Drops every relayed connection and refuses new ones, until `restore`. */
  cut(): Promise<void>
  /**
   * Stops relaying without closing anything: connections stay up and nothing arrives, as when a
   * network drops packets or the server's host freezes. New connections are accepted and go nowhere.
   */
  freeze(): void
  /** Relays again: drops what was frozen, accepts connections again on the same port. */
  restore(): Promise<void>
  close(): Promise<void>
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  const pairs = new Set<[Socket, Socket]>()
  let server: Server | undefined
  let frozen = false
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const relay = createServer((client) => {
        if (frozen) {
          sockets.add(client)
          client.on('close', () => sockets.delete(client))
          client.on('error', () => client.destroy())
          return
        }
        const upstream = connect(target)
        const pair: [Socket, Socket] = [client, upstream]
        pairs.add(pair)
        client.on('close', () => pairs.delete(pair))
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on('close', () => sockets.delete(socket))
          socket.on('error', () => {
            client.destroy()
            upstream.destroy()
          })
        }
        client.pipe(upstream).pipe(client)
      })
      relay.once('error', reject)
      relay.listen(port, '127.0.0.1', () => {
        server = relay
        resolve((relay.address() as { port: number }).port)
      })
    })
  const stop = async () => {
    const closing = server
    server = undefined
    for (const socket of sockets) socket.destroy()
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()))
  }
  const port = await listen(0)
  return {
    port,
    cut: stop,
    freeze() {
      frozen = true
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream)
        upstream.unpipe(client)
        client.pause()
        upstream.pause()
      }
    },
    async restore() {
      if (frozen) {
        frozen = false
        for (const socket of sockets) socket.destroy()
      }
      if (server === undefined) await listen(port)
    },
    close: stop,
  }
}
