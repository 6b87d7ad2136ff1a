// GET /metrics in the Prometheus text format (prom-client), one registry per app: requests by
// route template, method and status, their latency, rate-limit refusals, subscription connections
// and subscriptions, events published and delivered, the PostgreSQL pool, the failures the service
// rode out, and the process (CPU, memory, event-loop lag, GC). With METRICS_TOKEN set, it asks for
// that bearer token. prom-client (and @opentelemetry/api, which it loads) is loaded by the first
// scrape: until then everything is counted in the app's own records, which the registry reads.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Aggregator, Metric, Registry } from 'prom-client'
import type { Database } from '../db/create-database.js'
import { AppError } from '../errors.js'
import type { Events } from '../events/events.js'
import type { SubscriptionStats } from '../graphql/subscriptions/subscription-server.js'
import { routeConfigOf } from '../core/route-config-read.js'

export const METRICS_PATH = '/metrics'

/** The counters other parts of the app move. */
export interface Metrics {
  /** The app's registry, made (and prom-client loaded) on the first call. */
  registry(): Promise<Registry>
  rateLimitRejected: () => void
}

/** A counter by label values, as the events port counts publishes and deliveries. */
export interface LabelledCounter<L extends string> {
  inc(labels: Record<L, string>): void
}

export interface MetricsSources {
  subscriptionStats(): SubscriptionStats
  faults(): { rateLimitStoreErrors: number; eventPublishFailures: number; eventInterruptions: number }
  /** Log lines dropped since the process started, stdout not being read as fast as they came. */
  droppedLogLines(): number
  database: Database
}

/**
 * Node's process metrics (CPU, memory, event-loop lag, GC), collected once per process: each call
 * of collectDefaultMetrics starts an event-loop monitor and a GC observer of its own, which nothing
 * stops, and tests build many apps in one process. Each app's registry is merged with it when
 * scraped.
 */
let processRegistry: Promise<Registry> | undefined
function processMetrics(): Promise<Registry> {
  processRegistry ??= import('prom-client').then(({ collectDefaultMetrics, Registry }) => {
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })
    return registry
  })
  return processRegistry
}

/** A route label for requests no route matched: their URLs are the caller's to invent, so they are never a label. */
const UNMATCHED = 'unmatched'

export function createMetrics(sources: MetricsSources): Metrics & { events: LabelledCounter<'event' | 'outcome'>; observe(app: FastifyInstance): void } {
  const http = httpSeries()
  const rateLimited = counterSeries<never>('threadline_rate_limit_rejections_total', 'Requests and subscriptions refused by the rate limit.', [])
  const events = counterSeries<'event' | 'outcome'>(
    'threadline_events_total',
    'Events this instance handed to the events port (published; those that failed are in threadline_faults), and delivered to its subscribers (once per listener).',
    ['event', 'outcome'],
  )
  let registry: Promise<Registry> | undefined
  return {
    registry: () => (registry ??= scrapedRegistry(sources, [...http.metrics, rateLimited, events])),
    events,
    rateLimitRejected: () => rateLimited.inc({}),
    observe(app) {
      // prom-client's inc and observe (a label object hashed, its names sorted, on each
      // call) in an async hook were 10% of GET one user's throughput. A callback hook counting into
      // the series' own records costs a few map lookups; prom-client reads them when scraped.
      app.addHook('onResponse', (request, reply, done) => {
        http.record(routeConfigOf(request).url ?? UNMATCHED, request.method, reply.statusCode, reply.elapsedTime / 1000)
        done()
      })
    },
  }
}

