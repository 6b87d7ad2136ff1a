// Events on Redis, through the public surface: two instances (two apps on one Redis, each
// listening), real graphql-ws and graphql-sse clients. Outages are played on a private
// redis-server, killed and restarted on its port.
import { createClient as createSseClient } from 'graphql-sse'
import { type Client, createClient } from 'graphql-ws'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { EVENTS_INTERRUPTED_MESSAGE } from '../../src/graphql/schema.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { canRunPrivateRedis, PrivateRedis, uniquePrefix } from '../helpers/private-redis.js'
import { redisUrl } from '../helpers/services.js'
import { until } from '../helpers/until.js'

const sharedUrl = await redisUrl()
const privateRedis = canRunPrivateRedis()

interface Instance {
  t: TestApp
  http: string
  ws: string
  /** A published post of alice's. */
  postId: number
  /** Creates a comment by bob on a published post of alice's on this instance: the status. */
  comment(content: string): Promise<number>
}

const instances: Instance[] = []
const cleanups: (() => unknown)[] = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
  await Promise.all(instances.splice(0).map((i) => i.t.close()))
})

async function instance(env: Record<string, string>, logs?: string[]): Promise<Instance> {
  const t = await buildTestApp(
    { ...env, ...(logs === undefined ? {} : { LOG_LEVEL: 'info' }) },
    logs === undefined ? {} : { logStream: { write: (line) => void logs.push(line) } },
  )
  const http = await t.app.listen({ host: '127.0.0.1', port: 0 })
  const post = (
    await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts`, token: t.tokens.alice, json: { title: 'on air', content: '.' } })
  ).json().data.id as number
  const comment = async (content: string) =>
    (await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts/${post}/comments`, token: t.tokens.bob, json: { content } })).statusCode
  const made = { t, http, ws: `${http.replace('http', 'ws')}/graphql`, postId: post, comment }
  instances.push(made)
  return made
}

/** A graphql-ws subscriber to every comment, gathering what arrives. */
function subscriber(at: Instance, selection = '{ content author { name } post { title } }') {
  const client: Client = createClient({ url: at.ws, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false })
  cleanups.push(() => client.dispose())
  const received: unknown[] = []
  const errors: unknown[] = []
  client.subscribe(
    { query: `subscription { commentAdded ${selection} }` },
    { next: (value) => received.push(value), error: (error) => errors.push(error), complete: () => undefined },
  )
  return { received, errors }
}

const subscribed = (at: Instance, count: number) => until(() => at.t.app.subscriptionStats.subscriptions === count)

const interruptedNotice = {
  data: null,
  errors: [{ message: EVENTS_INTERRUPTED_MESSAGE, locations: [{ line: 1, column: 16 }], path: ['commentAdded'], extensions: { code: 'SERVICE_UNAVAILABLE' } }],
}
const delivered = (content: string) => ({ data: { commentAdded: { content } } })

