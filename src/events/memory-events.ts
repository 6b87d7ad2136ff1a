// The embedded events adapter: listeners in this process, called in order of subscription.
import { EventEmitter } from 'node:events'
import type { EventMap, EventName, Events } from './events.js'

export function createMemoryEvents(): Events {
  const emitter = new EventEmitter()
  // One listener per open subscription: thousands are expected, not a leak.
  emitter.setMaxListeners(0)
  return {
    async publish<N extends EventName>(name: N, event: EventMap[N]) {
      emitter.emit(name, event)
    },
    subscribe<N extends EventName>(name: N, listener: (event: EventMap[N]) => void) {
      emitter.on(name, listener)
      return () => emitter.off(name, listener)
    },
    listenerCount: (name) => emitter.listenerCount(name),
    async close() {
      emitter.removeAllListeners()
    },
  }
}
