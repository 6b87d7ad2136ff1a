// Rights follow the caller across instances: two `threadline serve` processes on one PostgreSQL and
// one Redis; a token revoked, a user demoted or deleted through instance A reaches the connections
// (WebSocket and event stream) the caller holds on instance B within a second, through the events
// port (callerChanged) — not through B's once-a-second check alone.
import { type Client, createClient } from 'graphql-ws'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { type ServeProcess, startServe, tokenFromCli } from '../helpers/serve-process.js'
import { postgresUrl, redisUrl } from '../helpers/services.js'
import { freshPostgresDatabase, type TestDatabase } from '../helpers/test-store.js'
import { until } from '../helpers/until.js'

const postgres = await postgresUrl()
const redis = await redisUrl()

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map(async (cleanup) => cleanup()))
})

describe.runIf(postgres !== undefined && redis !== undefined)('rights follow the caller across two instances on Redis', () => {
  let database: TestDatabase
  let a: ServeProcess
  let b: ServeProcess
  let adminToken: string
  const prefix = `threadline-test:${process.pid}:${Date.now()}:rights:`

  beforeAll(async () => {
    database = await freshPostgresDatabase()
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: redis as string,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_MAX: '100000',
      RATE_LIMIT_AUTHENTICATED_MAX: '100000',
    }
    // One first (it migrates and seeds), then the other.
    a = await startServe(env)
    b = await startServe(env)
    adminToken = await tokenFromCli(database.url, 1)
  }, 60_000)

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await database?.drop()
    const client = new Redis(redis as string)
    const keys = await client.keys(`${prefix}*`)
    if (keys.length > 0) await client.del(...keys)
    client.disconnect()
  })

  const call = async (base: string, method: string, path: string, token: string, json?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    })
    return { status: response.status, body: response.status === 204 ? undefined : ((await response.json()) as { data: { id: number } }) }
  }

  /** A WebSocket to B, signed in with `token`, subscribed to every comment; what arrives and how it closed. */
  function subscribeOnB(token: string) {
    const closes: number[] = []
    const received: string[] = []
    const client: Client = createClient({
      url: `${b.address.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      lazy: false,
      connectionParams: { authorization: `Bearer ${token}` },
      on: { closed: (event) => closes.push((event as { code: number }).code) },
      onNonLazyError: () => undefined,
    })
    cleanups.push(() => client.dispose())
    client.subscribe<{ commentAdded: { content: string } }>(
      { query: 'subscription { commentAdded { content } }' },
      { next: (value) => received.push(value.data?.commentAdded.content ?? 'error'), error: () => undefined, complete: () => undefined },
    )
    return { closes, received }
  }

  /** An event stream on B, signed in with `token`, as raw text. */
  async function streamOnB(token: string) {
    const controller = new AbortController()
    cleanups.push(() => controller.abort())
    const response = await fetch(`${b.address}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: 'subscription { commentAdded { content } }' }),
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

  /** A post by user 1, and a comment on it by user 1, both made on A. */
  const post = async (status: string) =>
    (await call(a.address, 'POST', '/api/v1/users/1/posts', adminToken, { title: status, content: '.', status })).body?.data.id as number
  const commentOnA = async (postId: number, content: string) =>
    expect((await call(a.address, 'POST', `/api/v1/users/1/posts/${postId}/comments`, adminToken, { content })).status).toBe(201)
  /** Comments on A until B's subscriber has one: its subscription is in place on B. */
  const ready = async (subscriber: { received: string[] }, postId: number) => {
    await until(async () => {
      await commentOnA(postId, 'warm-up')
      return subscriber.received.length > 0
    }, 5000)
  }

  it('closes, on B within a second, the connections of a token revoked on A', async () => {
    const published = await post('published')
    const token = await tokenFromCli(database.url, 2)
    const ws = subscribeOnB(token)
    const sse = await streamOnB(token)
    await ready(ws, published)
    await until(() => sse.text.includes('warm-up'))

    expect((await call(a.address, 'DELETE', '/api/v1/tokens/current', token)).status).toBe(204)
    const revokedAt = Date.now()
    // Well inside B's own once-a-second check: the event on Redis did it.
    await until(() => ws.closes.length === 1 && sse.ended, 1000)
    expect(Date.now() - revokedAt).toBeLessThan(1000)
    expect(ws.closes).toEqual([4401])
    expect(sse.text).toMatch(/"code":"UNAUTHENTICATED"\}\}\]\}\n\nevent: complete\ndata:\n\n$/)
  })

  it('narrows, on B, the connection of an admin demoted on A: comments on drafts stop at once', async () => {
    const [published, draft] = [await post('published'), await post('draft')]
    const created = await call(a.address, 'POST', '/api/v1/users', adminToken, { name: 'Second admin', email: 'second-admin@example.com', role: 'admin' })
    const id = created.body?.data.id as number
    const token = await tokenFromCli(database.url, id)
    const ws = subscribeOnB(token)
    await ready(ws, published)
    await commentOnA(draft, 'draft, while admin')
    await until(() => ws.received.includes('draft, while admin'))

    expect((await call(a.address, 'PATCH', `/api/v1/users/${id}`, adminToken, { role: 'user' })).status).toBe(200)
    await commentOnA(draft, 'draft, once demoted')
    await commentOnA(published, 'published, once demoted')
    await until(() => ws.received.includes('published, once demoted'))
    expect(ws.received).not.toContain('draft, once demoted')
    expect(ws.closes).toEqual([])
  })

  it('closes, on B within a second, the connections of a user deleted on A', async () => {
    const published = await post('published')
    const created = await call(a.address, 'POST', '/api/v1/users', adminToken, { name: 'Leaving', email: 'leaving@example.com', role: 'admin' })
    const id = created.body?.data.id as number
    const token = await tokenFromCli(database.url, id)
    const ws = subscribeOnB(token)
    const sse = await streamOnB(token)
    await ready(ws, published)
    await until(() => sse.text.includes('warm-up'))

    expect((await call(a.address, 'DELETE', `/api/v1/users/${id}`, adminToken)).status).toBe(204)
    const deletedAt = Date.now()
    await until(() => ws.closes.length === 1 && sse.ended, 1000)
    expect(Date.now() - deletedAt).toBeLessThan(1000)
    expect(ws.closes).toEqual([4401])
    expect(sse.text).toMatch(/"code":"UNAUTHENTICATED"/)
  })
})
