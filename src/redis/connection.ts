// Connections to Redis (ioredis) for the rate-limit store and the events, set up so that Redis
// being away never holds a request: commands fail at once instead of queueing, the connection
// keeps coming back by itself, and its going and coming are logged once each.
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'

/** How long to wait for a TCP connection (and the ready check) before trying again. */
const CONNECT_TIMEOUT_MS = 1000
/** A command unanswered this long fails: Redis answers in well under a millisecond when well. */
const COMMAND_TIMEOUT_MS = 500
/** Reconnecting waits 100 ms more after each failed attempt, up to this, and never gives up. */
const MAX_RECONNECT_DELAY_MS = 2000
/** On close, how long QUIT may take before the connection is cut (a Redis that hangs must not hold the shutdown). */
const QUIT_WAIT_MS = 1000
/**
 * A Redis that hangs (stopped, or a network that drops packets) keeps the TCP connection up, and
 * nothing else tells: a PING this often, unanswered for HEALTH_TIMEOUT_MS, drops the connection,
 * which reconnects as after any loss (subscribers are told; commands fail at once meanwhile).
 */
const HEALTH_INTERVAL_MS = 2000
const HEALTH_TIMEOUT_MS = 1000

export interface RedisConnectionOptions {
  url: string
  /** Names the connection in its log lines and in Redis's CLIENT LIST (`threadline:rate-limit`). */
  name: string
  log: FastifyBaseLogger
  /**
   * 'commands': a command sent while Redis is away fails at once (no offline queue), as does one
   * in flight when the connection drops, or one unanswered for 500 ms.
   * 'subscriber': a dedicated pub/sub connection; its owner subscribes again on each `onUp`.
   */
  mode: 'commands' | 'subscriber'
  /** Called each time the connection is ready, the first time included. */
  onUp?: () => void
  /** Called once when the connection is lost, or found unreachable at start; not again until `onUp`. */
  onDown?: () => void
  /** Told of every command sent (tracing, when it is on); absent, commands go to ioredis untouched. */
  observe?: CommandObserver
}

/**
 * Told of a command as it is sent, with its name alone (never its arguments: keys and values are
 * data); returns what to call when it settles, with the error if it failed.
 */
export type CommandObserver = (name: string, redis: Redis) => (error?: unknown) => void

/** ioredis is loaded when REDIS_URL is set, not before: without Redis it would only hold memory. */
const loadRedis = (): typeof Redis => (createRequire(import.meta.url)('ioredis') as { Redis: typeof Redis }).Redis

/**
 * Opens a connection and returns it without waiting: it connects, and reconnects, in the
 * background. `firstAttempt` tells when the first try is over.
 */
export function createRedisConnection(options: RedisConnectionOptions): Redis {
  const Redis = loadRedis()
  const { log, name } = options
  const commands = options.mode === 'commands'
  const redis = new Redis(options.url, {
    connectionName: name,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    // Commands: fail fast, and never replay a command after a reconnect (the request that sent it
    // has been answered by then). The subscriber: its owner subscribes again on each ready.
    enableOfflineQueue: !commands,
    maxRetriesPerRequest: commands ? 0 : null,
    autoResendUnfulfilledCommands: !commands,
    ...(commands ? { commandTimeout: COMMAND_TIMEOUT_MS } : {}),
    autoResubscribe: false,
  })
  if (options.observe !== undefined) observeCommands(redis, options.observe)

  let state: 'starting' | 'up' | 'down' = 'starting'
  let lastError: Error | undefined
  let downSince = 0
  // Without a listener an 'error' would be printed by ioredis on every attempt; the connection's
  // state is logged on 'close' and 'ready' instead.
  redis.on('error', (error: Error) => {
    lastError = error
    log.debug({ err: error, redis: name }, 'Redis connection error')
  })
  redis.on('ready', () => {
    if (state === 'down') log.info({ redis: name, ms: Date.now() - downSince }, 'Redis connection back')
    state = 'up'
    lastError = undefined
    options.onUp?.()
  })
  const health = setInterval(() => {
    if (isClosing(redis)) return clearInterval(health)
    if (redis.status !== 'ready') return
    const pong = redis.ping().then(
      () => true,
      () => false,
    )
    void Promise.race([pong, sleep(HEALTH_TIMEOUT_MS, false, { ref: false })]).then((answered) => {
      if (answered || isClosing(redis) || redis.status !== 'ready') return
      lastError = new Error(`no answer to PING in ${HEALTH_TIMEOUT_MS} ms`)
      redis.disconnect(true)
    })
  }, HEALTH_INTERVAL_MS)
  health.unref()
  redis.on('close', () => {
    if (state === 'down' || isClosing(redis)) return
    log.warn(
      { redis: name, err: lastError },
      state === 'up' ? 'Redis connection lost; reconnecting (logged once until it is back)' : 'Redis unreachable; retrying (logged once until it answers)',
    )
    state = 'down'
    downSince = Date.now()
    options.onDown?.()
  })
  return redis
}

/** Every command goes through sendCommand (pipelines and scripts included): the observer is told there. */
function observeCommands(redis: Redis, observe: CommandObserver): void {
  const send = redis.sendCommand.bind(redis)
  redis.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    const [command] = args
    const end = observe(command.name, redis)
    command.promise.then(
      () => end(),
      (error: unknown) => end(error),
    )
    return send(...args)
  }
}

const closing = new WeakSet<Redis>()
const isClosing = (redis: Redis) => closing.has(redis)

/** Resolves when the connection's first attempt is over: ready, refused, or timed out. Never rejects. */
export function firstAttempt(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      redis.off('ready', done)
      redis.off('close', done)
      resolve()
    }
    const timer = setTimeout(done, CONNECT_TIMEOUT_MS * 2)
    redis.once('ready', done)
    redis.once('close', done)
  })
}

/**
 * Closes the connection: QUIT when connected (answers to what was sent still arrive), else, or
 * when QUIT is not answered in a second, it is cut and stops trying.
 */
export async function closeRedisConnection(redis: Redis): Promise<void> {
  closing.add(redis)
  if (redis.status === 'ready') {
    const quit = redis.quit().then(
      () => true,
      () => false,
    )
    if (await Promise.race([quit, sleep(QUIT_WAIT_MS, false, { ref: false })])) return
  }
  redis.disconnect()
}
