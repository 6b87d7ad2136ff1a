// The trace of a write carried to the subscribers it reaches. Publishing is a producer span
// ("publish commentAdded") in the trace of the write; each delivery to a subscription is a
// consumer span ("process commentAdded") in that same trace, a child of the publish, linked to the
// subscription's own span. In this process the event object itself finds its publish (the
// in-process adapter hands every listener the object published); across instances the Redis
// adapter carries traceparent and tracestate beside the event (EventHeaders).
import { type Context, defaultTextMapGetter, defaultTextMapSetter, type Link, ROOT_CONTEXT, SpanKind, trace, type TextMapPropagator } from '@opentelemetry/api'
import type { EventHeaders, Events } from '../events/events.js'
import { runInSpan, type Spans } from './spans.js'

/** Where an event came from: its topic, and the context of the span that published it. */
interface Origin {
  readonly topic: string
  readonly context: Context
}

export interface EventSpans {
  /** `events` with a producer span around each publish. */
  traceEvents<M extends object>(events: Events<M>): Events<M>
  /** The Redis adapter's headers: the publish's trace context out, and back in on every instance. */
  readonly headers: EventHeaders
  /** Runs the delivery of `event` in a consumer span of its publish's trace (linked to `subscription`); as it is for anything not published (a replayed comment). */
  deliver<T>(event: unknown, subscription: Link | undefined, run: () => T): T
}

/** `system`: the events adapter (messaging.system): 'redis', or 'memory' in the process. */
export function eventSpans(spans: Spans, propagator: TextMapPropagator, system: string): EventSpans {
  const origins = new WeakMap<object, Origin>()
  const messaging = (topic: string, operation: 'send' | 'process') => ({
    'messaging.system': system,
    'messaging.destination.name': topic,
    'messaging.operation.type': operation,
    'messaging.operation.name': operation === 'send' ? 'publish' : 'process',
  })

  return {
    traceEvents<M extends object>(events: Events<M>): Events<M> {
      return {
        publish<N extends keyof M & string>(name: N, event: M[N]) {
          const parent = spans.contexts.active()
          const span = spans.tracer.startSpan(`publish ${name}`, { kind: SpanKind.PRODUCER, attributes: messaging(name, 'send') }, parent)
          origins.set(event as object, { topic: name, context: trace.setSpan(parent, span) })
          return runInSpan(spans, parent, span, () => events.publish(name, event))
        },
        subscribe: (name, listener, signals) => events.subscribe(name, listener, signals),
        listenerCount: (name) => events.listenerCount(name),
        ...(events.connected === undefined ? {} : { connected: () => events.connected?.() ?? false }),
        get stats() {
          return events.stats
        },
        close: () => events.close(),
      }
    },

    headers: {
      outgoing(_name, event) {
        const origin = origins.get(event)
        if (origin === undefined) return undefined
        const carrier: Record<string, string> = {}
        propagator.inject(origin.context, carrier, defaultTextMapSetter)
        return carrier
      },
      incoming(name, event, headers) {
        const context = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter)
        if (trace.getSpanContext(context) !== undefined) origins.set(event, { topic: name, context })
      },
    },

    deliver<T>(event: unknown, subscription: Link | undefined, run: () => T): T {
      const origin = typeof event === 'object' && event !== null ? origins.get(event) : undefined
      if (origin === undefined) return run()
      const span = spans.tracer.startSpan(
        `process ${origin.topic}`,
        { kind: SpanKind.CONSUMER, attributes: messaging(origin.topic, 'process'), links: subscription === undefined ? [] : [subscription] },
        origin.context,
      )
      return runInSpan(spans, origin.context, span, run)
    },
  }
}
