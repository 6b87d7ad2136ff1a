// Fan-out is bounded: a subscription's selection has a cost ceiling, a caller's subscriptions share
// one budget, a caller's deliveries are metered (RATE_LIMITED with retryAfter, then delivered
// again), one event's deliveries together have a ceiling, and the answer refusing an event stream
// for the caller's open connections carries Retry-After and counters that agree with it.
// Runs once, on SQLite: the metering of deliveries, counted in memory; what is delivered is comments.graphql.test.ts's.
import { type Client, createClient } from 'graphql-ws'
import { afterEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { until } from '../helpers/until.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map(async (cleanup) => cleanup()))
})

async function listening(env: Record<string, string> = {}) {
  const t = await buildTestApp(env)
  cleanups.push(() => t.close())
  const http = await t.app.listen({ host: '127.0.0.1', port: 0 })
  const make = createFactories(t)
  const post = await make.post(t.alice, { title: 'p' })
  const comment = async (content: string) => {
    await make.comment(post, t.alice, { content })
  }
  return { t, http, ws: `${http.replace('http', 'ws')}/graphql`, comment }
}

function wsClient(url: string, token?: string): Client {
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
    onNonLazyError: () => undefined,
    connectionParams: token === undefined ? undefined : { authorization: `Bearer ${token}` },
  })
  cleanups.push(() => client.dispose())
  return client
}

interface Result {
  data?: { commentAdded?: { content: string } } | null
  errors?: { message: string; extensions?: { code?: string; limit?: string; retryAfter?: number; value?: number; max?: number } }[]
}

function gather(client: Client, query: string) {
  const received: Result[] = []
  // A subscription refused before it starts arrives as the protocol's `error` message.
  const refused = (errors: unknown) => received.push({ errors: Array.isArray(errors) ? (errors as Result['errors']) : [{ message: String(errors) }] })
  const dispose = client.subscribe<Result['data']>({ query }, { next: (value) => received.push(value as Result), error: refused, complete: () => undefined })
  return { received, dispose }
}

const subscribed = (t: TestApp, count: number) => until(() => t.app.subscriptionStats.subscriptions === count)
const contents = (received: Result[]) => received.flatMap((result) => (result.data?.commentAdded === undefined ? [] : [result.data.commentAdded.content]))
const codes = (received: Result[]) => received.flatMap((result) => (result.errors ?? []).map((error) => error.extensions?.code))

/** Over the default GRAPHQL_SUBSCRIPTION_MAX_COST (1,000); well inside GRAPHQL_MAX_COST (100,000). */
const GREEDY = 'subscription { commentAdded { post { author { posts(limit: 45) { comments(limit: 45) { author { posts(limit: 45) { content } } } } } } } }'
const PLAIN = 'subscription { commentAdded { content } }'

