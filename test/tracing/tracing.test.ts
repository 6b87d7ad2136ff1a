// Traces, received as a collector receives them: each test points the app at a local OTLP/HTTP
// receiver (test/helpers/otlp-receiver.ts) and reads what it was sent, after flushing the app's
// batch span processor. On both stores; Redis's commands and events when Redis answers.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DIST } from '../helpers/dist.js'
import { createFactories } from '../helpers/factories.js'
import { type OtlpReceiver, type ReceivedSpan, SPAN_KIND, startOtlpReceiver } from '../helpers/otlp-receiver.js'
import { redisUrl } from '../helpers/services.js'
import { disposeWsClients, gather, type Listening, listening, subscribed, wsClient } from '../helpers/subscription-clients.js'
import { freshSqliteFile, SECOND_STORE_RUN, TEST_STORE } from '../helpers/test-store.js'
import { until } from '../helpers/until.js'

const sharedRedis = await redisUrl()
const DB_SYSTEM = TEST_STORE === 'postgres' ? 'postgresql' : 'sqlite'

let receiver: OtlpReceiver
let running: Listening | undefined

beforeEach(async () => {
  receiver = await startOtlpReceiver()
})

afterEach(async () => {
  await disposeWsClients()
  await running?.t.close()
  running = undefined
  await receiver.close()
})

/** The app listening, sending its spans to the receiver in `encoding`. */
async function tracedApp(env: Record<string, string> = {}, encoding = 'http/json'): Promise<Listening> {
  running = await listening({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: encoding, ...env })
  return running
}