describe.skipIf(sharedUrl === undefined)('events on Redis', () => {
  let redis: Redis
  beforeAll(() => {
    redis = new Redis(sharedUrl as string)
  })
  afterAll(() => redis.quit())

  it('delivers a comment created on instance B to a subscriber connected to instance A, on a channel under the prefix', async () => {
    const prefix = uniquePrefix()
    const a = await instance({ REDIS_URL: sharedUrl as string, REDIS_KEY_PREFIX: prefix })
    const b = await instance({ REDIS_URL: sharedUrl as string, REDIS_KEY_PREFIX: prefix })
    const onA = subscriber(a)
    const onB = subscriber(b)
    await subscribed(a, 1)
    await subscribed(b, 1)

    expect(await b.comment('made on B')).toBe(201)
    await until(() => onA.received.length === 1 && onB.received.length === 1)
    const expected = { data: { commentAdded: { content: 'made on B', author: { name: 'Bob' }, post: { title: 'on air' } } } }
    expect(onA.received).toEqual([expected])
    expect(onB.received).toEqual([expected])
    expect(await redis.pubsub('NUMSUB', `${prefix}events:commentAdded`)).toEqual([`${prefix}events:commentAdded`, 2])
    expect(a.t.app.faults).toEqual({ rateLimitStoreErrors: 0, eventPublishFailures: 0, eventInterruptions: 0 })
  })

  it('holds one Redis subscription per instance whatever the number of subscribers, and keeps other prefixes apart', async () => {
    const prefix = uniquePrefix()
    const a = await instance({ REDIS_URL: sharedUrl as string, REDIS_KEY_PREFIX: prefix })
    const elsewhere = await instance({ REDIS_URL: sharedUrl as string, REDIS_KEY_PREFIX: uniquePrefix() })
    const many = Array.from({ length: 5 }, () => subscriber(a, '{ content }'))
    const other = subscriber(elsewhere, '{ content }')
    await subscribed(a, 5)
    await subscribed(elsewhere, 1)
    expect(await redis.pubsub('NUMSUB', `${prefix}events:commentAdded`)).toEqual([`${prefix}events:commentAdded`, 1])

    expect(await a.comment('for five')).toBe(201)
    // Then one on each instance: a subscriber's events come in the order Redis took them, so once
    // these have arrived, nothing before them is on its way.
    expect(await a.comment('last')).toBe(201)
    expect(await elsewhere.comment('last')).toBe(201)
    const last = JSON.stringify(delivered('last'))
    await until(() => [...many, other].every((s) => s.received.some((result) => JSON.stringify(result) === last)))
    expect(many.map((s) => s.received)).toEqual(Array.from({ length: 5 }, () => [delivered('for five'), delivered('last')]))
    expect(other.received).toEqual([delivered('last')])
  })

  it('drops a forged or malformed message on its channel, logs it, and goes on delivering', async () => {
    const prefix = uniquePrefix()
    const logs: string[] = []
    const a = await instance({ REDIS_URL: sharedUrl as string, REDIS_KEY_PREFIX: prefix }, logs)
    const onA = subscriber(a)
    await subscribed(a, 1)
    const real = (await a.t.request({ method: 'GET', url: `/api/v1/users/${a.t.alice.id}/posts/${a.postId}` })).json().data
    const forged = [
      'not json',
      'null',
      '[]',
      '{}',
      '{"comment":null,"post":null,"author":null}',
      // Shaped like an event, but missing fields the subscriber asked for.
      JSON.stringify({ comment: { id: 999 }, post: { id: a.postId }, author: { id: 1 } }),
      // A draft's comment, which the subscriber may not see, with every field.
      JSON.stringify({
        comment: {
          id: 998,
          postId: a.postId,
          authorId: a.t.bob.id,
          author: { id: a.t.bob.id, name: 'Bob' },
          email: null,
          content: 'forged',
          createdAt: real.createdAt,
          updatedAt: real.updatedAt,
        },
        post: { ...real, status: 'draft', title: 'forged' },
        author: a.t.bob,
      }),
      '{"__proto__":{"polluted":true},"comment":{}}',
    ]
    for (const message of forged) await redis.publish(`${prefix}events:commentAdded`, message)
    expect(await a.comment('after the forgeries')).toBe(201)
    // Published after the forgeries, on the same channel: a forgery let through would come first.
    await until(() => onA.received.length >= 1)
    expect(onA.received).toEqual([{ data: { commentAdded: { content: 'after the forgeries', author: { name: 'Bob' }, post: { title: 'on air' } } } }])
    expect(onA.errors).toEqual([])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    const dropped = logs.map((line) => JSON.parse(line) as { msg: string; level: number }).filter((line) => /event from Redis: dropped/.test(line.msg))
    expect(dropped).toHaveLength(forged.length - 1)
    expect((await a.t.request({ method: 'GET', url: `/api/v1/users/${a.t.alice.id}` })).statusCode).toBe(200)
  })
})

