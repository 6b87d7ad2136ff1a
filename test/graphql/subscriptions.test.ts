// GraphQL subscriptions' transports over a real listening server: raw graphql-transport-ws sockets
// and Server-Sent Events for what the protocols say about documents, auth, refusals and limits.
// (What commentAdded delivers to whom is test/comments/comments.graphql.test.ts's.)
// Runs once, on SQLite: the protocols of subscriptions; what commentAdded delivers on each store is comments.graphql.test.ts's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { createMemoryEvents } from '../../src/events/memory-events.js'
import type { AppTopics } from '../../src/features.js'
import { listening, type Listening, rawSocket, settle, subscribed } from '../helpers/subscription-clients.js'
import { until } from '../helpers/until.js'

describe('subscription documents and protocols', () => {
  let s: Listening

  beforeAll(async () => {
    s = await listening()
  })
  afterAll(() => s.t.close())

  it('refuses over SSE, with 400 and the errors, a document the HTTP endpoint would refuse', async () => {
    const response = await fetch(`${s.http}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { commentAdded { nope } }' }),
    })
    expect(response.status).toBe(400)
    const body = (await response.json()) as { errors: { extensions: { code: string } }[] }
    expect(body.errors[0]?.extensions.code).toBe('BAD_REQUEST')
    const costly = await fetch(`${s.http}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        query: 'subscription { commentAdded { post { author { posts(limit: 100) { comments(limit: 100) { author { posts(limit: 100) { id } } } } } } } }',
      }),
    })
    expect(costly.status).toBe(400)
    expect(((await costly.json()) as { errors: { extensions: { limit?: string } }[] }).errors.map((e) => e.extensions.limit)).toContain('cost')
    const notStream = await s.t.request({ method: 'GET', url: '/graphql/stream?query=subscription{commentAdded{id}}' })
    expect(notStream.statusCode).toBe(406)
  })

  it('refuses a subscription sent over plain HTTP, POST or GET, telling where to send it', async () => {
    const post = await s.t.request({ method: 'POST', url: '/graphql', json: { query: 'subscription { commentAdded { id } }' } })
    const get = await s.t.request({ method: 'GET', url: `/graphql?query=${encodeURIComponent('subscription { commentAdded { id } }')}` })
    for (const response of [post, get]) {
      expect(response.statusCode).toBe(200)
      expect(response.json().errors[0]).toMatchObject({ message: expect.stringContaining('WebSocket') as string, extensions: { code: 'BAD_REQUEST' } })
    }
  })

  it("applies the endpoint's validation and limits to WebSocket documents", async () => {
    const raw = rawSocket(s.ws)
    await raw.opened
    raw.send({ type: 'connection_init' })
    await until(() => raw.messages.some((m) => m.type === 'connection_ack'))
    raw.send({ id: 'a', type: 'subscribe', payload: { query: 'subscription { commentAdded { nope } }' } })
    raw.send({
      id: 'b',
      type: 'subscribe',
      payload: {
        query: 'subscription { commentAdded { post { author { posts { author { posts { author { posts { author { posts { author { id } } } } } } } } } } } }',
      },
    })
    raw.send({ id: 'c', type: 'subscribe', payload: { query: 'subscription { a: commentAdded { id } b: commentAdded { id } }' } })
    raw.send({
      id: 'd',
      type: 'subscribe',
      payload: {
        query: 'subscription { commentAdded { post { author { posts(limit: 100) { comments(limit: 100) { author { posts(limit: 100) { id } } } } } } } }',
      },
    })
    raw.send({
      id: 'e',
      type: 'subscribe',
      payload: { query: `subscription { commentAdded { ${Array.from({ length: 16 }, (_, i) => `a${i}: id`).join(' ')} } }` },
    })
    raw.send({ id: 'f', type: 'subscribe', payload: { query: `subscription { commentAdded { ${'id '.repeat(4000)}} }` } })
    await until(() => raw.messages.filter((m) => m.type === 'error').length === 6)
    const errors: Record<string, { extensions: Record<string, unknown> }[]> = Object.fromEntries(
      raw.messages.filter((m) => m.type === 'error').map((m) => [m.id, m.payload as { extensions: Record<string, unknown> }[]]),
    )
    expect(errors.a?.[0]?.extensions.code).toBe('BAD_REQUEST')
    expect(errors.b?.map((e) => e.extensions.limit)).toContain('depth')
    expect(errors.c?.[0]?.extensions.code).toBe('BAD_REQUEST')
    expect(errors.d?.map((e) => e.extensions.limit)).toContain('cost')
    expect(errors.e?.map((e) => e.extensions.limit)).toContain('aliases')
    expect(errors.f).toEqual([{ message: 'Syntax Error: Document contains more than 4000 tokens. Parsing aborted.', extensions: { code: 'BAD_REQUEST' } }])
    raw.socket.close()
  })

  it('closes a connection that subscribes twice under one id with 4409', async () => {
    const raw = rawSocket(s.ws)
    await raw.opened
    raw.send({ type: 'connection_init' })
    await until(() => raw.messages.some((m) => m.type === 'connection_ack'))
    const subscribe = { id: 'same', type: 'subscribe', payload: { query: 'subscription { commentAdded { id } }' } }
    raw.send(subscribe)
    raw.send(subscribe)
    expect((await raw.closed).code).toBe(4409)
  })

  it('does not speak the legacy subscriptions-transport-ws protocol: the subprotocol is not agreed', async () => {
    const legacy = new WebSocket(s.ws, 'graphql-ws')
    const failed = new Promise<string>((resolve) => legacy.on('error', (error) => resolve(error.message)))
    expect(await failed).toMatch(/no subprotocol/)
  })
})

