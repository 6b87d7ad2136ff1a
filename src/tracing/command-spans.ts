// A client span per Redis command, inside a trace only (a request's, a publish's): named after the
// command, with none of its arguments (keys and values are data), and the server it went to.
import { SpanKind } from '@opentelemetry/api'
import type { CommandObserver } from '../redis/connection.js'
import { activeParent, endFailed, type Spans } from './spans.js'

const NOTHING = () => undefined

export function commandSpans(spans: Spans): CommandObserver {
  return (name, redis) => {
    const parent = activeParent(spans)
    if (parent === undefined) return NOTHING
    const operation = name.toUpperCase()
    const { host, port, db } = redis.options
    const span = spans.tracer.startSpan(
      operation,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': 'redis',
          'db.operation.name': operation,
          'db.namespace': String(db ?? 0),
          ...(host === undefined ? {} : { 'server.address': host }),
          ...(port === undefined ? {} : { 'server.port': port }),
        },
      },
      parent,
    )
    return (error) => (error === undefined ? span.end() : endFailed(span, error))
  }
}
