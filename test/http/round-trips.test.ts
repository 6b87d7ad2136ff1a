// What one request costs in round trips on the scale-out deployment (the store, and Redis beside
// it), with no cached answer: the statements the app runs, counted as they are sent, and the
// commands Redis receives under the app's key prefix (read with MONITOR, on a connection of its
// own). Each line of the table is the least the request can do.
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { redisUrl } from '../helpers/services.js'
import { TEST_STORE } from '../helpers/test-store.js'
import { until } from '../helpers/until.js'

const redis = await redisUrl()

describe.skipIf(redis === undefined)('round trips per request, PostgreSQL or SQLite with Redis, no cached answer', () => {
  const prefix = `round-trips-${process.pid}-${Date.now()}:`
  const statements: string[] = []
  const commands: string[] = []
  let t: TestApp
  let monitor: Redis

  beforeAll(async () => {
    // The shipped allowance (300 a minute), which sets the size of a caller's lease.
    t = await buildTestApp(
      { REDIS_URL: redis!, REDIS_KEY_PREFIX: prefix, HTTP_REPRESENTATION_CACHE_MB: '0', RATE_LIMIT_MAX: '300' },
      { onQuery: (sql) => statements.push(sql) },
    )
    // Bob has a post, Alice none: a user's list reads the user only when its page is empty. Written
    // by the admin, whose allowance no row of the table takes: Bob's first request stays a new caller's.
    const written = await t.request({ method: 'POST', url: `/api/v1/users/${t.bob.id}/posts`, token: t.tokens.admin, json: { title: 'Mine', content: '…' } })
    expect(written.statusCode).toBe(201)
    monitor = await new Redis(redis!).monitor()
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.some((arg) => arg.startsWith(prefix))) commands.push(args.join(' '))
    })
  })
  afterAll(async () => {
    monitor.disconnect()
    await t?.close()
  })

  /** The statements and Redis commands of one request, once its answer is in. */
  const tripsOf = async (send: () => Promise<{ statusCode: number }>) => {
    // A marker command of our own: once MONITOR shows it, every command sent before it has been seen.
    const mark = async () => {
      const marker = `${prefix}marker-${Math.random()}`
      const client = new Redis(redis!)
      await client.get(marker)
      client.disconnect()
      await until(() => commands.some((command) => command.includes(marker)), 2000)
    }
    await mark()
    statements.length = 0
    commands.length = 0
    const { statusCode } = await send()
    await mark()
    return { statusCode, statements: statements.length, redis: commands.filter((command) => !command.includes('marker-')) }
  }

  // Rights are never served stale: on PostgreSQL, where other instances revoke tokens unseen until
  // told, a token is looked up on every request; SQLite keeps its callers until a write.
  const tokenLookup = TEST_STORE === 'postgres' ? 1 : 0
  const graphql = (query: string) => ({ method: 'POST' as const, url: '/graphql', json: { query } })
  const table: [string, () => Parameters<TestApp['request']>[0], number][] = [
    ['GET one user', () => ({ url: `/api/v1/users/${t.bob.id}` }), 1],
    ['GET one user with a token', () => ({ url: `/api/v1/users/${t.bob.id}`, token: t.tokens.bob }), 1 + tokenLookup],
    ['GET a page of 20, v1 (its total counted in the same statement)', () => ({ url: '/api/v1/users?sort=name&limit=20' }), 1],
    ['GET a page of 20, v2', () => ({ url: '/api/v2/users?sort=name&limit=20' }), 1],
    ["GET a user's posts, v2 (a row of the page names its user, who is not read)", () => ({ url: `/api/v2/users/${t.bob.id}/posts` }), 1],
    ["GET a user's posts, v2, none (the empty page, then the user)", () => ({ url: `/api/v2/users/${t.alice.id}/posts` }), 2],
    ['GraphQL user(id)', () => graphql(`{ user(id: "${t.bob.id}") { id name } }`), 1],
    ['GraphQL users { posts } (one statement per level)', () => graphql('{ users { id name posts { id title } } }'), 2],
  ]

  // Each request from an address of its own: a caller's first request in a window asks Redis.
  let addresses = 0
  const fresh = (request: Parameters<TestApp['request']>[0]) => ({ ...request, remoteAddress: `10.77.0.${++addresses}` })

  it.each(table)('%s: its statements, and one Redis round trip for a new caller (the rate limit)', async (_name, request, expected) => {
    // Twice: the first of a shape may prepare what the next reuses.
    await tripsOf(() => t.request(fresh(request())))
    const trips = await tripsOf(() => t.request(fresh(request())))
    expect(trips.statusCode).toBe(200)
    expect(trips.statements).toBe(expected)
    // A script runs in one round trip; MONITOR also shows the commands it runs inside.
    expect(trips.redis.filter((command) => /^(eval|evalsha) /.test(command))).toHaveLength(1)
    expect(trips.redis.filter((command) => !/^(eval|evalsha|set|incrby|pttl|expire) /.test(command))).toEqual([])
  })

  it('asks Redis less as a caller comes back within its window, and reports its allowance exactly as it goes', async () => {
    // An allowance of 300: a lease of up to 18 points, taken 2, 4, 8, then 16 at a time.
    const remoteAddress = '10.78.0.1'
    const answers: string[] = []
    const trips = await tripsOf(async () => {
      for (let i = 0; i < 20; i++) {
        const response = await t.request({ url: `/api/v1/users/${t.bob.id}`, remoteAddress })
        answers.push(String(response.headers['x-ratelimit-remaining']))
      }
      return { statusCode: 200 }
    })
    expect(trips.redis.filter((command) => /^(eval|evalsha) /.test(command))).toHaveLength(5)
    expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => String(299 - i)))
  })
})
