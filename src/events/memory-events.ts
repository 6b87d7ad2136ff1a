// The embedded events adapter: listeners in this process, called in order of subscription. Its
// delivery cannot be interrupted, so it never signals, and nothing can fail to publish.
import { EventEmitter } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import type { Events } from './events.js'

const NO_FAULTS = Object.freeze({ publishFailures: 0, interruptions: 0 })

export function createMemoryEvents<M extends object>(options: { log?: FastifyBaseLogger } = {}): Events<M> {
  const emitter = new EventEmitter()
  // One listener per open subscription: thousands are expected, not a leak.
  emitter.setMaxListeners(0)
  return {
    async publish<N extends keyof M & string>(name: N, event: M[N]) {
      // One listener's failure (a bug) neither reaches the others nor the write that published.
      for (const listener of emitter.listeners(name) as ((event: M[N]) => void)[]) {
        try {
          listener(event)
        } catch (error) {
          options.log?.error({ err: error, event: name }, 'event listener failed')
        }
      }
    },
    subscribe<N extends keyof M & string>(name: N, listener: (event: M[N]) => void) {
      emitter.on(name, listener)
      return () => emitter.off(name, listener)
    },
    listenerCount: (name) => emitter.listenerCount(name),
    stats: NO_FAULTS,
    async close() {
      emitter.removeAllListeners()
    },
  }
}
