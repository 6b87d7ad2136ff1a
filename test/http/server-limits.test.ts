// What the HTTP server grants one client, tested with raw sockets against a listening app (light-my-request
// would skip Node's parser and its timers): oversized headers and URLs, slow headers (slowloris), slow
// bodies, idle kept-alive connections and too many connections. Short limits from the env keep it quick.
// Runs once, on SQLite: sockets and the HTTP server's timers; no request of it reaches the store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { openRaw } from '../helpers/raw-connection.js'

let t: TestApp
let port: number
beforeAll(async () => {
  t = await buildTestApp({
    HTTP_HEADERS_TIMEOUT_MS: '500',
    HTTP_REQUEST_TIMEOUT_MS: '1000',
    HTTP_KEEP_ALIVE_TIMEOUT_MS: '250',
    HTTP_MAX_HEADER_BYTES: '8192',
    HTTP_MAX_CONNECTIONS: '8',
    // Below HTTP_MAX_CONNECTIONS, as it must be: the eighth connection is a WebSocket not yet initialised.
    GRAPHQL_MAX_CONNECTIONS: '7',
  })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as { port: number }).port
})
afterAll(() => t.close())

const open = (to = port) => openRaw(to)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** An ordinary request over a new connection: its status. */
async function ordinaryGet(to = port): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${to}/api/v1/users/1`)
  await response.arrayBuffer()
  return response.status
}

/** Waits until the server holds `count` connections (at most 10 s). */
async function untilConnections(count: number): Promise<void> {
  const current = () => new Promise<number>((resolve, reject) => t.app.server.getConnections((error, n) => (error ? reject(error) : resolve(n))))
  const deadline = Date.now() + 10_000
  while ((await current()) !== count) {
    if (Date.now() > deadline) throw new Error(`the server holds ${await current()} connections, not ${count}`)
    await sleep(50)
  }
}

/** A graphql-ws WebSocket past its connection_init. */
function acknowledgedWebSocket(): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws')
  return new Promise((resolve, reject) => {
    ws.once('error', reject)
    ws.once('open', () => ws.send(JSON.stringify({ type: 'connection_init' })))
    ws.on('message', (data: Buffer) => {
      if ((JSON.parse(data.toString()) as { type: string }).type === 'connection_ack') resolve(ws)
    })
  })
}

describe('HTTP server limits', () => {
  it('answers headers larger than HTTP_MAX_HEADER_BYTES with 400 in the error envelope, and a URL that long too', async () => {
    for (const request of [
      `GET /api/v1/users HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(10_000)}\r\n\r\n`,
      `GET /api/v1/users?q=${'a'.repeat(10_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    ]) {
      const conversation = await open()
      conversation.socket.write(request)
      await conversation.closed
      const [head = '', body = ''] = conversation.received().split('\r\n\r\n')
      expect(head).toMatch(/^HTTP\/1\.1 400 /)
      expect(JSON.parse(body)).toEqual({ error: { code: 'BAD_REQUEST', message: 'The request headers are too large' } })
    }
    expect(await ordinaryGet()).toBe(200)
  })

  it('cuts a client that sends its headers slowly (slowloris) after HTTP_HEADERS_TIMEOUT_MS, while others are served', async () => {
    // An app whose request timeout cannot be what cuts it.
    const headersOnly = await buildTestApp({ HTTP_HEADERS_TIMEOUT_MS: '500', HTTP_REQUEST_TIMEOUT_MS: '60000' })
    await headersOnly.app.listen({ port: 0, host: '127.0.0.1' })
    const headersOnlyPort = (headersOnly.app.server.address() as { port: number }).port
    const slow = await open(headersOnlyPort)
    slow.socket.write('GET /api/v1/users HTTP/1.1\r\nHost: x\r\n')
    const trickle = setInterval(() => slow.socket.writable && slow.socket.write(`X-Slow-${Date.now()}: 1\r\n`), 200)
    try {
      expect(await ordinaryGet(headersOnlyPort)).toBe(200)
      // 0.5 s of timeout, checked every second: cut between 0.5 and 1.5 s (3.5 s of slack for a loaded machine).
      expect(await slow.closed).toBeLessThan(5000)
    } finally {
      clearInterval(trickle)
      await headersOnly.close()
    }
  })

  it('cuts a client that sends its body slowly after HTTP_REQUEST_TIMEOUT_MS, and stores nothing of it', async () => {
    const before = await t.database.db
      .selectFrom('posts')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    const slow = await open()
    const body = JSON.stringify({ title: 'slow', content: 'body' })
    slow.socket.write(
      `POST /api/v1/users/${t.alice.id}/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.tokens.alice}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    )
    // The whole body, a byte every 250 ms: complete after ~8 s, were the connection not cut at 1-2 s.
    let sent = 0
    const trickle = setInterval(() => slow.socket.writable && sent < body.length && slow.socket.write(body[sent++] ?? ''), 250)
    try {
      expect(await ordinaryGet()).toBe(200)
      expect(await slow.closed).toBeLessThan(6000)
      expect(slow.received()).toBe('')
    } finally {
      clearInterval(trickle)
    }
    const after = await t.database.db
      .selectFrom('posts')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    expect(Number(after.n)).toBe(Number(before.n))
  })

  it('closes a kept-alive connection idle for HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const conversation = await open()
    conversation.socket.write('GET /api/v1/users/1 HTTP/1.1\r\nHost: x\r\n\r\n')
    const closedAt = await conversation.closed
    expect(conversation.received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(closedAt).toBeLessThan(4000)
  })

  it('closes connections beyond HTTP_MAX_CONNECTIONS on arrival, WebSockets counted, and takes new ones once others have gone', async () => {
    // Connections of earlier tests (fetch keeps them alive) close after the keep-alive timeout.
    await untilConnections(0)
    const held: WebSocket[] = []
    try {
      // Up to the limit (8): WebSockets, which no timeout ends: seven initialised (GRAPHQL_MAX_CONNECTIONS), one not yet.
      for (let i = 0; i < 7; i++) held.push(await acknowledgedWebSocket())
      const uninitialised = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws')
      held.push(uninitialised)
      await new Promise((resolve, reject) => uninitialised.once('open', resolve).once('error', reject))
      await untilConnections(8)
      const extra = await open()
      extra.socket.write('GET /api/v1/users/1 HTTP/1.1\r\nHost: x\r\n\r\n')
      await extra.closed
      expect(extra.received()).toBe('')
    } finally {
      for (const ws of held) ws.terminate()
    }
    await untilConnections(0)
    expect(await ordinaryGet()).toBe(200)
  })

  it('leaves a WebSocket subscription and an event stream open past the request timeout: once the request is in, they are answers', async () => {
    const created = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.alice.id}/posts`,
      token: t.tokens.alice,
      json: { title: 'Open', content: 'long' },
    })
    const query = `subscription { commentAdded(postId: "${created.json().data.id}") { id } }`
    const ws = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws')
    const acknowledged = new Promise<void>((resolve) => {
      ws.on('message', (data: Buffer) => {
        if ((JSON.parse(data.toString()) as { type: string }).type !== 'connection_ack') return
        ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }))
        resolve()
      })
    })
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init' })))
    const stream = new AbortController()
    const events = await fetch(`http://127.0.0.1:${port}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query }),
      signal: stream.signal,
    })
    let streamEnded = false
    void (async () => {
      try {
        const reader = events.body?.getReader()
        while (reader !== undefined && !(await reader.read()).done);
      } catch {
        // aborted below
      }
      streamEnded = true
    })()
    try {
      await acknowledged
      // A request whose body never comes, sent after both: once the request timeout has cut it, the
      // server has checked the two against every timeout (the request timeout is the longest).
      const witness = await open()
      witness.socket.write('POST /api/v1/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n')
      expect(await witness.closed).toBeGreaterThan(900)
      expect(ws.readyState).toBe(WebSocket.OPEN)
      expect(streamEnded).toBe(false)
    } finally {
      ws.close()
      stream.abort()
    }
  })
})

describe('HTTP limits in the config', () => {
  it('refuses a request timeout shorter than the headers timeout', async () => {
    const { loadConfig } = await import('../../src/config.js')
    expect(() => loadConfig({ HTTP_SHED_LOOP_DELAY_MS: '0', HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '1000' })).toThrow(
      /HTTP_REQUEST_TIMEOUT_MS/,
    )
  })
})