describe('subscription auth', () => {
  let s: Listening
  beforeAll(async () => {
    s = await listening()
  })
  afterAll(() => s.t.close())

  it("closes with 4401 for a bad token in connection_init or in the upgrade's Authorization header", async () => {
    const inPayload = rawSocket(s.ws)
    await inPayload.opened
    inPayload.send({ type: 'connection_init', payload: { authorization: 'Bearer tl_not-a-token' } })
    expect(await inPayload.closed).toMatchObject({ code: 4401 })

    const revoked = await s.t.tokenFor(s.t.bob.id)
    await s.t.request({ method: 'DELETE', url: '/api/v1/tokens/current', token: revoked })
    const inHeader = rawSocket(s.ws, { authorization: `Bearer ${revoked}` })
    await inHeader.opened
    inHeader.send({ type: 'connection_init' })
    expect(await inHeader.closed).toMatchObject({ code: 4401 })

    const notAString = rawSocket(s.ws)
    await notAString.opened
    notAString.send({ type: 'connection_init', payload: { authorization: 42 } })
    expect(await notAString.closed).toMatchObject({ code: 4401 })
  })

  it("lets a token in connection_init win over the header's, and refuses two different ones", async () => {
    const initWins = rawSocket(s.ws, { authorization: 'Bearer tl_not-a-token' })
    await initWins.opened
    initWins.send({ type: 'connection_init', payload: { authorization: `Bearer ${s.t.tokens.alice}` } })
    await until(() => initWins.messages.some((m) => m.type === 'connection_ack'))
    initWins.socket.close()
    const two = rawSocket(s.ws)
    await two.opened
    two.send({ type: 'connection_init', payload: { authorization: `Bearer ${s.t.tokens.alice}`, Authorization: 'Bearer tl_other' } })
    expect(await two.closed).toMatchObject({ code: 4401 })
  })

  it('does not let an Upgrade header on a plain request slip a bad token through', async () => {
    const response = await s.t.request({
      method: 'GET',
      url: '/graphql?query={viewer{id}}',
      headers: { upgrade: 'websocket', authorization: 'Bearer tl_bogus' },
    })
    expect(response.statusCode).toBe(401)
  })

  it('closes a socket that breaks the protocol with 4400, and answers an unknown operation with BAD_REQUEST', async () => {
    const raw = rawSocket(s.ws)
    await raw.opened
    raw.send({ type: 'connection_init' })
    await until(() => raw.messages.some((m) => m.type === 'connection_ack'))
    raw.send({ id: 'x', type: 'subscribe', payload: { query: 'subscription A { commentAdded { id } } subscription B { commentAdded { id } }' } })
    raw.send({ id: 'y', type: 'subscribe', payload: { query: 'subscription A { commentAdded { id } }', operationName: 'Nope' } })
    await until(() => raw.messages.filter((m) => m.type === 'error').length === 2)
    for (const message of raw.messages.filter((m) => m.type === 'error')) {
      expect(message.payload).toEqual([{ message: expect.stringMatching(/operation/) as string, extensions: { code: 'BAD_REQUEST' } }])
    }
    raw.send({ id: 'z', type: 'next', payload: {} })
    expect(await raw.closed).toMatchObject({ code: 4400 })
  })

  it("takes the caller from the upgrade's Authorization header", async () => {
    const post = (
      await s.t.request({
        method: 'POST',
        url: `/api/v1/users/${s.t.bob.id}/posts`,
        token: s.t.tokens.bob,
        json: { title: 'mine', content: '.', status: 'draft' },
      })
    ).json().data.id as number
    const raw = rawSocket(s.ws, { authorization: `Bearer ${s.t.tokens.bob}` })
    await raw.opened
    raw.send({ type: 'connection_init' })
    await until(() => raw.messages.some((m) => m.type === 'connection_ack'))
    raw.send({ id: '1', type: 'subscribe', payload: { query: `subscription { commentAdded(postId: "${post}") { content } }` } })
    await subscribed(s.t, 1)
    await s.t.request({ method: 'POST', url: `/api/v1/users/${s.t.bob.id}/posts/${post}/comments`, token: s.t.tokens.bob, json: { content: 'note to self' } })
    await until(() => raw.messages.some((m) => m.type === 'next'))
    expect(raw.messages.find((m) => m.type === 'next')?.payload).toEqual({ data: { commentAdded: { content: 'note to self' } } })
    raw.socket.close()
  })
})

