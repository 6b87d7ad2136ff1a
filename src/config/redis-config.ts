// Redis (REDIS_URL, REDIS_KEY_PREFIX): where instances share rate-limit counters and events.
import { ConfigError, type Env, raw } from './read-env.js'

/** Redis, shared by every instance: the rate-limit counters and the events (pub/sub). */
export interface RedisConfig {
  /** A redis:// or rediss:// URL; undefined keeps rate limits and events in this process. */
  readonly url: string | undefined
  /** Starts every key and channel the service uses, so deployments can share one Redis. @default 'threadline:' */
  readonly keyPrefix: string
}

export function readRedisConfig(env: Env): RedisConfig {
  return Object.freeze({
    url: readRedisUrl(env, 'REDIS_URL'),
    keyPrefix: readKeyPrefix(env, 'REDIS_KEY_PREFIX', 'threadline:'),
  })
}

/** A redis:// or rediss:// URL. The value is not repeated in the error: it may hold a password. */
function readRedisUrl(env: Env, name: string): string | undefined {
  const value = raw(env, name)
  if (value === undefined) return undefined
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {
    url = undefined
  }
  if (url === undefined || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') {
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(value)?.[0]
    throw new ConfigError(name, `expected a URL such as redis://127.0.0.1:6379 or rediss://host:6380${scheme === undefined ? '' : `, got a ${scheme} URL`}`)
  }
  return value
}

function readKeyPrefix(env: Env, name: string, fallback: string): string {
  const value = raw(env, name) ?? fallback
  if (!/^[A-Za-z0-9:_.{}-]{1,100}$/.test(value)) {
    throw new ConfigError(name, `expected up to 100 letters, digits or : _ . - { }, got "${value}"`)
  }
  return value
}
