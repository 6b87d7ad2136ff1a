// The events port: what happened, told to whoever listens — in this process (memory-events.ts)
// or, when scaling out, across instances (redis-events.ts). Services publish after their write
// has committed; the GraphQL subscriptions listen, and are told when delivery is interrupted. The
// port knows no topic: it is generic over a map of them, which the features declare.
/**
 * Each topic's shape, as JSON schema, by name: a topic declared in the map and missing here does
 * not compile. An event that comes from outside the process (Redis) is delivered only when it
 * matches: anyone who can publish on the channel could otherwise hand subscribers half an object.
 * Each feature declares its topics beside it (src/comments/comments.events.ts; the callers' in
 * src/core/caller-changed.ts); the composition root joins them (src/features.ts).
 */
export type TopicSchemas<M extends object> = { readonly [N in keyof M & string]: object }

const INPUT_RULES = new Set(['pattern', 'format', 'minLength', 'maxLength', 'minimum', 'maximum'])

/**
 * `schema` without the rules on input, as plain JSON schema, for an event's shape: only the
 * structure is checked (types, required fields, enums), not the rules on input (lengths, patterns,
 * formats), so a row stored before a rule was tightened still makes an event.
 */
export function eventShape(schema: object): object {
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([keyword]) => !INPUT_RULES.has(keyword) && !keyword.startsWith('x-'))
      .map(([keyword, value]) => {
        if (keyword === 'properties')
          return [keyword, Object.fromEntries(Object.entries(value as Record<string, object>).map(([name, property]) => [name, eventShape(property)]))]
        return [keyword, typeof value === 'object' && value !== null && !Array.isArray(value) ? eventShape(value as object) : value]
      }),
  )
}

/**
 * What a subscriber is told besides events, by an adapter whose delivery can stop (Redis): that
 * events may be missed from now on, and that they flow again. The in-process adapter never stops.
 */
export interface DeliverySignals {
  /** Delivery stopped: events published from now on may never arrive. Once per outage; at once for a subscription opened during one. */
  onInterrupted?(): void
  /** Delivery works again: events published from now on arrive. */
  onResumed?(): void
}

/** What an adapter counts, for the service's counters. */
export interface EventsStats {
  /** Events that could not be handed on (logged when a run of failures starts). */
  readonly publishFailures: number
  /** Times delivery to this process stopped. */
  readonly interruptions: number
}

/**
 * What travels with an event across processes besides the event (the Redis adapter): the trace
 * context of the write that published it, when tracing is on. Without it, a message is the event alone.
 */
export interface EventHeaders {
  /** The headers to send with `event` of topic `name`, or undefined for none. */
  outgoing(name: string, event: object): Readonly<Record<string, string>> | undefined
  /** Told of the headers `event` of topic `name` arrived with, before it is delivered. */
  incoming(name: string, event: object, headers: Readonly<Record<string, string>>): void
}

/** The port, over a map of topic name → what is published on it (`{ commentAdded: CommentAdded }`). */
export interface Events<M extends object> {
  /**
   * Tells every listener of `name`. Never rejects: the write it reports has committed, and an
   * adapter that cannot deliver logs and counts the failure instead.
   */
  publish<N extends keyof M & string>(name: N, event: M[N]): Promise<void>
  /** Calls `listener` with each event of `name` from now on; returns the unsubscribe function. */
  subscribe<N extends keyof M & string>(name: N, listener: (event: M[N]) => void, signals?: DeliverySignals): () => void
  /** Listeners of `name` in this process (open subscriptions). */
  listenerCount(name: keyof M & string): number
  readonly stats: EventsStats
  /** Whether delivery across instances works right now (Redis: both connections up); absent in the process. */
  connected?(): boolean
  close(): Promise<void>
}
