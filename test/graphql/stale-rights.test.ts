// Rights follow the caller on long-lived connections: a token revoked (over REST, or behind the
// server's back in the database, as the CLI of another process does), a token that expires, a user
// deleted or demoted takes effect on every open WebSocket (graphql-transport-ws) and event stream
// (graphql-sse) of theirs within a second — closed with 4401 / ended with an UNAUTHENTICATED error
// event, or judged with the new role at the next operation and the next delivery.
import { createHash } from 'node:crypto'
import { type Client, createClient } from 'graphql-ws'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, type Factories } from '../helpers/factories.js'
import { until } from '../helpers/until.js'

interface Listening {
  t: TestApp
  http: string
  ws: string
}

/** Lets an operation sent just before its socket was closed run, if it were to, before asserting that it did not. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200))

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map(async (cleanup) => cleanup()))
})

/** A graphql-ws client signed in with `token`, recording how its socket closed. */
function wsClient(url: string, token: string) {
  const closes: number[] = []
  const client: Client = createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
    connectionParams: { authorization: `Bearer ${token}` },
    on: { closed: (event) => closes.push((event as { code: number }).code) },
    // The close is what the test looks at; graphql-ws would print it.
    onNonLazyError: () => undefined,
  })
  cleanups.push(() => client.dispose())
  return { client, closes }
}

function gather(client: Client, query: string, variables?: Record<string, unknown>) {
  const received: unknown[] = []
  const errors: unknown[] = []
  client.subscribe({ query, variables }, { next: (value) => received.push(value), error: (error) => errors.push(error), complete: () => undefined })
  return { received, errors }
}

/** A raw graphql-transport-ws socket, signed in and acknowledged, to send what a client would not. */
async function rawSocket(url: string, token: string) {
  const socket = new WebSocket(url, 'graphql-transport-ws')
  cleanups.push(() => socket.terminate())
  const messages: { type: string; id?: string; payload?: unknown }[] = []
  socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString()) as (typeof messages)[number]))
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)))
  await new Promise<void>((resolve, reject) => {
    socket.on('open', () => resolve())
    socket.on('error', reject)
  })
  const send = (message: unknown) => socket.send(JSON.stringify(message))
  send({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })
  await until(() => messages.some((m) => m.type === 'connection_ack'))
  let closedWith: number | undefined
  void closed.then((code) => (closedWith = code))
  return { socket, messages, send, closedCode: () => closedWith }
}