describe.skipIf(!privateRedis)('events when Redis goes away', () => {
  let server: PrivateRedis
  beforeAll(async () => {
    server = await PrivateRedis.onFreePort()
  })
  afterEach(() => server.start())
  afterAll(() => server.stop())

  /** Comments until one is delivered to `s` (a publish right after Redis returns may still fail). */
  async function commentUntilDelivered(at: Instance, s: { received: unknown[] }): Promise<string> {
    const before = s.received.length
    for (let i = 0; ; i++) {
      const content = `after the outage ${i}`
      expect(await at.comment(content)).toBe(201)
      try {
        await until(() => s.received.length > before, 200)
        return content
      } catch {
        if (i === 20) throw new Error('events did not resume')
      }
    }
  }

  it('tells open subscribers through the protocol, keeps them open, counts failed publishes without failing the write, and delivers again once Redis is back', async () => {
    await server.start()
    const logs: string[] = []
    const a = await instance({ REDIS_URL: server.url, REDIS_KEY_PREFIX: uniquePrefix() }, logs)
    const ws = subscriber(a, '{ content }')
    const sse = createSseClient({ url: `${a.http}/graphql/stream`, retryAttempts: 0 })
    cleanups.push(() => sse.dispose())
    const overSse: unknown[] = []
    sse.subscribe(
      { query: 'subscription { commentAdded { content } }' },
      { next: (value) => overSse.push(value), error: () => undefined, complete: () => undefined },
    )
    await subscribed(a, 2)
    expect(await a.comment('before')).toBe(201)
    await until(() => ws.received.length === 1 && overSse.length === 1)

    await server.stop()
    await until(() => ws.received.length === 2 && overSse.length === 2)
    expect(ws.received[1]).toEqual(interruptedNotice)
    expect(overSse[1]).toEqual(interruptedNotice)
    expect(a.t.app.subscriptionStats.subscriptions).toBe(2)

    // Writes go on; what they would have published is lost, logged once and counted.
    expect(await a.comment('during, over REST')).toBe(201)
    const mutation = await a.t.request({
      method: 'POST',
      url: '/graphql',
      token: a.t.tokens.bob,
      json: { query: `mutation { addComment(input: {postId: "${a.postId}", content: "during, over GraphQL"}) { content } }` },
    })
    expect(mutation.json()).toEqual({ data: { addComment: { content: 'during, over GraphQL' } } })
    expect(a.t.app.faults).toMatchObject({ eventPublishFailures: 2, eventInterruptions: 1 })
    const lines = logs.map((line) => JSON.parse(line) as { msg: string })
    expect(lines.filter((line) => line.msg.startsWith('event publishing failing'))).toHaveLength(1)

    // A subscription opened during the outage is told at once.
    const late = subscriber(a, '{ content }')
    await until(() => late.received.length === 1)
    expect(late.received).toEqual([interruptedNotice])

    await server.start()
    const content = await commentUntilDelivered(a, ws)
    await until(() => late.received.length === 2 && overSse.length === 3)
    expect(ws.received.slice(2)).toEqual([delivered(content)])
    expect(late.received[1]).toEqual(delivered(content))
    expect(overSse[2]).toEqual(delivered(content))
    expect([ws.errors, late.errors]).toEqual([[], []])
    expect(a.t.app.faults.eventInterruptions).toBe(1)
    expect(logs.map((line) => (JSON.parse(line) as { msg: string }).msg)).toContain('event publishing working again')
  })

  it('starts when Redis is unreachable, tells new subscribers, and delivers once Redis answers', async () => {
    await server.stop()
    const a = await instance({ REDIS_URL: server.url, REDIS_KEY_PREFIX: uniquePrefix() })
    const s = subscriber(a, '{ content }')
    await until(() => s.received.length === 1)
    expect(s.received).toEqual([interruptedNotice])
    expect(await a.comment('nobody hears this')).toBe(201)
    expect(a.t.app.faults).toMatchObject({ eventPublishFailures: 1, eventInterruptions: 1 })

    await server.start()
    const content = await commentUntilDelivered(a, s)
    expect(s.received).toEqual([interruptedNotice, delivered(content)])
  })

  it('tells subscribers of a Redis that hangs (no answer, the connection up), serves meanwhile, and resumes when it answers', async () => {
    await server.start()
    const a = await instance({ REDIS_URL: server.url, REDIS_KEY_PREFIX: uniquePrefix(), RATE_LIMIT_MAX: '1000' })
    const s = subscriber(a, '{ content }')
    await subscribed(a, 1)
    server.pause()
    try {
      // Found by the health check's PING: within its interval and timeout (3 s), with margin.
      await until(() => s.received.length === 1, 6000)
      expect(s.received).toEqual([interruptedNotice])
      // The rate limit cannot count the request and lets it through (counted), as when Redis is
      // down: a caller new to the instance, which holds no points of its allowance here.
      const res = await a.t.request({ method: 'GET', url: '/api/v1/users', remoteAddress: '10.79.0.1' })
      expect(res.statusCode).toBe(200)
      expect(a.t.app.faults.rateLimitStoreErrors).toBeGreaterThan(0)
      expect(await a.comment('while it hangs')).toBe(201)
    } finally {
      server.resume()
    }
    const content = await commentUntilDelivered(a, s)
    expect(s.received).toEqual([interruptedNotice, delivered(content)])
  })

  it('delivers across instances again after an outage', async () => {
    await server.start()
    const prefix = uniquePrefix()
    const a = await instance({ REDIS_URL: server.url, REDIS_KEY_PREFIX: prefix })
    const b = await instance({ REDIS_URL: server.url, REDIS_KEY_PREFIX: prefix })
    const onA = subscriber(a, '{ content }')
    await subscribed(a, 1)
    await server.stop()
    await until(() => onA.received.length === 1)
    await server.start()
    const content = await commentUntilDelivered(b, onA)
    expect(onA.received).toEqual([interruptedNotice, delivered(content)])
  })
})
