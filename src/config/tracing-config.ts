// Traces (OpenTelemetry), read from the standard OTEL_* variables: on when an OTLP endpoint is
// named (or OTEL_TRACES_EXPORTER=otlp), off otherwise, and then none of the others is read.
// Only OTLP over HTTP is spoken, in either of its encodings.
import { ConfigError, type Env, raw, readBoolean, readChoice, readInteger } from './read-env.js'

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number]

/** The samplers of the OpenTelemetry specification that the trace SDK implements (OTEL_TRACES_SAMPLER). */
export const TRACE_SAMPLERS = [
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
] as const
export type TraceSampler = (typeof TRACE_SAMPLERS)[number]

/** Traces of requests, GraphQL stages, SQL statements, Redis commands and event deliveries, sent by OTLP/HTTP. */
export interface TracingConfig {
  /** The URL spans are posted to: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. @default 'http://localhost:4318/v1/traces' */
  readonly url: string
  /** OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL. @default 'http/protobuf' */
  readonly protocol: OtlpProtocol
  /** Sent with every export (an API key): OTEL_EXPORTER_OTLP_HEADERS, with OTEL_EXPORTER_OTLP_TRACES_HEADERS over it. @default {} */
  readonly headers: Readonly<Record<string, string>>
  /** How long one export may take, in milliseconds. @default 10000 */
  readonly timeoutMs: number
  /** @default 'none' */
  readonly compression: 'gzip' | 'none'
  /** The resource's service.name: OTEL_SERVICE_NAME, else service.name in OTEL_RESOURCE_ATTRIBUTES. @default 'threadline' */
  readonly serviceName: string
  /** OTEL_RESOURCE_ATTRIBUTES: describe the instance (deployment.environment.name=prod,...). @default {} */
  readonly resourceAttributes: Readonly<Record<string, string>>
  /** OTEL_TRACES_SAMPLER. @default 'parentbased_always_on' */
  readonly sampler: TraceSampler
  /** OTEL_TRACES_SAMPLER_ARG: the share of traces kept by the traceidratio samplers, from 0 to 1. @default 1 */
  readonly samplerRatio: number
  /** The batch span processor (OTEL_BSP_*): spans wait at most `scheduleDelayMs` and are sent `maxExportBatchSize` at a time; past `maxQueueSize` waiting, new ones are dropped. */
  readonly batch: {
    /** @default 5000 */
    readonly scheduleDelayMs: number
    /** @default 30000 */
    readonly exportTimeoutMs: number
    /** @default 2048 */
    readonly maxQueueSize: number
    /** @default 512 */
    readonly maxExportBatchSize: number
  }
}

const DEFAULT_URL = 'http://localhost:4318/v1/traces'

/**
 * The tracing section, or undefined when tracing is off: no endpoint, OTEL_TRACES_EXPORTER=none, or
 * OTEL_SDK_DISABLED=true. Every variable is read either way, so a wrong one is found before it matters.
 */
