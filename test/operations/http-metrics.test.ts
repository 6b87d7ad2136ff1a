// The request metrics are counted in the app's own records and read by prom-client only when
// scraped: what GET /metrics says must stay what prom-client's Counter and Histogram
// said when every request called inc and observe.
import type { FastifyInstance, onResponseHookHandler } from 'fastify'
import { Counter, Histogram, Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMetrics } from '../../src/operations/metrics.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

const REQUESTS = 'threadline_http_requests_total'
const LATENCY = 'threadline_http_request_duration_seconds'

interface Answered {
  route: string | undefined
  method: string
  status: number
  ms: number
}

/** The metrics of createMetrics, and its onResponse hook called as Fastify would. */
function instrumented() {
  const sources = {
    subscriptionStats: () => ({ connections: 0, subscriptions: 0, droppedSlowConsumers: 0 }),
    faults: () => ({ rateLimitStoreErrors: 0, eventPublishFailures: 0, eventInterruptions: 0 }),
    droppedLogLines: () => 0,
    database: {},
  } as unknown as Parameters<typeof createMetrics>[0]
  const metrics = createMetrics(sources)
  let hook: onResponseHookHandler | undefined
  metrics.observe({ addHook: (name: string, handler: onResponseHookHandler) => void (name === 'onResponse' && (hook = handler)) } as unknown as FastifyInstance)
  if (hook === undefined) throw new Error('no onResponse hook')
  const onResponse = hook
  return {
    metrics,
    answer({ route, method, status, ms }: Answered) {
      let done = 0
      const returned: unknown = onResponse.call(
        {} as FastifyInstance,
        { routeOptions: { url: route, config: { url: route } }, method } as never,
        { statusCode: status, elapsedTime: ms } as never,
        () => void done++,
      )
      expect(returned).toBeUndefined()
      expect(done).toBe(1)
    },
  }
}

