// Operating the service: /health, /ready and /metrics, and how they are logged and limited.
// Runs once, on SQLite: probes, counters and their limits; /ready's check of PostgreSQL is faults/postgres-outage.test.ts's.
import { createServer, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import WebSocket from 'ws'
import { freePort } from '../helpers/private-redis.js'
import { TEST_STORE } from '../helpers/test-store.js'
import { until } from '../helpers/until.js'

/** The value of a sample in Prometheus text, by its name and labels as written; undefined when absent. */
function sample(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('health and readiness', () => {
  let t: TestApp
  const lines: string[] = []
  beforeAll(async () => {
    t = await buildTestApp({ LOG_LEVEL: 'info', RATE_LIMIT_MAX: '3' }, { logStream: { write: (line) => void lines.push(line) } })
  })
  afterAll(() => t.close())

  it('answers /health and /ready outside the rate limit, never cached, and logs them only at debug', async () => {
    for (let i = 0; i < 6; i++) {
      const health = await t.request({ method: 'GET', url: '/health' })
      expect(health.statusCode).toBe(200)
      expect(health.json()).toEqual({ status: 'ok', loop: { delayMs: expect.any(Number) as number, shedding: false } })
      expect(health.headers['cache-control']).toBe('no-store')
      expect(health.headers['x-ratelimit-remaining']).toBeUndefined()
      const ready = await t.request({ method: 'GET', url: '/ready' })
      expect(ready.statusCode).toBe(200)
      expect(ready.json()).toEqual({ status: 'ok', checks: { database: { status: 'up', ms: expect.any(Number) as number } } })
    }
    // The allowance of 3 is untouched by the twelve probes.
    const api = await t.request({ method: 'GET', url: '/api/v1/users/1' })
    expect(api.headers['x-ratelimit-remaining']).toBe('2')
    const routes = lines.map((line) => (JSON.parse(line) as { route?: string }).route)
    expect(routes).toContain('/api/v1/users/:id')
    expect(routes).not.toContain('/health')
    expect(routes).not.toContain('/ready')
  })
})

describe('readiness when the database does not answer', () => {
  let blackhole: Server
  const held: Socket[] = []
  beforeAll(async () => {
    // Accepts connections and never says a word: PostgreSQL hanging.
    blackhole = createServer((socket) => void held.push(socket))
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve))
  })
  afterAll(async () => {
    for (const socket of held) socket.destroy()
    await new Promise((resolve) => blackhole.close(resolve))
  })

  it.each([
    ['refuses connections', async () => `postgres://nobody@127.0.0.1:${await freePort()}/threadline`],
    ['hangs', async () => `postgres://nobody@127.0.0.1:${(blackhole.address() as { port: number }).port}/threadline`],
  ])('answers /ready 503 with Retry-After when the database %s, and /health 200', async (_how, url) => {
    const app = await buildApp(loadConfig({ HTTP_SHED_LOOP_DELAY_MS: '0', DATABASE_URL: await url(), LOG_LEVEL: 'silent', READY_TIMEOUT_MS: '300' }))
    try {
      const started = performance.now()
      const ready = await app.inject({ method: 'GET', url: '/ready' })
      expect(performance.now() - started).toBeLessThan(3000)
      expect(ready.statusCode).toBe(503)
      expect(ready.headers['retry-after']).toBe('5')
      expect(ready.json()).toMatchObject({ status: 'unavailable', checks: { database: { status: 'down' } } })
      expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200)
    } finally {
      for (const socket of held) socket.destroy()
      await app.close()
    }
  })

  it('reports a Redis that is away as degraded, still ready: Redis never takes instances out', async () => {
    const t = await buildTestApp({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` })
    try {
      const ready = await t.request({ method: 'GET', url: '/ready' })
      expect(ready.statusCode).toBe(200)
      expect(ready.json()).toMatchObject({ status: 'degraded', checks: { database: { status: 'up' }, redis: { status: 'down' } } })
    } finally {
      await t.close()
    }
  })
})

describe('metrics', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ RATE_LIMIT_MAX: '4' })
  })
  afterAll(() => t.close())

  it('counts requests by route template, method and status, never by the URL a caller made up', async () => {
    await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}` })
    await t.request({ method: 'GET', url: '/api/v1/users/424242' })
    await t.request({ method: 'GET', url: '/no/such/path/1234' })
    const metrics = await t.request({ method: 'GET', url: '/metrics' })
    expect(metrics.statusCode).toBe(200)
    expect(metrics.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(metrics.headers['x-ratelimit-remaining']).toBeUndefined()
    const text = metrics.body
    expect(sample(text, 'threadline_http_requests_total{route="/api/v1/users/:id",method="GET",status="200"}')).toBe(1)
    expect(sample(text, 'threadline_http_requests_total{route="/api/v1/users/:id",method="GET",status="404"}')).toBe(1)
    expect(sample(text, 'threadline_http_requests_total{route="unmatched",method="GET",status="404"}')).toBe(1)
    expect(text).not.toContain('/no/such/path')
    expect(sample(text, 'threadline_http_request_duration_seconds_count{route="/api/v1/users/:id",method="GET"}')).toBe(2)
    // The process, from prom-client's default collectors.
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0)
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m)
    expect(sample(text, 'threadline_subscription_connections')).toBe(0)
    expect(sample(text, 'threadline_faults{fault="event_publish_failure"}')).toBe(0)
    if (TEST_STORE === 'postgres') {
      expect(sample(text, 'threadline_db_pool_max_connections')).toBe(10)
      expect(sample(text, 'threadline_db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1)
    } else {
      expect(text).not.toContain('threadline_db_pool')
    }
  })

  it('counts rate-limit refusals, and events published and delivered', async () => {
    // RATE_LIMIT_MAX=4 for anonymous callers: the fifth and sixth are refused.
    for (let i = 0; i < 6; i++) await t.request({ method: 'GET', url: '/api/v1/users?limit=1' })
    const post = (
      await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts`, token: t.tokens.alice, json: { title: 'Counted', content: '.' } })
    ).json().data.id
    await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts/${post}/comments`, token: t.tokens.bob, json: { content: 'one' } })
    const text = (await t.request({ method: 'GET', url: '/metrics' })).body
    expect(sample(text, 'threadline_rate_limit_rejections_total')).toBeGreaterThanOrEqual(2)
    expect(sample(text, 'threadline_events_total{event="commentAdded",outcome="published"}')).toBe(1)
  })
})

