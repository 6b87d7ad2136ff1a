// The readers of one environment variable each, and the error they throw: a value that is
// missing or blank takes the default, a wrong one names its variable (ConfigError).
import { parseDuration } from '../core/duration.js'

/**
 * A variable set to a value it cannot take; `variable` names it, `reason` says what it expected.
 * `source` is what the message blames: the variable, or the command-line flag that stood for it.
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly reason: string,
    source = `Invalid environment variable ${variable}`,
  ) {
    super(`${source}: ${reason}`)
    this.name = 'ConfigError'
  }
}

/** The environment as loadConfig is given it: the process's own (loadConfig's default) or a plain object (tests). */
export type Env = Readonly<Record<string, string | undefined>>

/** The value, trimmed; undefined when unset or blank. */
export function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim()
  return value === '' ? undefined : value
}

export function readString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback
}

export function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name)
  if (value === undefined) return fallback
  const n = /^-?\d+$/.test(value) ? Number(value) : NaN
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${value}"`)
  }
  return n
}

export function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name)?.toLowerCase()
  if (value === undefined) return fallback
  if (value === 'true' || value === '1') return true
  if (value === 'false' || value === '0') return false
  throw new ConfigError(name, `expected true or false, got "${value}"`)
}

export function readChoice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const value = raw(env, name)
  if (value === undefined) return fallback
  if ((choices as readonly string[]).includes(value)) return value as T
  throw new ConfigError(name, `expected one of ${choices.join(', ')}, got "${value}"`)
}

export function readDuration(env: Env, name: string, fallback: string): number {
  const value = raw(env, name) ?? fallback
  const ms = parseDuration(value)
  if (ms === undefined) {
    throw new ConfigError(name, `expected a duration such as 30d, 12h, 15m or 90s, got "${value}"`)
  }
  return ms
}