/** A traceparent of a caller's span, fresh: its trace id and span id. */
function callerSpan() {
  const traceId = randomBytes(16).toString('hex')
  const spanId = randomBytes(8).toString('hex')
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` }
}

/** Flushes the app's spans until the receiver holds one that matches. */
async function received(app: FastifyInstance, matches: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan> {
  await until(async () => {
    await app.tracing?.flush()
    return receiver.spans.some(matches)
  })
  return receiver.spans.find(matches) as ReceivedSpan
}

const inTrace = (traceId: string) => receiver.spans.filter((span) => span.traceId === traceId)

describe.each(['http/json', 'http/protobuf'])('a REST request, exported as %s', (encoding) => {
  it("continues the caller's traceparent in a server span, with its SQL statements as children", async () => {
    const { t, http } = await tracedApp({}, encoding)
    const caller = callerSpan()
    const response = await fetch(`${http}/api/v1/users/${t.alice.id}`, { headers: { traceparent: caller.traceparent } })
    expect(response.status).toBe(200)

    const server = await received(t.app, (span) => span.traceId === caller.traceId && span.kind === SPAN_KIND.server)
    expect(server).toMatchObject({
      name: 'GET /api/v1/users/:id',
      parentSpanId: caller.spanId,
      statusCode: 0,
      encoding: encoding === 'http/json' ? 'json' : 'protobuf',
      attributes: {
        'http.request.method': 'GET',
        'http.route': '/api/v1/users/:id',
        'url.path': `/api/v1/users/${t.alice.id}`,
        'http.response.status_code': 200,
        // What the answer's X-Request-Id and its log line carry.
        'threadline.request.id': response.headers.get('x-request-id'),
      },
      resource: { 'service.name': 'threadline' },
    })
    const statements = await until(async () => {
      await t.app.tracing?.flush()
      return inTrace(caller.traceId).some((span) => span.attributes['db.system.name'] === DB_SYSTEM)
    }).then(() => inTrace(caller.traceId).filter((span) => span.attributes['db.system.name'] === DB_SYSTEM))
    expect(statements.length).toBeGreaterThan(0)
    for (const statement of statements) {
      expect(statement).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: server.spanId })
      expect(statement.name).toMatch(/^SELECT /)
      // The statement with its placeholders, never the values.
      expect(statement.attributes['db.query.text']).toMatch(/\?|\$1/)
      expect(statement.attributes['db.query.text']).not.toContain(String(t.alice.email))
    }
  })
})

describe('traces', () => {
  it("leave a 4xx answer's span without an error, and mark a 5xx answer's as one", async () => {
    // An OpenID Connect issuer that cannot be reached: a JWT sent is answered 503.
    const { t, http } = await tracedApp({ OIDC_ISSUER: 'http://127.0.0.1:9', OIDC_AUDIENCE: 'threadline-api' })
    const notFound = callerSpan()
    expect((await fetch(`${http}/api/v1/users/999999`, { headers: { traceparent: notFound.traceparent } })).status).toBe(404)
    const server = await received(t.app, (span) => span.traceId === notFound.traceId && span.kind === SPAN_KIND.server)
    expect(server).toMatchObject({ statusCode: 0, attributes: { 'http.response.status_code': 404 } })

    const unavailable = callerSpan()
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl'
    const answer = await fetch(`${http}/api/v1/users`, { headers: { traceparent: unavailable.traceparent, authorization: `Bearer ${jwt}` } })
    expect(answer.status).toBe(503)
    const failed = await received(t.app, (span) => span.traceId === unavailable.traceId && span.kind === SPAN_KIND.server)
    expect(failed).toMatchObject({ statusCode: 2, attributes: { 'http.response.status_code': 503, 'error.type': '503' } })
  })

  it("keep the first 512 characters of what a client wrote: a 12,000-character user agent, a 1,000-character path, an operation's name", async () => {
    const { t, http } = await tracedApp()
    const caller = callerSpan()
    const agent = `Mozilla/5.0 ${'A'.repeat(12_000)}`
    const path = `/api/v1/${'p'.repeat(1000)}`
    // Answered 4xx (no such resource): the span is the request's all the same.
    expect((await fetch(`${http}${path}`, { headers: { traceparent: caller.traceparent, 'user-agent': agent } })).status).toBeLessThan(500)
    const server = await received(t.app, (span) => span.traceId === caller.traceId && span.kind === SPAN_KIND.server)

    const operation = callerSpan()
    const name = `Named${'N'.repeat(1000)}`
    const answer = await fetch(`${http}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: operation.traceparent },
      body: JSON.stringify({ query: `query ${name} { __typename }` }),
    })
    expect(await answer.json()).toEqual({ data: { __typename: 'Query' } })
    const execute = await received(t.app, (span) => span.traceId === operation.traceId && span.name === 'graphql.execute')

    for (const [kept, sent] of [
      [server.attributes['user_agent.original'], agent],
      [server.attributes['url.path'], path],
      [execute.attributes['graphql.operation.name'], name],
    ] as const) {
      expect(String(kept)).toHaveLength(512)
      expect(sent.startsWith(String(kept))).toBe(true)
    }
  })

  it('give a GraphQL request its parse, validate and execute spans, the SQL under execute', async () => {
    const { t, http } = await tracedApp()
    const caller = callerSpan()
    const response = await fetch(`${http}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: caller.traceparent },
      body: JSON.stringify({ query: 'query OneUser($id: ID!) { user(id: $id) { name } }', variables: { id: String(t.alice.id) } }),
    })
    expect(await response.json()).toEqual({ data: { user: { name: 'Alice' } } })

    const server = await received(t.app, (span) => span.traceId === caller.traceId && span.name === 'POST /graphql')
    const execute = await received(t.app, (span) => span.traceId === caller.traceId && span.name === 'graphql.execute')
    const stages = inTrace(caller.traceId).filter((span) => span.name.startsWith('graphql.'))
    expect(stages.map((span) => span.name).sort()).toEqual(['graphql.execute', 'graphql.parse', 'graphql.validate'])
    for (const stage of stages) expect(stage.parentSpanId).toBe(server.spanId)
    expect(execute.attributes).toMatchObject({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'OneUser' })
    const read = await received(t.app, (span) => span.traceId === caller.traceId && span.attributes['db.system.name'] === DB_SYSTEM)
    expect(read.parentSpanId).toBe(execute.spanId)
  })

  describe.each([
    ['in the process', {}],
    ['through Redis', { REDIS_URL: sharedRedis ?? '' }],
  ])('an event delivered %s', (_where, env: Record<string, string>) => {
    it.skipIf(env.REDIS_URL === '')('carries the trace of the write that published it to the subscriber', async () => {
      const { t, http, ws } = await tracedApp({ ...env, REDIS_KEY_PREFIX: `trace-${randomBytes(4).toString('hex')}:` })
      const post = await createFactories(t).post(t.alice)
      const { received: events } = gather(wsClient(ws, t.tokens.bob), 'subscription OnComment { commentAdded { content } }')
      await subscribed(t, 1)

      const caller = callerSpan()
      const write = await fetch(`${http}/api/v1/users/${t.alice.id}/posts/${post.id}/comments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.tokens.bob}`, 'content-type': 'application/json', traceparent: caller.traceparent },
        body: JSON.stringify({ content: 'Traced' }),
      })
      expect(write.status).toBe(201)
      await until(() => events.length === 1)

      const server = await received(t.app, (span) => span.traceId === caller.traceId && span.kind === SPAN_KIND.server)
      const publish = await received(t.app, (span) => span.traceId === caller.traceId && span.name === 'publish commentAdded')
      const delivery = await received(t.app, (span) => span.traceId === caller.traceId && span.name === 'process commentAdded')
      expect(publish).toMatchObject({ kind: SPAN_KIND.producer, parentSpanId: server.spanId })
      expect(delivery).toMatchObject({ kind: SPAN_KIND.consumer, parentSpanId: publish.spanId })
      const execute = await received(t.app, (span) => span.traceId === caller.traceId && span.name === 'graphql.execute')
      expect(execute).toMatchObject({ parentSpanId: delivery.spanId, attributes: { 'graphql.operation.type': 'subscription' } })

      // The delivery links to the subscription's span, which belongs to its WebSocket's (ended when the socket closes).
      const subscription = await received(t.app, (span) => span.name === 'subscription OnComment')
      expect(delivery.links).toEqual([{ traceId: subscription.traceId, spanId: subscription.spanId }])
      await disposeWsClients()
      const connection = await received(t.app, (span) => span.name === 'GET /graphql' && span.attributes['http.response.status_code'] === 101)
      expect(subscription.parentSpanId).toBe(connection.spanId)

      if (env.REDIS_URL !== undefined) {
        // PUBLISH went to Redis inside the publish's span; the rate limit's commands inside the request's.
        const published = await received(t.app, (span) => span.traceId === caller.traceId && span.name === 'PUBLISH')
        expect(published).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: publish.spanId, attributes: { 'db.system.name': 'redis' } })
        const counted = inTrace(caller.traceId).filter((span) => span.attributes['db.system.name'] === 'redis' && span.parentSpanId === server.spanId)
        expect(counted.length).toBeGreaterThan(0)
      }
    })
  })
})

/** Fastify's hooks of one kind on the app (its own symbol holds them). */
function hookCount(app: FastifyInstance, kind: 'onRequest' | 'preValidation'): number {
  const symbol = Object.getOwnPropertySymbols(app).find((s) => s.description === 'fastify.hooks') as symbol
  return ((app as unknown as Record<symbol, Record<string, unknown[]>>)[symbol]?.[kind] ?? []).length
}

describe('without an OTLP endpoint', () => {
  it('sends nothing and adds no hook', async () => {
    const off = await listening({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' })
    const on = await tracedApp()
    try {
      expect(off.t.app.tracing).toBeUndefined()
      expect(hookCount(on.t.app, 'onRequest')).toBe(hookCount(off.t.app, 'onRequest') + 1)
      expect(hookCount(on.t.app, 'preValidation')).toBe(hookCount(off.t.app, 'preValidation') + 1)
      const caller = callerSpan()
      expect((await fetch(`${off.http}/api/v1/users/${off.t.alice.id}`, { headers: { traceparent: caller.traceparent } })).status).toBe(200)
    } finally {
      await off.t.close()
    }
    // Closing flushes what a tracing app holds: the one that was off had nothing.
    expect(receiver.requests).toBe(0)
  })

  // The API alone may be there: prom-client loads it (for its exemplars).
  it.skipIf(SECOND_STORE_RUN)("loads none of OpenTelemetry's SDK (checked in a fresh process on the built app)", () => {
    const script = `
      import { createRequire } from 'node:module'
      import { buildApp } from './${DIST}/app.js'
      import { loadConfig } from './${DIST}/config.js'
      const app = await buildApp(loadConfig({ ...JSON.parse(process.argv[1]), SEED_DEMO_DATA: 'false', LOG_LEVEL: 'silent' }))
      await app.ready()
      const loaded = Object.keys(createRequire(import.meta.url).cache)
      console.log(JSON.stringify(loaded.some((path) => path.includes('/node_modules/@opentelemetry/') && !path.includes('/@opentelemetry/api/'))))
      await app.close()
    `
    const file = freshSqliteFile()
    const loaded = (env: Record<string, string>) =>
      JSON.parse(
        execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify({ DATABASE_URL: file.url, ...env })], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .at(-1) ?? 'null',
      ) as boolean
    try {
      expect(loaded({})).toBe(false)
      expect(loaded({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url })).toBe(true)
    } finally {
      void file.drop()
    }
  })
})
