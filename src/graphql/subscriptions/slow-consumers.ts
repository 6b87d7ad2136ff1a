// Subscribers too slow to keep up are dropped, not buffered for, on both transports: an
// operation's events queue up to maxPendingEvents (then the subscriber is dropped: a WebSocket
// closes with 1008, an event stream is cut), and a WebSocket with more than maxBufferedBytes
// unsent is dropped too. The drops of both transports are counted here, for the stats.
import type { FastifyRequest } from 'fastify'
import type { EventStreamOptions } from '../../events/event-stream.js'

export class SlowConsumers {
  /** Subscribers dropped because they fell too far behind. */
  dropped = 0

  constructor(private readonly maxPendingEvents: number) {}

  /** The bounded queue of one operation's events: past it, the subscriber is counted, logged and dropped. */
  streamOptions(request: FastifyRequest, drop: () => void): EventStreamOptions {
    return {
      maxPending: this.maxPendingEvents,
      onOverflow: () => {
        this.dropped++
        request.log.warn({ maxPendingEvents: this.maxPendingEvents }, 'subscriber too slow: dropped')
        drop()
      },
    }
  }
}