describe('subscription metrics', () => {
  it('counts subscription connections, active subscriptions and deliveries', async () => {
    // An app of its own: the other tests spend the small anonymous allowance the upgrade needs.
    const t = await buildTestApp()
    try {
      const address = await t.app.listen({ host: '127.0.0.1', port: 0 })
      const socket = new WebSocket(`${address.replace('http', 'ws')}/graphql`, 'graphql-transport-ws')
      const received: unknown[] = []
      socket.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString()) as { type: string }
        if (message.type === 'connection_ack')
          socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { commentAdded { content } }' } }))
        if (message.type === 'next') received.push(message)
      })
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init' })))
      await until(() => t.app.subscriptionStats.subscriptions === 1)
      const scrape = async () => (await t.request({ method: 'GET', url: '/metrics' })).body
      expect(sample(await scrape(), 'threadline_subscription_connections')).toBe(1)
      expect(sample(await scrape(), 'threadline_subscriptions_active')).toBe(1)
      // An event stream counts as a connection too.
      const stream = new AbortController()
      const sse = await fetch(`${address}/graphql/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: 'subscription { commentAdded { id } }' }),
        signal: stream.signal,
      })
      expect(sse.status).toBe(200)
      await until(() => t.app.subscriptionStats.subscriptions === 2)
      expect(sample(await scrape(), 'threadline_subscription_connections')).toBe(2)
      stream.abort()
      await until(() => t.app.subscriptionStats.connections === 1)
      const post = (
        await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts`, token: t.tokens.alice, json: { title: 'Heard', content: '.' } })
      ).json().data.id
      await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts/${post}/comments`, token: t.tokens.bob, json: { content: 'two' } })
      await until(() => received.length === 1)
      expect(sample(await scrape(), 'threadline_events_total{event="commentAdded",outcome="delivered"}')).toBe(1)
      socket.close()
      await until(() => t.app.subscriptionStats.connections === 0)
      expect(sample(await scrape(), 'threadline_subscription_connections')).toBe(0)
    } finally {
      await t.close()
    }
  })
})

describe('metrics behind a token', () => {
  it('asks for METRICS_TOKEN as a bearer token, which names no user', async () => {
    const t = await buildTestApp({ METRICS_TOKEN: 'scrape-me-0123456789abcdef' })
    try {
      for (const authorization of [undefined, 'Bearer wrong', `Bearer ${t.tokens.admin}`]) {
        const refused = await t.request({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } })
        expect(refused.statusCode, authorization).toBe(401)
        expect(refused.json().error.code).toBe('UNAUTHENTICATED')
        expect(refused.headers['www-authenticate']).toMatch(/^Bearer /)
      }
      const allowed = await t.request({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-me-0123456789abcdef' } })
      expect(allowed.statusCode).toBe(200)
      expect(allowed.body).toContain('threadline_http_requests_total')
    } finally {
      await t.close()
    }
  })

  it('serves no /metrics with METRICS=false', async () => {
    const t = await buildTestApp({ METRICS: 'false' })
    try {
      expect((await t.request({ method: 'GET', url: '/metrics' })).statusCode).toBe(404)
    } finally {
      await t.close()
    }
  })
})
