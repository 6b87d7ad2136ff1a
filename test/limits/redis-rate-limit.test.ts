// The rate limit on Redis: one allowance across instances, keys under the prefix, and what
// requests meet while Redis is away (let through and counted, or 503 by config) and after it
// returns. Outages are played on a private redis-server, killed and restarted on its port.
import { type Client, createClient } from 'graphql-ws'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { canRunPrivateRedis, PrivateRedis, uniquePrefix } from '../helpers/private-redis.js'
import { redisUrl } from '../helpers/services.js'
import { until } from '../helpers/until.js'

const sharedUrl = await redisUrl()
const privateRedis = canRunPrivateRedis()

const apps: TestApp[] = []
const clients: Client[] = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map(async (client) => client.dispose()))
  await Promise.all(apps.splice(0).map((t) => t.close()))
})

async function instance(env: Record<string, string>, logs?: string[]): Promise<TestApp> {
  const t = await buildTestApp(
    { RATE_LIMIT_MAX: '3', RATE_LIMIT_AUTHENTICATED_MAX: '3', RATE_LIMIT_WINDOW_S: '60', ...env, ...(logs === undefined ? {} : { LOG_LEVEL: 'info' }) },
    logs === undefined ? {} : { logStream: { write: (line) => void logs.push(line) } },
  )
  apps.push(t)
  return t
}

const from = (t: TestApp, remoteAddress: string, url = '/users') => t.app.inject({ method: 'GET', url, remoteAddress })

const messages = (logs: string[]) => logs.map((line) => (JSON.parse(line) as { msg: string }).msg)

