// Events as an async iterator, for a subscription: the events of one name that pass a filter,
// queued while the consumer is busy. The queue is bounded: a consumer that falls more than
// `maxPending` events behind is told (`onOverflow`) and the stream ends, so a slow client can
// never hold an unbounded backlog in memory.
import type { EventMap, EventName, Events } from './events.js'

export interface EventStreamOptions {
  /** Events that may wait for the consumer. */
  maxPending: number
  /** Called once when the consumer falls further behind; the stream then ends. */
  onOverflow: () => void
}

export function eventStream<N extends EventName>(
  events: Events,
  name: N,
  accept: (event: EventMap[N]) => boolean,
  options: EventStreamOptions,
): AsyncIterableIterator<EventMap[N]> {
  const queue: EventMap[N][] = []
  let waiting: ((result: IteratorResult<EventMap[N]>) => void) | undefined
  let done = false

  const finish = (): IteratorResult<EventMap[N]> => {
    if (!done) {
      done = true
      unsubscribe()
      queue.length = 0
      waiting?.({ done: true, value: undefined })
      waiting = undefined
    }
    return { done: true, value: undefined }
  }

  const unsubscribe = events.subscribe(name, (event) => {
    if (done || !accept(event)) return
    if (waiting !== undefined) {
      const resolve = waiting
      waiting = undefined
      resolve({ done: false, value: event })
    } else if (queue.length < options.maxPending) {
      queue.push(event)
    } else {
      finish()
      options.onOverflow()
    }
  })

  return {
    next() {
      if (done) return Promise.resolve({ done: true, value: undefined })
      const event = queue.shift()
      if (event !== undefined) return Promise.resolve({ done: false, value: event })
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