describe('subscription limits', () => {
  it('closes a socket that does not initialise in time with 4408', async () => {
    const s = await listening({ GRAPHQL_WS_INIT_TIMEOUT_MS: '200' })
    try {
      const raw = rawSocket(s.ws)
      await raw.opened
      expect(await raw.closed).toMatchObject({ code: 4408 })
    } finally {
      await s.t.close()
    }
  })

  it('caps subscriptions per connection, connections per caller, and the message size', async () => {
    const s = await listening({ GRAPHQL_MAX_SUBSCRIPTIONS_PER_CONNECTION: '2', GRAPHQL_MAX_CONNECTIONS_PER_CALLER: '2', GRAPHQL_WS_MAX_MESSAGE_BYTES: '1024' })
    try {
      const raw = rawSocket(s.ws)
      await raw.opened
      raw.send({ type: 'connection_init' })
      await until(() => raw.messages.some((m) => m.type === 'connection_ack'))
      for (const id of ['1', '2', '3']) raw.send({ id, type: 'subscribe', payload: { query: 'subscription { commentAdded { id } }' } })
      await until(() => raw.messages.some((m) => m.type === 'error'))
      expect(raw.messages.filter((m) => m.type === 'error')).toEqual([
        { id: '3', type: 'error', payload: [{ message: 'At most 2 subscriptions per connection', extensions: { code: 'BAD_REQUEST' } }] },
      ])

      const second = rawSocket(s.ws)
      await second.opened
      second.send({ type: 'connection_init' })
      await until(() => second.messages.some((m) => m.type === 'connection_ack'))
      const third = rawSocket(s.ws)
      await third.opened
      third.send({ type: 'connection_init' })
      expect(await third.closed).toMatchObject({ code: 1013 })
      const sse = await fetch(`${s.http}/graphql/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: 'subscription { commentAdded { id } }' }),
      })
      expect(sse.status).toBe(429)
      // A signed-in caller is counted apart from the address.
      const signedIn = rawSocket(s.ws)
      await signedIn.opened
      signedIn.send({ type: 'connection_init', payload: { authorization: `Bearer ${s.t.tokens.alice}` } })
      await until(() => signedIn.messages.some((m) => m.type === 'connection_ack'))

      second.send({ id: 'big', type: 'subscribe', payload: { query: `subscription { commentAdded { id } } # ${'x'.repeat(2048)}` } })
      expect(await second.closed).toMatchObject({ code: 1009 })
      raw.socket.close()
      signedIn.socket.close()
    } finally {
      await s.t.close()
    }
  })

  it('caps the connections of the whole instance, whoever holds them, and takes one again when a slot frees', async () => {
    const s = await listening({ GRAPHQL_MAX_CONNECTIONS: '2' })
    try {
      const open = async (token?: string) => {
        const raw = rawSocket(s.ws)
        await raw.opened
        raw.send({ type: 'connection_init', ...(token === undefined ? {} : { payload: { authorization: `Bearer ${token}` } }) })
        return raw
      }
      const anonymous = await open()
      const alice = await open(s.t.tokens.alice)
      await until(() => alice.messages.some((m) => m.type === 'connection_ack') && anonymous.messages.some((m) => m.type === 'connection_ack'))
      // A third caller, under its own per-caller limit, finds the instance full.
      const bob = await open(s.t.tokens.bob)
      expect(await bob.closed).toEqual({ code: 1013, reason: 'This instance holds its most subscription connections (2); try again later' })
      const sse = await fetch(`${s.http}/graphql/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${s.t.tokens.bob}` },
        body: JSON.stringify({ query: 'subscription { commentAdded { id } }' }),
      })
      expect(sse.status).toBe(503)
      expect(sse.headers.get('retry-after')).not.toBeNull()
      expect((await sse.json()).errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE')
      // Plain requests are not counted.
      expect((await fetch(`${s.http}/api/v1/users/${s.t.bob.id}`)).status).toBe(200)
      anonymous.socket.close()
      await until(() => s.t.app.subscriptionStats.connections === 1)
      const again = await open(s.t.tokens.bob)
      await until(() => again.messages.some((m) => m.type === 'connection_ack'))
      again.socket.close()
      alice.socket.close()
    } finally {
      await s.t.close()
    }
  })

  it("gives an event stream's connection slot back when its client goes away", async () => {
    const s = await listening({ GRAPHQL_MAX_CONNECTIONS_PER_CALLER: '2' })
    try {
      for (let i = 0; i < 5; i++) {
        const controller = new AbortController()
        const response = await fetch(`${s.http}/graphql/stream`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream, */*;q=0.1' },
          body: JSON.stringify({ query: 'subscription { commentAdded { id } }' }),
          signal: controller.signal,
        })
        expect(response.status).toBe(200)
        await subscribed(s.t, 1)
        controller.abort()
        await until(() => s.t.app.subscriptionStats.connections === 0 && s.t.app.subscriptionStats.subscriptions === 0)
      }
      // Clients that go away as soon as their request is sent, some before it is even read.
      const { connect } = await import('node:net')
      const { port } = new URL(s.http)
      const body = JSON.stringify({ query: 'subscription { commentAdded { id } }' })
      for (let i = 0; i < 40; i++) {
        const socket = connect(Number(port), '127.0.0.1')
        await new Promise((resolve) => socket.once('connect', resolve))
        socket.write(
          `POST /graphql/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.t.tokens.alice}\r\nContent-Type: application/json\r\n` +
            `Accept: text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        )
        if (i % 2 === 0) await new Promise((resolve) => setImmediate(resolve))
        socket.destroy()
      }
      await until(() => s.t.app.subscriptionStats.connections === 0 && s.t.app.subscriptionStats.subscriptions === 0)
      // Every slot came back: the caller can open as many streams as the limit allows.
      const held = await Promise.all(
        [0, 1].map(() =>
          fetch(`${s.http}/graphql/stream`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${s.t.tokens.alice}` },
            body,
          }),
        ),
      )
      expect(held.map((response) => response.status)).toEqual([200, 200])
      for (const response of held) await response.body?.cancel()
    } finally {
      await s.t.close()
    }
  })

  it('drops an event stream that falls too far behind, and counts it', async () => {
    const events = createMemoryEvents<AppTopics>()
    const s = await listening({ GRAPHQL_MAX_PENDING_EVENTS: '5' }, { events })
    try {
      const post = (
        await s.t.request({ method: 'POST', url: `/api/v1/users/${s.t.alice.id}/posts`, token: s.t.tokens.alice, json: { title: 'busy', content: '.' } })
      ).json().data
      const comment = (
        await s.t.request({ method: 'POST', url: `/api/v1/users/${s.t.alice.id}/posts/${post.id}/comments`, token: s.t.tokens.bob, json: { content: 'x' } })
      ).json().data
      const { request: httpRequest } = await import('node:http')
      let resume = () => undefined as unknown
      const ended = new Promise<void>((resolve) => {
        const request = httpRequest(
          `${s.http}/graphql/stream`,
          { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' } },
          (response) => {
            // The client reads nothing: the socket's buffers fill, then the server's queue for it.
            response.pause()
            response.socket.pause()
            response.socket.on('close', () => resolve())
            resume = () => response.resume()
          },
        )
        request.end(JSON.stringify({ query: 'subscription { commentAdded { content } }' }))
      })
      await subscribed(s.t, 1)
      const big = 'x'.repeat(100_000)
      for (let i = 0; i < 400 && s.t.app.subscriptionStats.droppedSlowConsumers === 0; i++) {
        await events.publish('commentAdded', { comment: { ...comment, content: big }, post: { ...post, userId: s.t.alice.id }, author: { ...s.t.bob } })
        await new Promise((resolve) => setImmediate(resolve))
      }
      expect(s.t.app.subscriptionStats.droppedSlowConsumers).toBe(1)
      resume()
      await ended
      await until(() => s.t.app.subscriptionStats.connections === 0 && s.t.app.subscriptionStats.subscriptions === 0)
    } finally {
      await s.t.close()
    }
  })

  it("closes on a bad frame with the protocol's code and logs no server error for it", async () => {
    const lines: string[] = []
    const s = await listening({ LOG_LEVEL: 'info', GRAPHQL_WS_MAX_MESSAGE_BYTES: '1024' }, { logStream: { write: (line) => lines.push(line) } })
    try {
      const raw = rawSocket(s.ws)
      await raw.opened
      raw.send({ type: 'connection_init' })
      await until(() => raw.messages.some((m) => m.type === 'connection_ack'))
      raw.socket.send('x'.repeat(5000))
      expect(await raw.closed).toMatchObject({ code: 1009 })
      const out = rawSocket(s.ws)
      await out.opened
      out.send({ type: 'connection_init' })
      await until(() => out.messages.some((m) => m.type === 'connection_ack'))
      out.send({ id: '1', type: 'next', payload: {} })
      expect(await out.closed).toMatchObject({ code: 4400 })
    } finally {
      await s.t.close()
    }
    const serious = lines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((entry) => entry.level >= 40)
    expect(serious).toEqual([])
  })

  it('closes with 4500 and logs an error when our side fails, not blaming the client', async () => {
    const lines: string[] = []
    const s = await listening({ LOG_LEVEL: 'error' }, { logStream: { write: (line) => lines.push(line) } })
    try {
      // The store fails under the token check (its table is gone).
      await s.t.database.db.schema.dropTable('tokens').execute()
      const raw = rawSocket(s.ws)
      await raw.opened
      raw.send({ type: 'connection_init', payload: { authorization: `Bearer ${s.t.tokens.alice}` } })
      const closed = await raw.closed
      expect(closed.code).toBe(4500)
      expect(closed.reason).toMatch(/^Something went wrong on our side; quote request id /)
      expect(closed.reason).not.toMatch(/tokens|SQL/i)
    } finally {
      await s.t.close()
    }
    const errors = lines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message: string } }).filter((entry) => entry.level >= 50)
    expect(errors).toEqual([
      expect.objectContaining({
        msg: 'unexpected error',
        in: 'subscription server',
        err: expect.objectContaining({ message: expect.stringMatching(/no such table|relation "tokens" does not exist/) as string }) as object,
      }),
    ])
  })

  it('counts subscribe messages against the rate limit', async () => {
    const s = await listening({ RATE_LIMIT_MAX: '3' })
    try {
      const raw = rawSocket(s.ws)
      await raw.opened // the upgrade is the first request
      raw.send({ type: 'connection_init' })
      await until(() => raw.messages.some((m) => m.type === 'connection_ack'))
      // One at a time: @fastify/rate-limit's in-memory store reads its counter after an await, so
      // calls that overlap all see the last count.
      raw.send({ id: '1', type: 'subscribe', payload: { query: 'subscription { commentAdded { id } }' } })
      await subscribed(s.t, 1)
      raw.send({ id: '2', type: 'subscribe', payload: { query: 'subscription { commentAdded { id } }' } })
      await subscribed(s.t, 2)
      raw.send({ id: '3', type: 'subscribe', payload: { query: 'subscription { commentAdded { id } }' } })
      await until(() => raw.messages.some((m) => m.type === 'error'))
      await settle()
      expect(s.t.app.subscriptionStats.subscriptions).toBe(2)
      const errors = raw.messages.filter((m) => m.type === 'error')
      expect(errors).toHaveLength(1)
      expect(errors[0]).toMatchObject({ id: '3', payload: [{ extensions: { code: 'RATE_LIMITED' } }] })
      raw.socket.close()
    } finally {
      await s.t.close()
    }
  })

  it('drops a client that does not answer a ping in time', async () => {
    const s = await listening({ GRAPHQL_WS_KEEPALIVE_MS: '100' })
    try {
      const socket = new WebSocket(s.ws, 'graphql-transport-ws', { autoPong: false })
      const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)))
      await new Promise((resolve) => socket.on('open', resolve))
      socket.send(JSON.stringify({ type: 'connection_init' }))
      // Terminated, not closed: no close frame, so the client sees 1006.
      expect(await closed).toBe(1006)
      await until(() => s.t.app.subscriptionStats.connections === 0)
    } finally {
      await s.t.close()
    }
  })

  it('pings to keep connections alive', async () => {
    const s = await listening({ GRAPHQL_WS_KEEPALIVE_MS: '100' })
    try {
      const raw = rawSocket(s.ws)
      let pings = 0
      raw.socket.on('ping', () => pings++)
      await raw.opened
      raw.send({ type: 'connection_init' })
      await until(() => pings >= 2)
      raw.socket.close()
    } finally {
      await s.t.close()
    }
  })

  it('drops a subscriber that falls too far behind, with 1008, and counts it', async () => {
    const events = createMemoryEvents<AppTopics>()
    const s = await listening({ GRAPHQL_MAX_PENDING_EVENTS: '5' }, { events })
    try {
      const post = (
        await s.t.request({ method: 'POST', url: `/api/v1/users/${s.t.alice.id}/posts`, token: s.t.tokens.alice, json: { title: 'busy', content: '.' } })
      ).json().data
      const comment = (
        await s.t.request({ method: 'POST', url: `/api/v1/users/${s.t.alice.id}/posts/${post.id}/comments`, token: s.t.tokens.bob, json: { content: 'x' } })
      ).json().data
      const slow = rawSocket(s.ws)
      await slow.opened
      slow.send({ type: 'connection_init' })
      await until(() => slow.messages.some((m) => m.type === 'connection_ack'))
      slow.send({ id: '1', type: 'subscribe', payload: { query: 'subscription { commentAdded { content } }' } })
      await subscribed(s.t, 1)
      // The client stops reading: the kernel's buffers fill, then the server's queue for it.
      ;(slow.socket as unknown as { _socket: { pause(): void } })._socket.pause()
      const big = 'x'.repeat(100_000)
      const author = { ...s.t.bob }
      for (let i = 0; i < 400 && s.t.app.subscriptionStats.droppedSlowConsumers === 0; i++) {
        await events.publish('commentAdded', { comment: { ...comment, content: big }, post: { ...post, userId: s.t.alice.id }, author })
        await new Promise((resolve) => setImmediate(resolve))
      }
      expect(s.t.app.subscriptionStats.droppedSlowConsumers).toBe(1)
      ;(slow.socket as unknown as { _socket: { resume(): void } })._socket.resume()
      expect(await slow.closed).toMatchObject({ code: 1008 })
    } finally {
      await s.t.close()
    }
  })

  it('cuts, on shutdown, a WebSocket that does not close when told', async () => {
    const s = await listening()
    const raw = rawSocket(s.ws)
    await raw.opened
    raw.send({ type: 'connection_init' })
    await until(() => raw.messages.some((m) => m.type === 'connection_ack'))
    // A client that reads nothing never answers the close frame.
    ;(raw.socket as unknown as { _socket: { pause(): void } })._socket.pause()
    // Without the cut, ws waits 30 s for the close handshake: longer than this test may take.
    await s.t.close()
    ;(raw.socket as unknown as { _socket: { resume(): void } })._socket.resume()
    await raw.closed
  })

  it('closes open WebSockets with 1001 when the app shuts down', async () => {
    const s = await listening()
    const raw = rawSocket(s.ws)
    await raw.opened
    raw.send({ type: 'connection_init' })
    await until(() => raw.messages.some((m) => m.type === 'connection_ack'))
    await s.t.close()
    expect(await raw.closed).toMatchObject({ code: 1001 })
  })
})
