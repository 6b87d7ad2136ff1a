// Graceful shutdown of a real `threadline serve` under load: SIGTERM while requests are in flight
// (bodies still arriving, so the server certainly holds them), while clients keep sending, and with
// a kept-alive connection that sends one more request after the signal.
import { connect, type Socket } from 'node:net'
import { Pool } from 'undici'
import { describe, expect, it } from 'vitest'
import { startServe, tokenFromCli } from '../helpers/serve-process.js'
import { freshDatabase } from '../helpers/test-store.js'


/** A raw connection: what it sends, and everything it received until the server closed it. */
function rawConnection(address: string) {
  const { port } = new URL(address)
  const socket: Socket = connect(Number(port), '127.0.0.1')
  let received = ''
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  socket.on('error', () => {})
  return { socket, closed, received: () => received, opened: new Promise((resolve) => socket.once('connect', resolve)) }
}

/** The status of every response in `text`, in order (a body ends where the next status line starts). */
const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]))

describe('shutdown', () => {
  it('on SIGTERM under load finishes every request in flight, answers new ones on kept-alive connections 503 with Connection: close, and exits 0', async () => {
    const fresh = await freshDatabase()
    const { child, address, output } = await startServe({ DATABASE_URL: fresh.url, SHUTDOWN_GRACE_MS: '10000', RATE_LIMIT_MAX: '1000000', RATE_LIMIT_AUTHENTICATED_MAX: '1000000' })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      const token = await tokenFromCli(fresh.url, 2)
      const body = (content: string) => JSON.stringify({ content })
      const post = (content: string) =>
        `POST /api/v1/users/1/posts/1/comments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body(content).length}\r\n\r\n`

      // Load: clients on kept-alive connections, reading and writing, until the server is gone.
      const pool = new Pool(address, { connections: 6, pipelining: 1 })
      const answered: number[] = []
      const failures: string[] = []
      let loading = true
      const loops = Array.from({ length: 6 }, async (_, i) => {
        while (loading) {
          try {
            const response = await pool.request(
              i % 2 === 0
                ? { method: 'GET', path: '/api/v1/users?limit=50' }
                : { method: 'POST', path: '/api/v1/users/1/posts/1/comments', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body(`load ${i}`) },
            )
            await response.body.arrayBuffer()
            answered.push(response.statusCode)
          } catch (error) {
            failures.push((error as { code?: string }).code ?? String(error))
            // The server is gone or going: new connections are refused from now on.
            if (!loading) break
            await new Promise((resolve) => setTimeout(resolve, 20))
          }
        }
      })
      await new Promise((resolve) => setTimeout(resolve, 500))

      // In flight: five requests whose bodies are half sent; and a kept-alive connection doing the same.
      const inFlight = Array.from({ length: 5 }, () => rawConnection(address))
      const keptAlive = rawConnection(address)
      await Promise.all([...inFlight, keptAlive].map((connection) => connection.opened))
      for (const [i, connection] of [...inFlight, keptAlive].entries()) {
        const content = `in flight ${i}`
        connection.socket.write(post(content) + body(content).slice(0, 5))
      }
      await new Promise((resolve) => setTimeout(resolve, 200))

      child.kill('SIGTERM')
      await new Promise((resolve) => setTimeout(resolve, 300))
      loading = false
      for (const [i, connection] of [...inFlight, keptAlive].entries()) {
        const rest = body(`in flight ${i}`).slice(5)
        // The kept-alive connection sends its next request right behind the body of the first.
        connection.socket.write(connection === keptAlive ? `${rest}GET /api/v1/users/1 HTTP/1.1\r\nHost: x\r\n\r\n` : rest)
      }

      await Promise.all([...inFlight, keptAlive].map((connection) => connection.closed))
      expect(await exited).toBe(0)
      await Promise.all(loops)
      await pool.close().catch(() => undefined)

      for (const connection of inFlight) expect(statuses(connection.received())).toEqual([201])
      expect(statuses(keptAlive.received())).toEqual([201, 503])
      const refusal = keptAlive.received().slice(keptAlive.received().lastIndexOf('HTTP/1.1 503'))
      expect(refusal).toMatch(/\r\nconnection: close\r\n/i)
      expect(refusal).toMatch(/\r\nretry-after: \d+\r\n/i)
      expect(JSON.parse(refusal.slice(refusal.indexOf('\r\n\r\n') + 4)).error.code).toBe('SERVICE_UNAVAILABLE')

      // Under load: every answer a success or the 503 of a request that came after the signal.
      expect(answered.length).toBeGreaterThan(10)
      expect(answered.filter((status) => status !== 200 && status !== 201 && status !== 503)).toEqual([])
      // What failed on the client never reached the server: refused or closed connections only.
      expect(failures.filter((code) => !['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'].includes(code))).toEqual([])
      expect(output()).toMatch(/"msg":"shutting down/)
      expect(output()).toMatch(/"msg":"stopped"/)
    } finally {
      child.kill('SIGKILL')
      await fresh.drop()
    }
  })

  it('prints readable lines instead of JSON with LOG_FORMAT=pretty, and stops cleanly on SIGINT (Ctrl-C) too', async () => {
    const fresh = await freshDatabase()
    const server = await startServe({ DATABASE_URL: fresh.url, LOG_FORMAT: 'pretty' })
    try {
      expect((await fetch(`${server.address}/api/v1/users/1`)).status).toBe(200)
      const exited = new Promise<number | null>((resolve) => server.child.on('exit', (code) => resolve(code)))
      server.child.kill('SIGINT')
      expect(await exited).toBe(0)
      const lines = server.output().trim().split('\n')
      expect(lines.some((line) => /INFO.*Threadline is listening on/.test(line))).toBe(true)
      expect(lines.some((line) => /INFO: request$/.test(line))).toBe(true)
      expect(lines.some((line) => line.trim() === 'route: "/api/v1/users/:id"')).toBe(true)
      for (const line of lines) expect(line.startsWith('{'), line).toBe(false)
    } finally {
      server.child.kill('SIGKILL')
      await fresh.drop()
    }
  })
})