/** What the hook did before the app kept its own records: prom-client's inc and observe on each request. */
function reference() {
  const registry = new Registry()
  const requests = new Counter({
    name: REQUESTS,
    help: 'HTTP requests answered, by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  })
  const latency = new Histogram({
    name: LATENCY,
    help: 'Time from the request arriving to its answer being written, by route template and method.',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })
  return {
    registry,
    answer({ route: template, method, status, ms }: Answered) {
      const route = template ?? 'unmatched'
      requests.inc({ route, method, status })
      latency.observe({ route, method }, ms / 1000)
    },
  }
}

/** A deterministic mix: interleaved series, latencies on bucket bounds, between them, above the last one, zero. */
function answers(count: number, seed: number): Answered[] {
  let state = seed
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31
    return state % n
  }
  const routes = ['/api/v1/users/:id', '/api/v1/users', undefined, '/api/v1/users/:userId/posts', '/graphql', '/we"ird\\route\n']
  const methods = ['GET', 'POST', 'PATCH', 'DELETE', 'HEAD']
  const statuses = [200, 201, 304, 400, 404, 429, 500]
  const latencies = [0, 0.3, 1, 2.5, 3.7, 10, 49.99, 100, 250, 1000, 2500, 9999.9, 10000, 10000.5, 123456]
  return Array.from({ length: count }, () => ({
    route: routes[next(routes.length)],
    method: methods[next(methods.length)]!,
    status: statuses[next(statuses.length)]!,
    ms: next(4) === 0 ? latencies[next(latencies.length)]! : next(1_000_000) / 997,
  }))
}

describe('request metrics, counted per series', () => {
  it('read exactly as prom-client Counter and Histogram fed by inc and observe: text, JSON, order, after a reset', async () => {
    const ours = instrumented()
    const theirs = reference()
    const compare = async () => {
      for (const name of [REQUESTS, LATENCY]) {
        expect(await (await ours.metrics.registry()).getSingleMetricAsString(name)).toBe(await theirs.registry.getSingleMetricAsString(name))
      }
      const json = async (registry: Registry) => (await registry.getMetricsAsJSON()).filter((metric) => metric.name === REQUESTS || metric.name === LATENCY)
      expect(await json(await ours.metrics.registry())).toEqual(await json(theirs.registry))
    }
    await compare()
    for (const answered of answers(3000, 7)) {
      ours.answer(answered)
      theirs.answer(answered)
    }
    await compare()
    // Scraped twice in a row: reading changes nothing.
    await compare()
    for (const answered of answers(500, 11)) {
      ours.answer(answered)
      theirs.answer(answered)
    }
    await compare()

    ;(await ours.metrics.registry()).resetMetrics()
    theirs.registry.resetMetrics()
    await compare()
    for (const answered of answers(700, 13)) {
      ours.answer(answered)
      theirs.answer(answered)
    }
    await compare()
  })

  it('count rate-limit refusals and events as prom-client Counters fed by inc would, before and after the registry is made', async () => {
    const { metrics } = instrumented()
    const registry = new Registry()
    const rejections = new Counter({
      name: 'threadline_rate_limit_rejections_total',
      help: 'Requests and subscriptions refused by the rate limit.',
      registers: [registry],
    })
    const events = new Counter({
      name: 'threadline_events_total',
      help: 'Events this instance handed to the events port (published; those that failed are in threadline_faults), and delivered to its subscribers (once per listener).',
      labelNames: ['event', 'outcome'] as const,
      registers: [registry],
    })
    const count = (times: number) => {
      for (let i = 0; i < times; i++) {
        const labels = { event: i % 3 === 0 ? 'commentAdded' : 'callerChanged', outcome: i % 2 === 0 ? 'published' : 'delivered' }
        metrics.events.inc(labels)
        events.inc(labels)
        if (i % 5 === 0) {
          metrics.rateLimitRejected()
          rejections.inc()
        }
      }
    }
    const compare = async () => {
      const ours = await metrics.registry()
      for (const name of ['threadline_rate_limit_rejections_total', 'threadline_events_total']) {
        expect(await ours.getSingleMetricAsString(name)).toBe(await registry.getSingleMetricAsString(name))
      }
    }
    count(7)
    await compare()
    count(20)
    await compare()
  })

  it('are written where prom-client wrote them, first among the app metrics', async () => {
    const { metrics } = instrumented()
    const registry = await metrics.registry()
    expect(registry.getMetricsAsArray().map((metric) => metric.name)).toEqual([
      REQUESTS,
      LATENCY,
      'threadline_rate_limit_rejections_total',
      'threadline_events_total',
      'threadline_subscription_connections',
      'threadline_subscriptions_active',
      'threadline_subscribers_dropped',
      'threadline_log_lines_dropped',
      'threadline_faults',
    ])
    const text = await registry.metrics()
    expect(text).toContain(`# HELP ${REQUESTS} HTTP requests answered, by route template, method and status.\n# TYPE ${REQUESTS} counter\n`)
    expect(text).toContain(
      `# HELP ${LATENCY} Time from the request arriving to its answer being written, by route template and method.\n# TYPE ${LATENCY} histogram\n`,
    )
  })
})

/** The samples of a metric family in Prometheus text: labels as written, and the value. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .map((line) => {
      const close = line.lastIndexOf('} ')
      const labels = Object.fromEntries([...line.slice(name.length + 1, close).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]))
      return { labels, value: Number(line.slice(close + 2)) }
    })
}

describe('request metrics through the app', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it('count each request once in its series, with a histogram that agrees with the counter', async () => {
    for (let i = 0; i < 3; i++) await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}` })
    await t.request({ method: 'GET', url: '/api/v1/users/424242' })
    await t.request({ method: 'GET', url: '/api/v1/users/424243' })
    await t.request({ method: 'GET', url: '/api/v1/users?limit=1' })
    await t.request({ method: 'DELETE', url: `/api/v1/users/${t.bob.id}` })
    await t.request({ method: 'GET', url: '/no/such/path' })
    await t.request({ method: 'POST', url: '/no/such/path' })
    const text = (await t.request({ method: 'GET', url: '/metrics' })).body

    const counted = samples(text, REQUESTS)
    const count = (route: string, method: string, status: string) =>
      counted.find((s) => s.labels.route === route && s.labels.method === method && s.labels.status === status)?.value
    expect(count('/api/v1/users/:id', 'GET', '200')).toBe(3)
    expect(count('/api/v1/users/:id', 'GET', '404')).toBe(2)
    expect(count('/api/v1/users', 'GET', '200')).toBe(1)
    expect(count('/api/v1/users/:id', 'DELETE', '401')).toBe(1)
    expect(count('unmatched', 'GET', '404')).toBe(1)
    expect(count('unmatched', 'POST', '404')).toBe(1)
    expect(counted.every((s) => Object.keys(s.labels).join() === 'route,method,status')).toBe(true)
    expect(text).not.toContain('/no/such/path')

    const buckets = samples(text, `${LATENCY}_bucket`)
    const sums = samples(text, `${LATENCY}_sum`)
    const counts = samples(text, `${LATENCY}_count`)
    const pairs = new Set(counted.map((s) => `${s.labels.route} ${s.labels.method}`))
    expect(counts.map((s) => `${s.labels.route} ${s.labels.method}`).sort()).toEqual([...pairs].sort())
    for (const pair of pairs) {
      const [route, method] = pair.split(' ')
      const of = (s: { labels: Record<string, string> }) => s.labels.route === route && s.labels.method === method
      const total = counted.filter(of).reduce((sum, s) => sum + s.value, 0)
      const series = buckets.filter(of)
      expect(series.map((s) => s.labels.le)).toEqual(['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'])
      expect(Object.keys(series[0]!.labels)).toEqual(['le', 'route', 'method'])
      for (let i = 1; i < series.length; i++) expect(series[i]!.value).toBeGreaterThanOrEqual(series[i - 1]!.value)
      expect(counts.find(of)?.value).toBe(total)
      expect(series.at(-1)?.value).toBe(total)
      expect(sums.find(of)?.value).toBeGreaterThan(0)
    }

    // The scrape itself is counted once it is answered, for the next one.
    const again = (await t.request({ method: 'GET', url: '/metrics' })).body
    expect(samples(again, REQUESTS).find((s) => s.labels.route === '/metrics')?.value).toBe(1)
    expect(samples(again, `${LATENCY}_count`).find((s) => s.labels.route === '/metrics')?.value).toBe(1)
  })
})