/** An event stream (graphql-sse, distinct connections) read as raw text, signed in with `token`. */
async function eventStream(http: string, token: string, query: string) {
  const controller = new AbortController()
  cleanups.push(() => controller.abort())
  const response = await fetch(`${http}/graphql/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query }),
    signal: controller.signal,
  })
  expect(response.status).toBe(200)
  const stream = { text: '', ended: false }
  void (async () => {
    const decoder = new TextDecoder()
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) stream.text += decoder.decode(chunk, { stream: true })
    } catch {
      // aborted by the test
    }
    stream.ended = true
  })()
  return stream
}

/** The `next` events of an event stream, parsed. */
const nextEvents = (text: string) =>
  [...text.matchAll(/event: next\ndata: (.*)\n\n/g)].map((match) => JSON.parse(match[1] as string) as { data?: unknown; errors?: unknown[] })

const REVOKED_END = /event: next\ndata: \{"errors":\[\{"message":"[^"]+","extensions":\{"code":"UNAUTHENTICATED"\}\}\]\}\n\nevent: complete\ndata:\n\n$/

describe('rights follow the caller on long-lived connections', () => {
  let s: Listening
  let make: Factories
  let draft: number
  let published: number

  beforeAll(async () => {
    const t = await buildTestApp()
    const http = await t.app.listen({ host: '127.0.0.1', port: 0 })
    s = { t, http, ws: `${http.replace('http', 'ws')}/graphql` }
    make = createFactories(t)
    draft = (await make.draft(t.alice, { title: 'draft' })).id
    published = (await make.post(t.alice, { title: 'published' })).id
  })
  afterAll(() => s.t.close())

  const comment = async (postId: number, content: string) =>
    expect(
      (await s.t.request({ method: 'POST', url: `/api/v1/users/${s.t.alice.id}/posts/${postId}/comments`, token: s.t.tokens.alice, json: { content } }))
        .statusCode,
    ).toBe(201)
  const subscribed = (count: number) => until(() => s.t.app.subscriptionStats.subscriptions === count)
  const todosNamed = async (text: string) => (await s.t.database.db.selectFrom('todos').select('id').where('text', '=', text).execute()).length
  const usersWithEmail = async (email: string) => (await s.t.database.db.selectFrom('users').select('id').where('email', '=', email).execute()).length
  const revokeInDatabase = (token: string) =>
    s.t.database.db
      .updateTable('tokens')
      .set({ revoked_at: new Date().toISOString() })
      .where('token_hash', '=', createHash('sha256').update(token).digest('hex'))
      .execute()
  const newAdmin = (name: string) => make.signedIn({ name, email: `${name}@example.com`, role: 'admin' })
  const ALL = 'subscription { commentAdded { content } }'

  it('closes the WebSocket with 4401 and ends the event stream with an UNAUTHENTICATED error once the token is revoked over REST; nothing sent over the socket afterwards runs', async () => {
    await subscribed(0)
    const token = await s.t.tokenFor(s.t.alice.id)
    const ws = wsClient(s.ws, token)
    const onWs = gather(ws.client, ALL)
    const raw = await rawSocket(s.ws, token)
    const sse = await eventStream(s.http, token, ALL)
    await subscribed(2)
    await comment(draft, 'before revoking')
    await until(() => onWs.received.length === 1 && nextEvents(sse.text).length === 1)

    expect((await s.t.request({ method: 'DELETE', url: '/api/v1/tokens/current', token })).statusCode).toBe(204)
    // At once, before the client could have seen the close: a mutation over the old socket.
    raw.send({ id: 'm', type: 'subscribe', payload: { query: 'mutation { addTodo(text: "after revoking") { id } }' } })
    await comment(draft, 'after revoking')
    await until(() => ws.closes.length === 1 && raw.closedCode() !== undefined && sse.ended, 1000)
    expect(ws.closes).toEqual([4401])
    expect(raw.closedCode()).toBe(4401)
    expect(sse.text).toMatch(REVOKED_END)
    await settle()
    expect(await todosNamed('after revoking')).toBe(0)
    expect(onWs.received).toEqual([{ data: { commentAdded: { content: 'before revoking' } } }])
    expect(nextEvents(sse.text).map((event) => event.data)).toEqual([{ commentAdded: { content: 'before revoking' } }, undefined])
  })

  it("judges every later delivery and operation of a demoted admin as a user: no more comments on drafts, no updatePost on another user's draft", async () => {
    await subscribed(0)
    const demoted = await newAdmin('demoted')
    const ws = wsClient(s.ws, demoted.token)
    const onWs = gather(ws.client, ALL)
    const sse = await eventStream(s.http, demoted.token, ALL)
    await subscribed(2)
    await comment(draft, 'draft, while admin')
    await until(() => onWs.received.length === 1 && nextEvents(sse.text).length === 1)

    const patched = await s.t.request({ method: 'PATCH', url: `/api/v1/users/${demoted.user.id}`, token: s.t.tokens.admin, json: { role: 'user' } })
    expect(patched.statusCode).toBe(200)
    await comment(draft, 'draft, once demoted')
    await comment(published, 'published, once demoted')
    // Delivered in order: the draft's comment, made before, was skipped or came first.
    await until(() => onWs.received.length === 2 && nextEvents(sse.text).length === 2)
    expect(onWs.received).toEqual([
      { data: { commentAdded: { content: 'draft, while admin' } } },
      { data: { commentAdded: { content: 'published, once demoted' } } },
    ])
    expect(nextEvents(sse.text).map((event) => event.data)).toEqual([
      { commentAdded: { content: 'draft, while admin' } },
      { commentAdded: { content: 'published, once demoted' } },
    ])

    const update = await new Promise<{ errors?: { extensions: { code: string } }[] }>((resolve, reject) => {
      let result: unknown
      ws.client.subscribe(
        { query: `mutation { updatePost(id: "${draft}", input: { title: "taken over" }) { id } }` },
        { next: (value) => (result = value), error: reject, complete: () => resolve(result as never) },
      )
    })
    expect(['FORBIDDEN', 'NOT_FOUND']).toContain(update.errors?.[0]?.extensions.code)
    const post = await s.t.request({ method: 'GET', url: `/api/v1/users/${s.t.alice.id}/posts/${draft}`, token: s.t.tokens.alice })
    expect(post.json().data.title).toBe('draft')
    expect(ws.closes).toEqual([])
    expect(sse.ended).toBe(false)
  })

  it("widens a promoted user's connection only as the database says: comments on drafts arrive once promoted", async () => {
    await subscribed(0)
    const { user, token } = await make.signedIn({ name: 'Promoted' })
    const ws = wsClient(s.ws, token)
    const onWs = gather(ws.client, ALL)
    await subscribed(1)
    await comment(draft, 'draft, before promotion')
    expect((await s.t.request({ method: 'PATCH', url: `/api/v1/users/${user.id}`, token: s.t.tokens.admin, json: { role: 'admin' } })).statusCode).toBe(200)
    await until(async () => {
      await comment(draft, 'draft, once promoted')
      return onWs.received.length > 0
    }, 2000)
    expect(onWs.received[0]).toEqual({ data: { commentAdded: { content: 'draft, once promoted' } } })
  })

  it('closes the connections of a deleted admin; a createUser sent over the socket does not run', async () => {
    await subscribed(0)
    const deleted = await newAdmin('deleted')
    const ws = wsClient(s.ws, deleted.token)
    gather(ws.client, ALL)
    const raw = await rawSocket(s.ws, deleted.token)
    const sse = await eventStream(s.http, deleted.token, ALL)
    await subscribed(2)

    expect((await s.t.request({ method: 'DELETE', url: `/api/v1/users/${deleted.user.id}`, token: s.t.tokens.admin })).statusCode).toBe(204)
    raw.send({
      id: 'c',
      type: 'subscribe',
      payload: { query: 'mutation { createUser(input: { name: "Mallory", email: "mallory@example.com", role: admin }) { id } }' },
    })
    await until(() => ws.closes.length === 1 && raw.closedCode() !== undefined && sse.ended, 1000)
    expect(ws.closes).toEqual([4401])
    expect(raw.closedCode()).toBe(4401)
    expect(sse.text).toMatch(REVOKED_END)
    await settle()
    expect(await usersWithEmail('mallory@example.com')).toBe(0)
  })

  it('catches, within about a second, a token revoked where no event tells of it (the CLI of another process, the database itself)', async () => {
    await subscribed(0)
    const token = await s.t.tokenFor(s.t.alice.id)
    const ws = wsClient(s.ws, token)
    const onWs = gather(ws.client, ALL)
    const sse = await eventStream(s.http, token, ALL)
    await subscribed(2)

    await revokeInDatabase(token)
    const revokedAt = Date.now()
    await until(() => ws.closes.length === 1 && sse.ended, 2500)
    expect(Date.now() - revokedAt).toBeLessThan(1500)
    expect(ws.closes).toEqual([4401])
    expect(sse.text).toMatch(REVOKED_END)
    // The socket is closed: nothing can arrive on it.
    await comment(draft, 'after the sweep')
    expect(onWs.received).toEqual([])
  })

  it('re-authenticates each operation sent over a WebSocket: a token revoked behind its back refuses the next one at once', async () => {
    const token = await s.t.tokenFor(s.t.alice.id)
    const raw = await rawSocket(s.ws, token)
    await revokeInDatabase(token)
    raw.send({ id: 't', type: 'subscribe', payload: { query: 'mutation { addTodo(text: "behind its back") { id } }' } })
    await until(() => raw.closedCode() !== undefined, 500)
    expect(raw.closedCode()).toBe(4401)
    expect(await todosNamed('behind its back')).toBe(0)
  })

  it('closes the connections of an expiring token when it expires', async () => {
    await subscribed(0)
    const token = await s.t.tokenFor(s.t.alice.id, 1500)
    const opened = Date.now()
    const ws = wsClient(s.ws, token)
    gather(ws.client, ALL)
    const sse = await eventStream(s.http, token, ALL)
    await subscribed(2)
    await until(() => ws.closes.length === 1 && sse.ended, 4000)
    expect(Date.now() - opened).toBeGreaterThanOrEqual(1400)
    expect(Date.now() - opened).toBeLessThan(3000)
    expect(ws.closes).toEqual([4401])
    expect(sse.text).toMatch(REVOKED_END)
  })

  it('costs nothing while no signed-in connection is open, and leaves anonymous connections alone', async () => {
    await subscribed(0)
    const queries: string[] = []
    const t = await buildTestApp({}, { onQuery: (sql) => queries.push(sql) })
    try {
      const http = await t.app.listen({ host: '127.0.0.1', port: 0 })
      const anonymous = createClient({
        url: `${http.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: false,
        onNonLazyError: () => undefined,
      })
      cleanups.push(() => anonymous.dispose())
      gather(anonymous, ALL)
      await until(() => t.app.subscriptionStats.subscriptions === 1)
      queries.length = 0
      await new Promise((resolve) => setTimeout(resolve, 2200))
      expect(queries.filter((sql) => sql.includes('"tokens"'))).toEqual([])
    } finally {
      await t.close()
    }
  })
})
