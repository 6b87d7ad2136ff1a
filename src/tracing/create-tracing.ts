// Tracing switched on: OpenTelemetry's trace SDK, a batch span processor, and the OTLP/HTTP
// exporter of the configured encoding (JSON or protobuf). Nothing is registered globally: each app
// has its own provider, context manager and propagator, and starts every span with its parent
// given (so two apps in one process, as in the tests, never see each other's spans).
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace'
import type { TracingConfig } from '../config.js'
import { PACKAGE_VERSION } from '../package-info.js'
import { commandSpans } from './command-spans.js'
import { AsyncLocalStorageContextManager } from './context-manager.js'
import { eventSpans } from './event-spans.js'
import { graphqlSpans } from './graphql-spans.js'
import { type RequestContexts, traceRequests } from './request-spans.js'
import type { Spans } from './spans.js'
import type { Tracing, TracingOptions } from './tracing.js'
import { statementSpans } from './statement-spans.js'

export async function createTracing(config: TracingConfig, options: TracingOptions): Promise<Tracing> {
  const provider = new TracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ 'service.version': PACKAGE_VERSION, ...config.resourceAttributes, 'service.name': config.serviceName }),
    ),
    sampler: sampler(config),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: await exporter(config),
        scheduledDelayMillis: config.batch.scheduleDelayMs,
        exportTimeoutMillis: config.batch.exportTimeoutMs,
        maxQueueSize: config.batch.maxQueueSize,
        maxExportBatchSize: config.batch.maxExportBatchSize,
      }),
    ],
  })
  const spans: Spans = { tracer: provider.getTracer('threadline', PACKAGE_VERSION), contexts: new AsyncLocalStorageContextManager() }
  const propagator = new W3CTraceContextPropagator()
  const requests: RequestContexts = new WeakMap()
  const events = eventSpans(spans, propagator, options.eventsSystem)
  return {
    traceRequests: (app) => traceRequests(app, spans, propagator, requests),
    traceStatements: (database, location) => database.observeStatements(statementSpans(spans, location)),
    redisCommands: commandSpans(spans),
    traceEvents: (adapter) => events.traceEvents(adapter),
    eventHeaders: events.headers,
    graphql: graphqlSpans(spans, requests, events),
    flush: () => provider.forceFlush(),
    close: () => provider.shutdown(),
  }
}

/** The OTLP/HTTP exporter of the configured encoding, each from its own package (only the one in use is loaded). */
async function exporter(config: TracingConfig): Promise<SpanExporter> {
  const { OTLPTraceExporter } =
    config.protocol === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto')
  type Options = NonNullable<ConstructorParameters<typeof OTLPTraceExporter>[0]>
  return new OTLPTraceExporter({
    url: config.url,
    headers: { ...config.headers },
    timeoutMillis: config.timeoutMs,
    compression: config.compression as Options['compression'],
  })
}

function sampler(config: TracingConfig): Sampler {
  const { sampler: name, samplerRatio } = config
  const root = name.endsWith('always_off')
    ? new AlwaysOffSampler()
    : name.endsWith('traceidratio')
      ? new TraceIdRatioBasedSampler(samplerRatio)
      : new AlwaysOnSampler()
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root
}