describe.skipIf(sharedUrl === undefined)('the rate limit on Redis', () => {
  let redis: Redis
  beforeAll(() => {
    redis = new Redis(sharedUrl as string)
  })
  afterAll(() => redis.quit())

  it('gives two instances one allowance, counted under the key prefix', async () => {
    const prefix = uniquePrefix()
    const a = await instance({ REDIS_URL: sharedUrl as string, REDIS_KEY_PREFIX: prefix })
    const b = await instance({ REDIS_URL: sharedUrl as string, REDIS_KEY_PREFIX: prefix })

    const answers = [await from(a, '10.9.0.1'), await from(b, '10.9.0.1'), await from(a, '10.9.0.1'), await from(b, '10.9.0.1')]
    expect(answers.map((res) => res.statusCode)).toEqual([200, 200, 200, 429])
    expect(answers.map((res) => res.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0'])
    expect(answers[3]?.json().error.code).toBe('RATE_LIMITED')
    // Another caller has an allowance of its own, on either instance.
    expect((await from(b, '10.9.0.2')).statusCode).toBe(200)

    expect((await redis.keys(`${prefix}*`)).sort()).toEqual([`${prefix}rate-limit:ip:10.9.0.1`, `${prefix}rate-limit:ip:10.9.0.2`])
    const ttl = await redis.pttl(`${prefix}rate-limit:ip:10.9.0.1`)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(60_000)
    expect(a.app.faults.rateLimitStoreErrors + b.app.faults.rateLimitStoreErrors).toBe(0)
  })

  it('keeps deployments with different prefixes apart on one Redis', async () => {
    const a = await instance({ REDIS_URL: sharedUrl as string, REDIS_KEY_PREFIX: uniquePrefix() })
    const b = await instance({ REDIS_URL: sharedUrl as string, REDIS_KEY_PREFIX: uniquePrefix() })
    for (let i = 0; i < 3; i++) expect((await from(a, '10.9.1.1')).statusCode).toBe(200)
    expect((await from(a, '10.9.1.1')).statusCode).toBe(429)
    expect((await from(b, '10.9.1.1')).statusCode).toBe(200)
  })
})

describe.skipIf(!privateRedis)('the rate limit when Redis goes away', () => {
  let server: PrivateRedis
  beforeAll(async () => {
    server = await PrivateRedis.onFreePort()
  })
  afterEach(() => server.start())
  afterAll(() => server.stop())

  it('lets requests through uncounted while Redis is away, logs it once, counts each, and limits again once it is back', async () => {
    await server.start()
    const logs: string[] = []
    const t = await instance({ REDIS_URL: server.url, REDIS_KEY_PREFIX: uniquePrefix() }, logs)
    expect((await from(t, '10.8.0.1')).headers['x-ratelimit-remaining']).toBe('2')

    await server.stop()
    const during = []
    for (let i = 0; i < 5; i++) during.push(await from(t, '10.8.0.1'))
    expect(during.map((res) => res.statusCode)).toEqual([200, 200, 200, 200, 200])
    expect(during.every((res) => res.headers['x-ratelimit-limit'] === undefined)).toBe(true)
    expect(t.app.faults.rateLimitStoreErrors).toBe(5)
    expect(messages(logs).filter((msg) => msg.startsWith('rate-limit store failing'))).toEqual([
      'rate-limit store failing: requests are let through uncounted (logged once until it recovers)',
    ])

    await server.start()
    await until(async () => (await from(t, '10.8.0.2')).headers['x-ratelimit-limit'] === '3')
    // The restarted Redis kept nothing (no persistence): 10.8.0.3 starts a fresh allowance.
    const after = [await from(t, '10.8.0.3'), await from(t, '10.8.0.3'), await from(t, '10.8.0.3'), await from(t, '10.8.0.3')]
    expect(after.map((res) => res.statusCode)).toEqual([200, 200, 200, 429])
    expect(messages(logs)).toContain('rate-limit store working again')
    // One line per connection (the rate limit's, and the events' two), however many retries.
    const lost = logs.map((line) => JSON.parse(line) as { msg: string; redis?: string }).filter((line) => line.msg.startsWith('Redis connection lost'))
    expect(lost.map((line) => line.redis?.replace(/^tl-test-\w+:/, '')).sort()).toEqual(['events-publisher', 'events-subscriber', 'rate-limit'])
  })

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After while Redis is away with RATE_LIMIT_ON_REDIS_ERROR=closed, over REST, GraphQL and WebSocket messages alike', async () => {
    await server.start()
    const t = await instance({ REDIS_URL: server.url, REDIS_KEY_PREFIX: uniquePrefix(), RATE_LIMIT_ON_REDIS_ERROR: 'closed' })
    expect((await from(t, '10.8.1.1')).statusCode).toBe(200)
    // A WebSocket opened while Redis is there (its upgrade request is counted like any request).
    const socket = await connected(t)

    await server.stop()
    const rest = await from(t, '10.8.1.1')
    expect(rest.statusCode).toBe(503)
    expect(Number(rest.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(rest.json()).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message: 'The rate limit cannot be checked right now; retry in a moment' } })
    const graphql = await t.app.inject({ method: 'POST', url: '/graphql', remoteAddress: '10.8.1.1', payload: { query: '{ users { id } }' } })
    expect(graphql.statusCode).toBe(503)
    expect(graphql.json()).toEqual({
      errors: [{ message: 'The rate limit cannot be checked right now; retry in a moment', extensions: { code: 'SERVICE_UNAVAILABLE' } }],
    })
    const refused = subscribe(socket)
    await until(() => refused.errors.length === 1)
    expect(refused.errors[0]).toEqual([
      { message: 'The rate limit cannot be checked right now; retry in a moment', extensions: { code: 'SERVICE_UNAVAILABLE', retryAfter: 1 } },
    ])
    expect(t.app.subscriptionStats.subscriptions).toBe(0)
    expect(t.app.faults.rateLimitStoreErrors).toBe(3)

    await server.start()
    await until(async () => (await from(t, '10.8.1.2')).statusCode === 200)
    subscribe(socket)
    await until(() => t.app.subscriptionStats.subscriptions === 1)
  })

  it('lets WebSocket subscribe messages through while Redis is away by default', async () => {
    await server.start()
    const t = await instance({ REDIS_URL: server.url, REDIS_KEY_PREFIX: uniquePrefix() })
    const socket = await connected(t)
    await server.stop()
    subscribe(socket)
    await until(() => t.app.subscriptionStats.subscriptions === 1)
    expect(t.app.faults.rateLimitStoreErrors).toBe(1)
  })

  it('starts and serves when Redis is unreachable at start, and limits once Redis answers', async () => {
    await server.stop()
    const t = await instance({ REDIS_URL: server.url, REDIS_KEY_PREFIX: uniquePrefix() })
    expect((await from(t, '10.8.2.1')).statusCode).toBe(200)
    expect(t.app.faults.rateLimitStoreErrors).toBe(1)
    await server.start()
    await until(async () => (await from(t, '10.8.2.2')).headers['x-ratelimit-limit'] === '3')
  })
})

/** A graphql-ws client on the app's WebSocket, connected (connection_ack received). */
async function connected(t: TestApp): Promise<Client> {
  const http = await t.app.listen({ host: '127.0.0.1', port: 0 })
  let acknowledged = false
  const client = createClient({
    url: `${http.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
    on: { connected: () => (acknowledged = true) },
  })
  clients.push(client)
  await until(() => acknowledged)
  return client
}

/** Sends one subscribe message; gathers what comes back. */
function subscribe(client: Client) {
  const received: unknown[] = []
  const errors: unknown[] = []
  client.subscribe(
    { query: 'subscription { commentAdded { id } }' },
    { next: (value) => received.push(value), error: (error) => errors.push(error), complete: () => undefined },
  )
  return { received, errors }
}