/** The registry of one app: the records counted so far, in the order prom-client wrote them, then the gauges read when scraped. */
async function scrapedRegistry(sources: MetricsSources, counted: readonly ScrapedMetric[]): Promise<Registry> {
  const { Gauge, Registry } = await import('prom-client')
  const registry = new Registry()
  // The registry's type names prom-client's classes, but it only reads name, type and get(), and calls reset().
  for (const metric of counted) registry.registerMetric(metric as unknown as Metric)
  new Gauge({
    name: 'threadline_subscription_connections',
    help: 'Open WebSockets and event streams.',
    registers: [registry],
    collect() {
      this.set(sources.subscriptionStats().connections)
    },
  })
  new Gauge({
    name: 'threadline_subscriptions_active',
    help: 'Subscriptions receiving events.',
    registers: [registry],
    collect() {
      this.set(sources.subscriptionStats().subscriptions)
    },
  })
  new Gauge({
    name: 'threadline_subscribers_dropped',
    help: 'Subscribers dropped for falling too far behind.',
    registers: [registry],
    collect() {
      this.set(sources.subscriptionStats().droppedSlowConsumers)
    },
  })
  new Gauge({
    name: 'threadline_log_lines_dropped',
    help: 'Log lines dropped since the process started, stdout not being read as fast as they came (each drop is also told in a warn line).',
    registers: [registry],
    collect() {
      this.set(sources.droppedLogLines())
    },
  })
  new Gauge({
    name: 'threadline_faults',
    help: 'Failures the service rode out instead of failing requests: rate-limit store errors, events that could not be published, interruptions of delivery.',
    labelNames: ['fault'] as const,
    registers: [registry],
    collect() {
      const faults = sources.faults()
      this.set({ fault: 'rate_limit_store_error' }, faults.rateLimitStoreErrors)
      this.set({ fault: 'event_publish_failure' }, faults.eventPublishFailures)
      this.set({ fault: 'event_interruption' }, faults.eventInterruptions)
    },
  })
  const pool = sources.database.poolStats
  if (pool !== undefined) {
    new Gauge({
      name: 'threadline_db_pool_connections',
      help: 'PostgreSQL pool: connections open (total) and idle, and requests waiting for one.',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const stats = pool()
        for (const state of ['total', 'idle', 'waiting'] as const) this.set({ state }, stats[state])
      },
    })
    new Gauge({
      name: 'threadline_db_pool_max_connections',
      help: 'The PostgreSQL pool size (DATABASE_POOL_SIZE).',
      registers: [registry],
      collect() {
        this.set(pool().max)
      },
    })
  }

  return registry
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const

/** One (route, method): its latency histogram and its requests by status. */
interface RouteSeries {
  readonly labels: { route: string; method: string }
  /** Observations by the first bound they fit under (not cumulative); those above the last are only in count. */
  readonly buckets: number[]
  sum: number
  count: number
  readonly statuses: Map<number, StatusSeries>
}

interface StatusSeries {
  readonly labels: { route: string; method: string; status: number }
  count: number
}

/** What a registry asks of a metric: what prom-client's Counter and Histogram answer, from our records. */
interface ScrapedMetric {
  readonly name: string
  readonly help: string
  readonly type: 'counter' | 'histogram'
  readonly aggregator: Aggregator
  get(): Promise<{
    name: string
    help: string
    type: 'counter' | 'histogram'
    values: { labels: object; value: number; metricName?: string; exemplar?: null }[]
    aggregator: Aggregator
  }>
  reset(): void
}

/**
 * threadline_http_requests_total and threadline_http_request_duration_seconds, counted per series in
 * plain records found through maps keyed by the values themselves (route templates and methods are
 * the same strings each time, the status a number), with no label object built or hashed per
 * request. The series are bounded: route templates or 'unmatched', the methods Node's parser knows,
 * statuses. Scraped, they read as prom-client's Counter and Histogram would after the same inc and
 * observe calls: series in the order first seen (again after a reset), labels in the same order,
 * cumulative buckets, then +Inf, _sum and _count.
 */