export function readTracingConfig(env: Env): TracingConfig | undefined {
  const disabled = readBoolean(env, 'OTEL_SDK_DISABLED', false)
  const exporter = readChoice(env, 'OTEL_TRACES_EXPORTER', ['otlp', 'none'], 'otlp')
  const tracesEndpoint = raw(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
  const endpoint = raw(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')
  const url =
    tracesEndpoint !== undefined
      ? readUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint)
      : endpoint !== undefined
        ? `${readUrl('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint).replace(/\/+$/, '')}/v1/traces`
        : DEFAULT_URL
  const resourceAttributes = readKeyValues(env, 'OTEL_RESOURCE_ATTRIBUTES')
  const sampler = readChoice(env, 'OTEL_TRACES_SAMPLER', TRACE_SAMPLERS, 'parentbased_always_on')
  const samplerRatio = readRatio(env, 'OTEL_TRACES_SAMPLER_ARG', sampler.endsWith('traceidratio'))
  const maxQueueSize = readInteger(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1, 1_000_000)
  const config: TracingConfig = Object.freeze({
    url,
    protocol: readProtocol(env),
    headers: Object.freeze({ ...readKeyValues(env, 'OTEL_EXPORTER_OTLP_HEADERS', true), ...readKeyValues(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', true) }),
    timeoutMs: readInteger(env, signalFirst(env, 'TIMEOUT'), 10_000, 1, 600_000),
    compression: readChoice(env, signalFirst(env, 'COMPRESSION'), ['gzip', 'none'], 'none'),
    serviceName: raw(env, 'OTEL_SERVICE_NAME') ?? resourceAttributes['service.name'] ?? 'threadline',
    resourceAttributes: Object.freeze(resourceAttributes),
    sampler,
    samplerRatio,
    batch: Object.freeze({
      scheduleDelayMs: readInteger(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0, 3_600_000),
      exportTimeoutMs: readInteger(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1, 3_600_000),
      maxQueueSize,
      maxExportBatchSize: readInteger(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', Math.min(512, maxQueueSize), 1, maxQueueSize),
    }),
  })
  const named = tracesEndpoint !== undefined || endpoint !== undefined || raw(env, 'OTEL_TRACES_EXPORTER') !== undefined
  return disabled || exporter === 'none' || !named ? undefined : config
}

/**
 * The traces' own variable when it is set, else the one for every signal (OTEL_EXPORTER_OTLP_TRACES_X
 * over OTEL_EXPORTER_OTLP_X). Both are looked at, so both are read.
 */
function signalFirst(env: Env, suffix: string): string {
  const own = `OTEL_EXPORTER_OTLP_TRACES_${suffix}`
  const shared = `OTEL_EXPORTER_OTLP_${suffix}`
  const ownValue = raw(env, own)
  raw(env, shared)
  return ownValue !== undefined ? own : shared
}

function readProtocol(env: Env): OtlpProtocol {
  const name = signalFirst(env, 'PROTOCOL')
  if (raw(env, name) === 'grpc') {
    throw new ConfigError(name, 'grpc is not spoken here: use http/protobuf or http/json (a collector takes both on port 4318)')
  }
  return readChoice(env, name, OTLP_PROTOCOLS, 'http/protobuf')
}

/** An http:// or https:// URL. */
function readUrl(name: string, value: string): string {
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {
    url = undefined
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ConfigError(name, `expected an http:// or https:// URL such as http://localhost:4318, got "${value}"`)
  }
  return value
}

/** A ratio from 0 to 1, for a ratio sampler; any other sampler takes no argument (its value is not looked at). */
function readRatio(env: Env, name: string, used: boolean): number {
  const value = raw(env, name)
  if (value === undefined || !used) return 1
  const ratio = /^\d*\.?\d+$/.test(value) ? Number(value) : NaN
  if (!(ratio >= 0 && ratio <= 1)) throw new ConfigError(name, `expected a number from 0 to 1 (the share of traces kept), got "${value}"`)
  return ratio
}

/**
 * `key=value` pairs separated by commas, each part percent-decoded (the W3C Baggage format the
 * specification uses for headers and resource attributes). `secret`: the values are headers that
 * may hold an API key, and are never repeated in an error.
 */
function readKeyValues(env: Env, name: string, secret = false): Record<string, string> {
  const value = raw(env, name)
  const pairs: Record<string, string> = {}
  if (value === undefined) return pairs
  for (const item of value.split(',')) {
    if (item.trim() === '') continue
    const at = item.indexOf('=')
    const key = at > 0 ? decode(item.slice(0, at).trim()) : undefined
    const decoded = at > 0 ? decode(item.slice(at + 1).trim()) : undefined
    if (key === undefined || key === '' || decoded === undefined) {
      const shown = secret ? 'an item' : `"${item.trim()}"`
      throw new ConfigError(name, `expected key=value pairs separated by commas (percent-encoded), got ${shown} that is not one`)
    }
    pairs[key] = decoded
  }
  return pairs
}

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}
