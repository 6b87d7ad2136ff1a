// The events adapter for many instances: Redis pub/sub. An event published on any instance reaches
// the listeners of every instance, this one included (it hears its own events back from Redis,
// so every instance sees one order). Two connections: a dedicated subscriber, and one for PUBLISH.
// One SUBSCRIBE per event name, for the life of the process, whatever the number of listeners:
// a message is fanned out here to the local listeners. When the subscriber connection is lost,
// every listener is told (DeliverySignals) once; when it is back and subscribed again, told
// again, and events flow. Publishing never waits for Redis to come back: it fails at once, is
// logged when a run of failures starts, and counted. A message is the event's JSON; with headers
// (tracing on) it is the pair [headers, event], which every instance reads.
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import { FailureLog } from '../redis/failure-log.js'
import { closeRedisConnection, type CommandObserver, createRedisConnection, firstAttempt } from '../redis/connection.js'
import { bodyAjv, toErrorDetails } from '../core/validation.js'
import type { DeliverySignals, EventHeaders, Events, TopicSchemas } from './events.js'

export interface RedisEventsOptions<M extends object> {
  /** Every topic's shape, by name: one channel each, and what arrives on it is checked against it. */
  topics: TopicSchemas<M>
  /** A redis:// or rediss:// URL. */
  url: string
  /** Starts every channel: `${keyPrefix}events:${name}`. */
  keyPrefix: string
  log: FastifyBaseLogger
  /** What travels beside each event (its trace context); absent, messages are the events alone. */
  headers?: EventHeaders
  /** Told of every Redis command (tracing); absent, none is observed. */
  observeCommands?: CommandObserver
}

interface Subscription {
  listener: (event: unknown) => void
  signals: DeliverySignals | undefined
}

/** At start, how long to wait for the first subscription to be in place before serving anyway. */
const STARTUP_WAIT_MS = 2000

/**
 * Connects (without failing when Redis is away: it keeps trying in the background, and
 * subscriptions are told that live events are interrupted) and subscribes to every event's channel.
 */
export async function createRedisEvents<M extends object>(options: RedisEventsOptions<M>): Promise<Events<M>> {
  const { log } = options
  const channelPrefix = `${options.keyPrefix}events:`
  const names = Object.keys(options.topics) as (keyof M & string)[]
  const eventChecks = new Map<string, ReturnType<typeof bodyAjv.compile>>(names.map((name) => [name, bodyAjv.compile(options.topics[name])]))
  const channels = names.map((name) => `${channelPrefix}${name}`)
  const subscriptions = new Map<string, Set<Subscription>>(names.map((name) => [name, new Set()]))
  const publishing = new FailureLog(log, 'event publishing', 'events are lost for every instance')
  let interrupted = false
  let interruptions = 0
  let closed = false
  let started: () => void = () => undefined
  const start = new Promise<void>((resolve) => (started = resolve))

  const signal = (subscription: Subscription, which: keyof DeliverySignals) => {
    try {
      subscription.signals?.[which]?.()
    } catch (error) {
      log.error({ err: error }, `event subscriber failed on ${which}`)
    }
  }
  const signalAll = (which: keyof DeliverySignals) => {
    for (const set of subscriptions.values()) for (const subscription of set) signal(subscription, which)
  }

  const interrupt = () => {
    started()
    if (interrupted || closed) return
    interrupted = true
    interruptions++
    signalAll('onInterrupted')
  }

  // Each time the subscriber is ready (after a reconnect, on a new connection): subscribe again
  // (ioredis's own autoResubscribe is off, so that "resumed" is when Redis has acknowledged).
  const resume = async () => {
    try {
      await subscriber.subscribe(...channels)
    } catch (error) {
      if (!closed) log.warn({ err: error }, 'could not subscribe to the event channels')
      interrupt()
      return
    }
    started()
    if (!interrupted || closed || subscriber.status !== 'ready') return
    interrupted = false
    signalAll('onResumed')
  }

  const subscriber = createRedisConnection({
    url: options.url,
    name: `${options.keyPrefix}events-subscriber`,
    log,
    mode: 'subscriber',
    onUp: () => void resume(),
    onDown: interrupt,
    observe: options.observeCommands,
  })
  const publisher = createRedisConnection({
    url: options.url,
    name: `${options.keyPrefix}events-publisher`,
    log,
    mode: 'commands',
    observe: options.observeCommands,
  })
  const { headers } = options

  subscriber.on('message', (channel: string, message: string) => {
    const listeners = channel.startsWith(channelPrefix) ? subscriptions.get(channel.slice(channelPrefix.length)) : undefined
    if (listeners === undefined || listeners.size === 0) return
    let event: unknown
    let carried: unknown
    try {
      event = JSON.parse(message)
    } catch (error) {
      log.warn({ err: error, channel }, 'unreadable event from Redis: dropped')
      return
    }
    // [headers, event] from an instance that traces; an event is always an object, never an array.
    if (Array.isArray(event)) [carried, event] = event as unknown[]
    const matches = eventChecks.get(channel.slice(channelPrefix.length))
    if (matches === undefined || !matches(event)) {
      log.warn({ channel, problems: toErrorDetails(matches?.errors ?? []).slice(0, 5) }, 'malformed event from Redis: dropped')
      return
    }
    if (headers !== undefined && isHeaders(carried)) headers.incoming(channel.slice(channelPrefix.length), event as object, carried)
    for (const subscription of listeners) {
      try {
        subscription.listener(event)
      } catch (error) {
        log.error({ err: error, channel }, 'event listener failed')
      }
    }
  })

  // Serve once both connections have had their first try (and the channels are subscribed when
  // Redis is there), at most STARTUP_WAIT_MS: a Redis that is away does not hold the start.
  await Promise.all([firstAttempt(publisher), Promise.race([start, sleep(STARTUP_WAIT_MS, undefined, { ref: false })])])

  return {
    async publish<N extends keyof M & string>(name: N, event: M[N]) {
      try {
        const carried = headers?.outgoing(name, event as object)
        await publisher.publish(`${channelPrefix}${name}`, JSON.stringify(carried === undefined ? event : [carried, event]))
        publishing.succeeded()
      } catch (error) {
        publishing.failed(error)
      }
    },
    subscribe<N extends keyof M & string>(name: N, listener: (event: M[N]) => void, signals?: DeliverySignals) {
      const set = subscriptions.get(name)
      if (set === undefined) throw new Error(`Unknown event ${name}`)
      const subscription: Subscription = { listener: listener as (event: unknown) => void, signals }
      set.add(subscription)
      // Opened during an outage: told at once (once the caller holds its unsubscribe function).
      if (interrupted) queueMicrotask(() => interrupted && set.has(subscription) && signal(subscription, 'onInterrupted'))
      return () => void set.delete(subscription)
    },
    listenerCount: (name) => subscriptions.get(name)?.size ?? 0,
    connected: () => subscriber.status === 'ready' && publisher.status === 'ready',
    stats: {
      get publishFailures() {
        return publishing.failures
      },
      get interruptions() {
        return interruptions
      },
    },
    async close() {
      closed = true
      for (const set of subscriptions.values()) set.clear()
      await Promise.all([closeRedisConnection(subscriber), closeRedisConnection(publisher)])
    },
  }
}

/** Headers as an envelope carries them: strings by name. */
const isHeaders = (value: unknown): value is Record<string, string> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((item) => typeof item === 'string')