function httpSeries(): { metrics: readonly ScrapedMetric[]; record(route: string, method: string, status: number, seconds: number): void } {
  const routes = new Map<string, Map<string, RouteSeries>>()
  // The series counted since the last reset, in the order they were first seen: prom-client's order.
  const requestOrder: StatusSeries[] = []
  const latencyOrder: RouteSeries[] = []

  const requests: ScrapedMetric = {
    name: 'threadline_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status.',
    type: 'counter',
    aggregator: 'sum',
    async get() {
      const values = requestOrder.map((series) => ({ value: series.count, labels: series.labels }))
      return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
    },
    reset() {
      for (const series of requestOrder) series.count = 0
      requestOrder.length = 0
    },
  }
  const latency: ScrapedMetric = {
    name: 'threadline_http_request_duration_seconds',
    help: 'Time from the request arriving to its answer being written, by route template and method.',
    type: 'histogram',
    aggregator: 'sum',
    async get() {
      const bucket = `${this.name}_bucket`
      const values: { labels: object; value: number; metricName: string; exemplar?: null }[] = []
      for (const series of latencyOrder) {
        let cumulative = 0
        LATENCY_BUCKETS.forEach((le, i) => {
          cumulative += series.buckets[i] ?? 0
          values.push({ labels: { le, ...series.labels }, value: cumulative, metricName: bucket, exemplar: null })
        })
        values.push({ labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: bucket, exemplar: null })
        values.push({ labels: { ...series.labels }, value: series.sum, metricName: `${this.name}_sum` })
        values.push({ labels: { ...series.labels }, value: series.count, metricName: `${this.name}_count` })
      }
      return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
    },
    reset() {
      for (const series of latencyOrder) {
        series.buckets.fill(0)
        series.sum = 0
        series.count = 0
      }
      latencyOrder.length = 0
    },
  }
  // Registered first, where prom-client's own were: the registry writes metrics in the order they were registered.
  return {
    metrics: [requests, latency],
    record(route, method, status, seconds) {
      let methods = routes.get(route)
      if (methods === undefined) routes.set(route, (methods = new Map<string, RouteSeries>()))
      let series = methods.get(method)
      if (series === undefined) {
        series = { labels: { route, method }, buckets: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0, statuses: new Map() }
        methods.set(method, series)
      }
      let requestSeries = series.statuses.get(status)
      if (requestSeries === undefined) series.statuses.set(status, (requestSeries = { labels: { route, method, status }, count: 0 }))

      if (requestSeries.count++ === 0) requestOrder.push(requestSeries)
      if (series.count++ === 0) latencyOrder.push(series)
      series.sum += seconds
      for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
        if (seconds <= LATENCY_BUCKETS[i]!) {
          series.buckets[i]!++
          break
        }
      }
    },
  }
}

/**
 * A counter read as prom-client's Counter would be after the same inc calls: without labels, one
 * series from the start (0 until counted); with labels, a series per label values, in the order
 * first counted, labels in the order named.
 */
function counterSeries<L extends string>(name: string, help: string, labelNames: readonly L[]): ScrapedMetric & LabelledCounter<L> {
  const series = new Map<string, { labels: Record<L, string>; value: number }>()
  return {
    name,
    help,
    type: 'counter',
    aggregator: 'sum',
    inc(labels) {
      const key = labelNames.map((label) => labels[label]).join('\u0000')
      const known = series.get(key)
      if (known !== undefined) known.value++
      else series.set(key, { labels: Object.fromEntries(labelNames.map((label) => [label, labels[label]])) as Record<L, string>, value: 1 })
    },
    async get() {
      const values =
        labelNames.length === 0 && series.size === 0 ? [{ value: 0, labels: {} }] : [...series.values()].map(({ labels, value }) => ({ value, labels }))
      return { name, help, type: 'counter' as const, values, aggregator: 'sum' as const }
    },
    reset() {
      series.clear()
    },
  }
}

/** The events port with each publish and each delivery counted. */
export function countedEvents<M extends object>(events: Events<M>, counter: LabelledCounter<'event' | 'outcome'>): Events<M> {
  return {
    publish<N extends keyof M & string>(name: N, event: M[N]) {
      counter.inc({ event: name, outcome: 'published' })
      return events.publish(name, event)
    },
    subscribe<N extends keyof M & string>(name: N, listener: (event: M[N]) => void, signals?: Parameters<Events<M>['subscribe']>[2]) {
      return events.subscribe(
        name,
        (event) => {
          counter.inc({ event: name, outcome: 'delivered' })
          listener(event)
        },
        signals,
      )
    },
    listenerCount: (name) => events.listenerCount(name),
    ...(events.connected === undefined ? {} : { connected: () => events.connected?.() ?? false }),
    get stats() {
      return events.stats
    },
    close: () => events.close(),
  }
}

/** GET /metrics, outside the rate limit; with a token configured, only for whoever sends it. */
export function metricsRoute(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  const expected = token === undefined ? undefined : digest(token)
  app.get(METRICS_PATH, { config: { access: 'public', unmetered: true, quietLog: true, ownAuthorization: true } }, async (request: FastifyRequest, reply) => {
    if (expected !== undefined) {
      const sent = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1]
      if (sent === undefined || !timingSafeEqual(digest(sent), expected)) {
        throw new AppError('UNAUTHENTICATED', 'The metrics need the token set in METRICS_TOKEN')
      }
    }
    const [{ Registry }, process, app] = await Promise.all([import('prom-client'), processMetrics(), metrics.registry()])
    const merged = Registry.merge([process, app])
    reply.type(merged.contentType)
    return merged.metrics()
  })
}

const digest = (text: string) => createHash('sha256').update(text).digest()