describe('subscription fan-out', () => {
  it('refuses a subscription whose selection costs more than GRAPHQL_SUBSCRIPTION_MAX_COST, over WebSocket and SSE', async () => {
    const s = await listening()
    const greedy = gather(wsClient(s.ws), GREEDY)
    await until(() => greedy.received.length > 0)
    expect(greedy.received[0]?.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', limit: 'subscription-cost', max: 1000 })
    expect(greedy.received[0]?.errors?.[0]?.extensions?.value).toBeGreaterThan(1000)

    const sse = await fetch(`${s.http}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: GREEDY }),
    })
    expect(sse.status).toBe(400)
    expect(((await sse.json()) as Result).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', limit: 'subscription-cost' })
    await subscribed(s.t, 0)
  })

  it("makes a caller's subscriptions share one budget: past it a new one is refused, and one ended makes room", async () => {
    const s = await listening({ GRAPHQL_SUBSCRIPTION_CALLER_COST: '10', GRAPHQL_MAX_SUBSCRIPTIONS_PER_CONNECTION: '100' })
    const client = wsClient(s.ws, s.t.tokens.bob)
    const open: ReturnType<typeof gather>[] = []
    let refused: Result | undefined
    for (let i = 0; i < 11 && refused === undefined; i++) {
      const subscription = gather(client, PLAIN)
      await until(() => subscription.received.length > 0 || s.t.app.subscriptionStats.subscriptions === open.length + 1)
      if (subscription.received.length > 0) refused = subscription.received[0]
      else open.push(subscription)
    }
    expect(open.length).toBeGreaterThan(0)
    expect(refused?.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', limit: 'subscription-budget', max: 10 })
    expect(refused?.errors?.[0]?.message).toMatch(/may cost at most 10 together/)
    // Another caller has a budget of its own.
    const alice = gather(wsClient(s.ws, s.t.tokens.alice), PLAIN)
    await subscribed(s.t, open.length + 1)

    open[0]?.dispose()
    await subscribed(s.t, open.length)
    const again = gather(client, PLAIN)
    await subscribed(s.t, open.length + 1)
    await s.comment('after making room')
    await until(() => contents(again.received).length === 1 && contents(alice.received).length === 1)
  })

  it("meters a caller's deliveries: past the allowance each subscription is told once (RATE_LIMITED, retryAfter), skips events, then receives again", async () => {
    const s = await listening({ GRAPHQL_SUBSCRIPTION_DELIVERY_COST: '10', GRAPHQL_SUBSCRIPTION_DELIVERY_WINDOW_S: '2' })
    const metered = gather(wsClient(s.ws, s.t.tokens.bob), PLAIN)
    await subscribed(s.t, 1)
    for (let i = 1; i <= 12; i++) await s.comment(`comment ${i}`)
    await until(() => codes(metered.received).length === 1)
    const told = metered.received.find((result) => result.errors !== undefined)
    expect(told?.errors?.[0]?.extensions?.retryAfter).toBeGreaterThanOrEqual(1)
    expect(told?.errors?.[0]?.extensions?.retryAfter).toBeLessThanOrEqual(2)

    // The window turns (the app's clock moves past it): delivered again. A subscription's events
    // arrive in order, so once this one has, every comment before it was delivered or skipped.
    s.t.clock.advance(2000)
    await s.comment('after the window')
    await until(() => contents(metered.received).includes('after the window'))
    // { content } costs a few units: some deliveries fit in the allowance of 10, not twelve; the
    // rest were skipped, told once.
    const delivered = contents(metered.received).slice(0, -1)
    expect(delivered.length).toBeGreaterThan(0)
    expect(delivered.length).toBeLessThan(12)
    expect(delivered).toEqual(Array.from({ length: delivered.length }, (_, i) => `comment ${i + 1}`))
    expect(metered.received.slice(delivered.length)).toEqual([told, { data: { commentAdded: { content: 'after the window' } } }])
  })

  it("bounds one event's deliveries together: the subscriptions past the ceiling are told it was skipped and stay open", async () => {
    const s = await listening({ GRAPHQL_EVENT_MAX_DELIVERY_COST: '2', GRAPHQL_SUBSCRIPTION_DELIVERY_COST: '1000000' })
    const subscribers = [s.t.tokens.alice, s.t.tokens.bob, s.t.tokens.admin].map((token) => gather(wsClient(s.ws, token), PLAIN))
    await subscribed(s.t, 3)
    await s.comment('one event')
    await until(() => subscribers.every((subscriber) => subscriber.received.length === 1))
    const deliveredTo = subscribers.filter((subscriber) => contents(subscriber.received).length === 1).length
    expect(deliveredTo).toBeGreaterThan(0)
    expect(deliveredTo).toBeLessThan(3)
    const skipped = subscribers.filter((subscriber) => codes(subscriber.received).includes('SERVICE_UNAVAILABLE'))
    expect(skipped.length).toBe(3 - deliveredTo)
    expect(skipped[0]?.received[0]?.errors?.[0]?.message).toMatch(/not delivered/)
    expect(s.t.app.subscriptionStats.subscriptions).toBe(3)
  })

  it('answers the event stream past GRAPHQL_MAX_CONNECTIONS_PER_CALLER with 429, Retry-After, and counters that say no connection is left', async () => {
    const s = await listening({ GRAPHQL_MAX_CONNECTIONS_PER_CALLER: '2' })
    const open = async () => {
      const controller = new AbortController()
      cleanups.push(() => controller.abort())
      return fetch(`${s.http}/graphql/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: PLAIN }),
        signal: controller.signal,
      })
    }
    expect((await open()).status).toBe(200)
    expect((await open()).status).toBe(200)
    const refused = await open()
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0')
    expect(refused.headers.get('x-ratelimit-limit')).toBe('2')
    const body = (await refused.json()) as { errors?: { extensions?: { code?: string } }[] }
    expect(body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED')
  })
})
