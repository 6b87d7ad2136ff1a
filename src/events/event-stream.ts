// Events as an async iterator, for a subscription: the events of one name that pass a filter,
// queued while the consumer is busy, and a marker where delivery was interrupted (the consumer
// tells its client that events may have been missed). The queue is bounded: a consumer that falls
// more than `maxPending` items behind is told (`onOverflow`) and the stream ends, so a slow client
// can never hold an unbounded backlog in memory.
import type { Events } from './events.js'

export interface EventStreamOptions {
  /** Events that may wait for the consumer. */
  maxPending: number
  /** Called once when the consumer falls further behind; the stream then ends. */
  onOverflow: () => void
  /**
   * The id of the last event the client received before it reconnected (an event stream's
   * Last-Event-ID): a stream whose events have ids starts after it, with what the client missed.
   */
  resumeAfter?: string
  /** Told the id of each event as it is delivered (an event stream sends it as the event's `id:`). */
  identify?: (id: string) => void
  /**
   * Takes what replaying `events` missed events costs, before they are read out (the rate limit,
   * as a list read of that many); throws when the caller's allowance is short. Absent: free.
   */
  chargeReplay?: (events: number) => Promise<void>
  /**
   * Runs a replay's work (reading what was missed) in a turn of the caller's, as a request's
   * handler runs in one (the fair scheduler); absent: at once. Each replayed event's delivery is
   * run in one too, by whoever delivers it (`isReplayed`).
   */
  inTurn?: <T>(work: () => Promise<T>) => Promise<T>
}

/** Events read from a store for a resumed stream, as opposed to heard live. */
const replayedEvents = new WeakSet<object>()

/** Marks `events` as replayed: read from the store for a stream that resumed. */
export function markReplayed(events: readonly object[]): void {
  for (const event of events) replayedEvents.add(event)
}

/** Whether `event` was read from the store for a resumed stream (its delivery takes a turn of its caller's, as other work does). */
export const isReplayed = (event: unknown): boolean => typeof event === 'object' && event !== null && replayedEvents.has(event)

/** What a stream yields where the adapter stopped delivering: events after it may be missing. */
export const EVENTS_INTERRUPTED = Symbol('events interrupted')
export type EventsInterrupted = typeof EVENTS_INTERRUPTED

export const isEventsInterrupted = (item: unknown): item is EventsInterrupted => item === EVENTS_INTERRUPTED

export function eventStream<M extends object, N extends keyof M & string>(
  events: Pick<Events<M>, 'subscribe'>,
  name: N,
  accept: (event: M[N]) => boolean,
  options: EventStreamOptions,
): AsyncIterableIterator<M[N] | EventsInterrupted> {
  type Item = M[N] | EventsInterrupted
  const queue: Item[] = []
  let waiting: ((result: IteratorResult<Item>) => void) | undefined
  let done = false

  const finish = (): IteratorResult<Item> => {
    if (!done) {
      done = true
      unsubscribe()
      queue.length = 0
      waiting?.({ done: true, value: undefined })
      waiting = undefined
    }
    return { done: true, value: undefined }
  }

  const push = (item: Item) => {
    if (done) return
    if (waiting !== undefined) {
      const resolve = waiting
      waiting = undefined
      resolve({ done: false, value: item })
    } else if (queue.length < options.maxPending) {
      queue.push(item)
    } else {
      finish()
      options.onOverflow()
    }
  }

  const unsubscribe = events.subscribe(
    name,
    (event) => {
      if (accept(event)) push(event)
    },
    { onInterrupted: () => push(EVENTS_INTERRUPTED) },
  )

  return {
    next() {
      if (done) return Promise.resolve({ done: true, value: undefined })
      if (queue.length > 0) return Promise.resolve({ done: false, value: queue.shift() as Item })
      return new Promise((resolve) => {
        waiting = resolve
      })
    },
    return() {
      return Promise.resolve(finish())
    },
    throw(error?: unknown) {
      finish()
      return Promise.reject(error instanceof Error ? error : new Error(String(error)))
    },
    [Symbol.asyncIterator]() {
      return this
    },
  }
}
