// Graceful shutdown of a real `threadline serve` under load: SIGTERM while requests are in flight
// (bodies still arriving, so the server certainly holds them), while clients keep sending, and with
// a kept-alive connection that sends one more request after the signal.
import { Pool } from 'undici'
import { describe, expect, it } from 'vitest'
import { type Conversation, openRaw } from '../helpers/raw-connection.js'
import { startServe, storedCommentsOnFirstPost, tokenFromCli } from '../helpers/serve-process.js'
import { freshDatabase, SECOND_STORE_RUN } from '../helpers/test-store.js'
import { until } from '../helpers/until.js'

/** The final status of every response in `text`, in order (a body ends where the next status line starts). */
const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1])).filter((status) => status !== 100)

/** Waits until the server has read the request's headers: it answers Expect: 100-continue. */
const until100Continue = (connection: Conversation) => until(() => connection.received().includes('HTTP/1.1 100 Continue'), 10_000)

/** Waits until the server has taken the signal: it says so. */
const untilShuttingDown = (output: () => string) => until(() => output().includes('"msg":"shutting down'), 10_000)

describe('shutdown', () => {
  it('on SIGTERM under load finishes every request in flight, answers new ones on kept-alive connections 503 with Connection: close, and exits 0', async () => {
    const fresh = await freshDatabase()
    const { child, address, output } = await startServe({
      DATABASE_URL: fresh.url,
      SHUTDOWN_GRACE_MS: '10000',
      RATE_LIMIT_MAX: '1000000',
      RATE_LIMIT_AUTHENTICATED_MAX: '1000000',
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      const token = await tokenFromCli(fresh.url, 2)
      const body = (content: string) => JSON.stringify({ content })
      const post = (content: string) =>
        `POST /api/v1/users/1/posts/1/comments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body(content).length}\r\nExpect: 100-continue\r\n\r\n`

      // Load: clients on kept-alive connections, reading and writing, until the server is gone.
      const pool = new Pool(address, { connections: 6, pipelining: 1 })
      const answered: number[] = []
      const failures: { code: string; afterSignal: boolean; content?: string }[] = []
      let signalled = false
      let loading = true
      const loops = Array.from({ length: 6 }, async (_, i) => {
        for (let n = 0; loading; n++) {
          const content = i % 2 === 0 ? undefined : `load ${i}-${n}`
          try {
            const response = await pool.request(
              content === undefined
                ? { method: 'GET', path: '/api/v1/users?limit=50' }
                : {
                    method: 'POST',
                    path: '/api/v1/users/1/posts/1/comments',
                    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
                    body: body(content),
                  },
            )
            await response.body.arrayBuffer()
            answered.push(response.statusCode)
          } catch (error) {
            failures.push({ code: (error as { code?: string }).code ?? String(error), afterSignal: signalled, ...(content === undefined ? {} : { content }) })
            // The server is gone or going: new connections are refused from now on.
            if (!loading) break
            await new Promise((resolve) => setTimeout(resolve, 20))
          }
        }
      })
      await until(() => answered.length > 10, 10_000)

      // In flight: five requests whose headers the server has read (it said 100 Continue) and whose
      // bodies are half sent; and a kept-alive connection doing the same.
      const port = Number(new URL(address).port)
      const inFlight = await Promise.all(Array.from({ length: 5 }, () => openRaw(port)))
      const keptAlive = await openRaw(port)
      for (const [i, connection] of [...inFlight, keptAlive].entries()) connection.socket.write(post(`in flight ${i}`))
      await Promise.all([...inFlight, keptAlive].map(until100Continue))
      for (const [i, connection] of [...inFlight, keptAlive].entries()) connection.socket.write(body(`in flight ${i}`).slice(0, 5))

      signalled = true
      child.kill('SIGTERM')
      await untilShuttingDown(output)
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
      // Nothing failed before the signal; after it, only connections refused or closed.
      expect(failures.filter((failure) => !failure.afterSignal)).toEqual([])
      expect(failures.filter((failure) => !['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'].includes(failure.code))).toEqual([])
      expect(output()).toMatch(/"msg":"shutting down/)
      expect(output()).toMatch(/"msg":"stopped"/)

      // A write that failed on the client never reached the server: none of them is stored.
      const stored = await storedCommentsOnFirstPost(fresh.url)
      expect(failures.filter((failure) => failure.content !== undefined && stored.has(failure.content))).toEqual([])
      for (let i = 0; i < 6; i++) expect(stored.has(`in flight ${i}`)).toBe(true)
    } finally {
      child.kill('SIGKILL')
      await fresh.drop()
    }
  }, 60_000)

  it.skipIf(SECOND_STORE_RUN)(
    'cuts what is left after SHUTDOWN_GRACE_MS and exits 1; a second signal stops at once',
    async () => {
      const fresh = await freshDatabase()
      try {
        for (const second of [false, true]) {
          const server = await startServe({ DATABASE_URL: fresh.url, SHUTDOWN_GRACE_MS: second ? '30000' : '500' })
          const exited = new Promise<number | null>((resolve) => server.child.on('exit', (code) => resolve(code)))
          // A request whose body never comes: in flight until the connection is cut.
          const stuck = await openRaw(Number(new URL(server.address).port))
          stuck.socket.write(`POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n`)
          await until100Continue(stuck)
          const signalled = Date.now()
          server.child.kill('SIGTERM')
          if (second) {
            await untilShuttingDown(server.output)
            server.child.kill('SIGTERM')
          }
          expect(await exited).toBe(1)
          expect(Date.now() - signalled).toBeLessThan(second ? 5000 : 8000)
          expect(server.output()).toMatch(second ? /"msg":"second signal: stopping now"/ : /"msg":"grace period over: cutting the connections left"/)
          await stuck.closed
        }
      } finally {
        await fresh.drop()
      }
    },
    60_000,
  )

  it.skipIf(SECOND_STORE_RUN)(
    'prints readable lines instead of JSON with LOG_FORMAT=pretty, and stops cleanly on SIGINT (Ctrl-C) too',
    { timeout: 60_000 },
    async () => {
      const fresh = await freshDatabase()
      const server = await startServe({ DATABASE_URL: fresh.url, LOG_FORMAT: 'pretty' })
      try {
        expect((await fetch(`${server.address}/api/v1/users/1`)).status).toBe(200)
        const exited = new Promise<number | null>((resolve) => server.child.on('exit', (code) => resolve(code)))
        server.child.kill('SIGINT')
        expect(await exited).toBe(0)
        const lines = server.output().trim().split('\n')
        expect(lines.some((line) => /INFO.*Threadline is listening on/.test(line))).toBe(true)
        // One line per request (test/cli/log-format.test.ts has the terminal's default).
        expect(lines.filter((line) => line.includes('/api/v1/users/1'))).toEqual([
          expect.stringMatching(/^\[[\d:.]+\] GET \/api\/v1\/users\/1 → 200 [\d.]+ ms$/),
        ])
        for (const line of lines) expect(line.startsWith('{'), line).toBe(false)
      } finally {
        server.child.kill('SIGKILL')
        await fresh.drop()
      }
    },
  )
})
