// A local OTLP/HTTP receiver for the tracing tests: a node:http server on a free port that takes
// POST /v1/traces in either encoding (application/json, application/x-protobuf), answers as a
// collector does, and keeps every span it was sent, decoded to one shape whichever the encoding.
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'
import { fieldsOf, type ProtobufField } from './protobuf-reader.js'

/** A span as received, in one shape for both encodings; ids in hex, attributes by name. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  /** '' for a root span. */
  parentSpanId: string
  name: string
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number
  attributes: Record<string, unknown>
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number
  links: { traceId: string; spanId: string }[]
  /** The resource's attributes (service.name ...). */
  resource: Record<string, unknown>
  /** The encoding it came in. */
  encoding: 'json' | 'protobuf'
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const

export interface OtlpReceiver {
  /** The traces endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. */
  url: string
  spans: ReceivedSpan[]
  /** Export requests received, and the headers of the last one. */
  requests: number
  lastHeaders: IncomingMessage['headers']
  close(): Promise<void>
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = { url: '', spans: [], requests: 0, lastHeaders: {}, close: async () => undefined }
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      receiver.requests++
      receiver.lastHeaders = request.headers
      const raw = Buffer.concat(chunks)
      const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw
      const json = request.headers['content-type']?.startsWith('application/json') === true
      receiver.spans.push(...(json ? spansOfJson(JSON.parse(body.toString('utf8')) as JsonRequest) : spansOfProtobuf(body)))
      response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
      response.end(json ? '{}' : undefined)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return receiver
}

interface JsonValue {
  stringValue?: string
  boolValue?: boolean
  intValue?: number | string
  doubleValue?: number
}
interface JsonKeyValue {
  key: string
  value: JsonValue
}
interface JsonRequest {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] }
    scopeSpans?: {
      spans?: {
        traceId: string
        spanId: string
        parentSpanId?: string
        name: string
        kind: number
        attributes?: JsonKeyValue[]
        status?: { code?: number }
        links?: { traceId: string; spanId: string }[]
      }[]
    }[]
  }[]
}

const jsonValue = (value: JsonValue): unknown =>
  value.stringValue ?? value.boolValue ?? (value.intValue === undefined ? value.doubleValue : Number(value.intValue))
const jsonAttributes = (list: JsonKeyValue[] = []) => Object.fromEntries(list.map(({ key, value }) => [key, jsonValue(value)]))

function spansOfJson(request: JsonRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = jsonAttributes(resourceSpans.resource?.attributes)
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        attributes: jsonAttributes(span.attributes),
        statusCode: span.status?.code ?? 0,
        links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
        resource,
        encoding: 'json' as const,
      })),
    )
  })
}

// ExportTraceServiceRequest, as opentelemetry-proto numbers its fields.
const hex = (field: ProtobufField | undefined) => (field?.bytes ?? Buffer.alloc(0)).toString('hex')
const text = (field: ProtobufField | undefined) => (field?.bytes ?? Buffer.alloc(0)).toString('utf8')
const first = (fields: ProtobufField[], number: number) => fields.find((field) => field.number === number)
const all = (fields: ProtobufField[], number: number) => fields.filter((field) => field.number === number)

/** AnyValue: string 1, bool 2, int 3, double 4. */
function anyValue(bytes: Buffer): unknown {
  const [field] = fieldsOf(bytes)
  if (field === undefined) return undefined
  if (field.number === 1) return text(field)
  if (field.number === 2) return field.varint === 1n
  if (field.number === 3) return Number(BigInt.asIntN(64, field.varint ?? 0n))
  if (field.number === 4) return field.bytes?.readDoubleLE(0)
  return undefined
}

/** KeyValue: key 1, value 2. */
function protobufAttributes(list: ProtobufField[]): Record<string, unknown> {
  return Object.fromEntries(
    list.map((item) => {
      const fields = fieldsOf(item.bytes ?? Buffer.alloc(0))
      return [text(first(fields, 1)), anyValue(first(fields, 2)?.bytes ?? Buffer.alloc(0))]
    }),
  )
}

function spansOfProtobuf(body: Buffer): ReceivedSpan[] {
  return all(fieldsOf(body), 1).flatMap((resourceSpans) => {
    const rs = fieldsOf(resourceSpans.bytes ?? Buffer.alloc(0))
    const resource = protobufAttributes(all(fieldsOf(first(rs, 1)?.bytes ?? Buffer.alloc(0)), 1))
    return all(rs, 2).flatMap((scopeSpans) =>
      all(fieldsOf(scopeSpans.bytes ?? Buffer.alloc(0)), 2).map((spanField) => {
        // Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, attributes 9, links 13, status 15 (code 3).
        const span = fieldsOf(spanField.bytes ?? Buffer.alloc(0))
        const status = fieldsOf(first(span, 15)?.bytes ?? Buffer.alloc(0))
        return {
          traceId: hex(first(span, 1)),
          spanId: hex(first(span, 2)),
          parentSpanId: hex(first(span, 4)),
          name: text(first(span, 5)),
          kind: Number(first(span, 6)?.varint ?? 0n),
          attributes: protobufAttributes(all(span, 9)),
          statusCode: Number(first(status, 3)?.varint ?? 0n),
          links: all(span, 13).map((link) => {
            const fields = fieldsOf(link.bytes ?? Buffer.alloc(0))
            return { traceId: hex(first(fields, 1)), spanId: hex(first(fields, 2)) }
          }),
          resource,
          encoding: 'protobuf' as const,
        }
      }),
    )
  })
}
