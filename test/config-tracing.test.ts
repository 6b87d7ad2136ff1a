// The tracing section of the config: off without an OTLP endpoint, and the OTEL_* variables as the
// OpenTelemetry specification defines them, a wrong value named in a ConfigError.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.js'

const tracing = (env: Record<string, string>) => loadConfig(env).tracing
const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }

describe('tracing settings', () => {
  it('are off without an endpoint, whatever else is set', () => {
    expect(tracing({})).toBeUndefined()
    expect(tracing({ OTEL_SERVICE_NAME: 'api', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'always_on' })).toBeUndefined()
  })

  it('are off when OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is none, endpoint or not', () => {
    expect(tracing({ ...ENDPOINT, OTEL_SDK_DISABLED: 'true' })).toBeUndefined()
    expect(tracing({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined()
  })

  it('have the documented defaults once an endpoint is named', () => {
    expect(tracing(ENDPOINT)).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      timeoutMs: 10_000,
      compression: 'none',
      serviceName: 'threadline',
      resourceAttributes: {},
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      batch: { scheduleDelayMs: 5000, exportTimeoutMs: 30_000, maxQueueSize: 2048, maxExportBatchSize: 512 },
    })
  })

  it('send to the traces endpoint as given, or to the endpoint with /v1/traces, or to localhost with OTEL_TRACES_EXPORTER=otlp alone', () => {
    expect(tracing({ ...ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/in' })?.url).toBe('https://traces.example.com/in')
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })?.url).toBe('http://collector:4318/v1/traces')
    expect(tracing({ OTEL_TRACES_EXPORTER: 'otlp' })?.url).toBe('http://localhost:4318/v1/traces')
  })

  it("take the traces' own protocol, headers, timeout and compression over the shared ones", () => {
    const config = tracing({
      ...ENDPOINT,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=shared,x-team=a%20b',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=traces',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
      OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'gzip',
    })
    expect(config).toMatchObject({ protocol: 'http/json', headers: { 'api-key': 'traces', 'x-team': 'a b' }, timeoutMs: 2000, compression: 'gzip' })
  })

  it('name the service by OTEL_SERVICE_NAME over service.name in OTEL_RESOURCE_ATTRIBUTES', () => {
    const attributes = { OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,deployment.environment.name=prod' }
    expect(tracing({ ...ENDPOINT, ...attributes })).toMatchObject({
      serviceName: 'from-resource',
      resourceAttributes: { 'deployment.environment.name': 'prod' },
    })
    expect(tracing({ ...ENDPOINT, ...attributes, OTEL_SERVICE_NAME: 'api' })?.serviceName).toBe('api')
  })

  it('read the sampler and its ratio', () => {
    expect(tracing({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toMatchObject({
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
    })
    expect(tracing({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'always_off', OTEL_TRACES_SAMPLER_ARG: 'ignored' })?.sampler).toBe('always_off')
  })

  it.each([
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc', /grpc is not spoken here: use http\/protobuf or http\/json/],
    ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'http/xml', /expected one of http\/protobuf, http\/json/],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'collector:4318', /expected an http:\/\/ or https:\/\/ URL/],
    ['OTEL_TRACES_EXPORTER', 'zipkin', /expected one of otlp, none/],
    ['OTEL_TRACES_SAMPLER', 'jaeger_remote', /expected one of parentbased_always_on/],
    ['OTEL_RESOURCE_ATTRIBUTES', 'region', /expected key=value pairs/],
    ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE', '5000', /expected an integer from 1 to 2048/],
    ['OTEL_EXPORTER_OTLP_COMPRESSION', 'brotli', /expected one of gzip, none/],
  ])('refuse %s=%s, naming it', (name, value, reason) => {
    expect(() => loadConfig({ ...ENDPOINT, [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ ...ENDPOINT, [name]: value })).toThrow(new RegExp(`${name}: ${reason.source}`))
  })

  it('refuses a wrong value while tracing is off too', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not spoken here/)
  })

  it('refuses a ratio outside 0 to 1 for a ratio sampler', () => {
    expect(() => tracing({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(
      /OTEL_TRACES_SAMPLER_ARG: expected a number from 0 to 1/,
    )
  })

  it('never repeats a header in its refusal (it may hold an API key)', () => {
    expect(() => tracing({ ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: 'secret-key-123' })).toThrow(/OTEL_EXPORTER_OTLP_HEADERS: expected key=value pairs/)
    expect(() => tracing({ ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: 'secret-key-123' })).not.toThrow(/secret-key-123/)
  })
})
