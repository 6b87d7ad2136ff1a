// The outside services some tests need: PostgreSQL and Redis. Outside CI a test that needs one
// skips, saying why, when it does not answer; under CI=true it must answer, or the run fails.
import { connect } from 'node:net'

export const IN_CI = process.env.CI === 'true'

/** The PostgreSQL server tests create their databases on (its own database is left alone). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** True when something accepts a TCP connection at the URL's host and port within a second. */
export function answers(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || defaultPort) })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/**
 * The URL when the service answers. Otherwise: under CI=true, throws (the run must not pass
 * without it); elsewhere, says once why the tests that need it skip, and returns undefined.
 */
export async function serviceOrSkip(name: 'PostgreSQL' | 'Redis', url: string): Promise<string | undefined> {
  const defaultPort = name === 'PostgreSQL' ? 5432 : 6379
  if (await answers(url, defaultPort)) return url
  const how = name === 'PostgreSQL' ? 'set TEST_DATABASE_URL or start PostgreSQL' : 'set TEST_REDIS_URL or start redis-server'
  if (IN_CI) throw new Error(`${name} does not answer at ${redacted(url)}, and CI=true requires it (${how})`)
  console.warn(`[skip] ${name} does not answer at ${redacted(url)}: its tests are skipped (${how}).`)
  return undefined
}

export const postgresUrl = (): Promise<string | undefined> => serviceOrSkip('PostgreSQL', TEST_DATABASE_URL)
export const redisUrl = (): Promise<string | undefined> => serviceOrSkip('Redis', TEST_REDIS_URL)

function redacted(url: string): string {
  const parsed = new URL(url)
  if (parsed.password !== '') parsed.password = '***'
  return parsed.toString()
}
