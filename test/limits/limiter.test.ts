// The points limiter (src/limits/limiter.ts) on both of its stores, and the Retry-After an
// AppError carries, over REST and GraphQL.
import Fastify from 'fastify'
import { GraphQLError } from 'graphql'
import type { Redis } from 'ioredis'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.js'
import { formatError, requestError } from '../../src/graphql/errors.js'
import { registerErrorHandling } from '../../src/http/error-handler.js'
import { createLimiter, type LimiterOptions } from '../../src/limits/limiter.js'
import { closeRedisConnection, createRedisConnection, firstAttempt } from '../../src/redis/connection.js'
import { freePort, uniquePrefix } from '../helpers/private-redis.js'
import { redisUrl } from '../helpers/services.js'
import { createTestClock } from '../helpers/test-clock.js'

const sharedUrl = await redisUrl()

/** A logger whose lines are kept, to count what a failing store logs. */
function keptLog() {
  const lines: { msg: string }[] = []
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) })
  return { log, lines }
}

const base = (log = keptLog().log): Omit<LimiterOptions, 'redis'> => ({ name: 'test-allowance', points: 10, windowMs: 2000, onStoreError: 'open', log })

let redis: Redis | undefined
beforeAll(async () => {
  if (sharedUrl === undefined) return
  redis = createRedisConnection({ url: sharedUrl, name: 'limiter-test', log: keptLog().log, mode: 'commands' })
  await firstAttempt(redis)
})
afterAll(async () => {
  if (redis !== undefined) await closeRedisConnection(redis)
})

const stores = [
  { store: 'memory', skip: false, redisOf: () => undefined },
  { store: 'Redis', skip: sharedUrl === undefined, redisOf: (keyPrefix: string) => ({ redis: redis as Redis, keyPrefix }) },
] as const

describe.each(stores)('the points limiter in $store', ({ skip, redisOf, store }) => {
  it.skipIf(skip)('takes the points asked for, refuses past the allowance with the seconds to wait, and gives points back', async () => {
    const limiter = createLimiter({ ...base(), redis: redisOf(uniquePrefix()) })
    const first = await limiter.consume('k')
    expect(first).toMatchObject({ allowed: true, limit: 10, remaining: 9 })
    expect(first.resetS).toBeGreaterThanOrEqual(1)
    expect(first.resetS).toBeLessThanOrEqual(2)
    expect(await limiter.consume('k', 7)).toMatchObject({ allowed: true, remaining: 2 })
    const refused = await limiter.consume('k', 3)
    expect(refused).toMatchObject({ allowed: false, limit: 10, remaining: 0 })
    expect(refused.allowed === false && refused.retryAfterS).toBeGreaterThanOrEqual(1)
    // The refused 3 were counted too (11 taken); giving 5 back and taking 1 leaves 3.
    await limiter.reward('k', 5)
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 3 })
    // Another key has an allowance of its own.
    expect(await limiter.consume('other', 10)).toMatchObject({ allowed: true, remaining: 0 })
    expect(limiter.storeErrors).toBe(0)
  })

  it.skipIf(skip)('starts the allowance over when the window ends', async () => {
    const clock = createTestClock()
    const prefix = uniquePrefix()
    const limiter = createLimiter({ ...base(), windowMs: 1000, redis: redisOf(prefix), now: clock.now })
    expect(await limiter.consume('k', 10)).toMatchObject({ allowed: true, remaining: 0 })
    expect((await limiter.consume('k')).allowed).toBe(false)
    // The window ends: in this process by the clock it was given; in Redis when its counter
    // expires, on Redis's own clock (the expiry set is the next test's), which is made to happen now.
    clock.advance(1000)
    if (store === 'Redis') expect(await (redis as Redis).pexpire(`${prefix}test-allowance:k`, 0)).toBe(1)
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 9 })
  })

  it.skipIf(store !== 'memory')('answers at once in this process (consumeNow), sharing the allowance with consume', async () => {
    const limiter = createLimiter({ ...base(), redis: redisOf(uniquePrefix()) })
    expect(limiter.consumeNow?.('k', 4)).toMatchObject({ allowed: true, remaining: 6 })
    expect(await limiter.consume('k', 6)).toMatchObject({ allowed: true, remaining: 0 })
    expect(limiter.consumeNow?.('k')).toMatchObject({ allowed: false, remaining: 0 })
    expect(() => limiter.consumeNow?.('k', 0)).toThrow(/positive integer/)
  })

  it.skipIf(skip || store === 'memory')('keeps its counters in Redis under the key prefix and its name, expiring with the window', async () => {
    const prefix = uniquePrefix()
    const a = createLimiter({ ...base(), redis: redisOf(prefix) })
    const b = createLimiter({ ...base(), redis: redisOf(prefix) })
    await a.consume('ip:10.1.2.3', 4)
    // A second instance on the same Redis and prefix shares the allowance.
    expect(await b.consume('ip:10.1.2.3', 2)).toMatchObject({ remaining: 4 })
    expect(await (redis as Redis).keys(`${prefix}*`)).toEqual([`${prefix}test-allowance:ip:10.1.2.3`])
    const ttl = await (redis as Redis).pttl(`${prefix}test-allowance:ip:10.1.2.3`)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(2000)
  })
})

describe.skipIf(sharedUrl === undefined)('the points limiter in Redis, with leases', () => {
  const leased = (prefix: string, points: number, leaseUpTo: number) =>
    createLimiter({ ...base(), points, windowMs: 60_000, leaseUpTo, redis: { redis: redis as Redis, keyPrefix: prefix } })
  const counted = async (prefix: string, key: string) => Number(await (redis as Redis).get(`${prefix}test-allowance:${key}`))

  it('alone, lets exactly the allowance through and reports what is left as without leases, taking points ahead as the key comes back', async () => {
    const prefix = uniquePrefix()
    const limiter = leased(prefix, 40, 8)
    const verdicts = []
    for (let i = 0; i < 45; i++) verdicts.push(await limiter.consume('k'))
    expect(verdicts.filter((verdict) => verdict.allowed)).toHaveLength(40)
    expect(verdicts.slice(0, 40).map((verdict) => verdict.remaining)).toEqual(Array.from({ length: 40 }, (_, i) => 39 - i))
    expect(verdicts.slice(40).every((verdict) => !verdict.allowed && verdict.remaining === 0)).toBe(true)
    // Answered from the lease: no promise needed, and Redis counted more than was spent.
    const other = leased(prefix, 40, 8)
    await other.consume('j')
    await other.consume('j')
    expect(await counted(prefix, 'j')).toBe(4)
    expect(other.consumeNow?.('j')).toMatchObject({ allowed: true, remaining: 37 })
    expect(other.consumeNow?.('j')).toMatchObject({ allowed: true, remaining: 36 })
    expect(other.consumeNow?.('j')).toBeUndefined()
  })

  it('never lets instances that share Redis past the allowance together, and refuses early by at most their leases', async () => {
    const prefix = uniquePrefix()
    const instances = [leased(prefix, 100, 8), leased(prefix, 100, 8), leased(prefix, 100, 8)]
    let allowed = 0
    // Interleaved, and several at once on each instance.
    for (let i = 0; i < 60; i++) {
      const verdicts = await Promise.all(instances.flatMap((limiter) => [limiter.consume('k'), limiter.consume('k')]))
      allowed += verdicts.filter((verdict) => verdict.allowed).length
    }
    expect(allowed).toBeLessThanOrEqual(100)
    expect(allowed).toBeGreaterThanOrEqual(100 - 3 * 8)
  })

  it('takes ahead at most half of what is left, so the last points go one by one; a refused consume counts its own points only', async () => {
    const prefix = uniquePrefix()
    const limiter = leased(prefix, 10, 8)
    for (let i = 0; i < 9; i++) expect((await limiter.consume('k')).allowed).toBe(true)
    // One point left: the last consume takes it alone, and the next is refused.
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 0 })
    expect((await limiter.consume('k')).allowed).toBe(false)
    expect(await counted(prefix, 'k')).toBe(11)
  })

  it('holds at most its bound ahead of need on one instance, however many consumes of a key are on their way at once', async () => {
    const prefix = uniquePrefix()
    const limiter = leased(prefix, 10_000, 8)
    let spent = 0
    for (let burst = 0; burst < 5; burst++) {
      const verdicts = await Promise.all(Array.from({ length: 20 }, () => limiter.consume('k')))
      spent += verdicts.filter((verdict) => verdict.allowed).length
    }
    expect(spent).toBe(100)
    expect((await counted(prefix, 'k')) - spent).toBeLessThanOrEqual(8)
  })

  it('serves a burst of consumes that find the lease empty from the takes on their way, not by a round trip each', async () => {
    const prefix = uniquePrefix()
    const limiter = leased(prefix, 10_000, 64)
    await limiter.consume('k')
    await limiter.consume('k') // 1 and 2 ahead: a lease of 2
    // The commands that reach Redis for this test's keys, counted as the client sends them.
    const client = redis as Redis
    const send = client.sendCommand.bind(client)
    let sent = 0
    client.sendCommand = (command, ...rest) => {
      if (command.args.some((arg) => String(arg).startsWith(prefix))) sent++
      return send(command, ...rest)
    }
    try {
      const verdicts = await Promise.all(Array.from({ length: 40 }, () => limiter.consume('k')))
      expect(verdicts.every((verdict) => verdict.allowed)).toBe(true)
      // 2 from the lease; of the 38 others, each take of 4 ahead serves the 4 that wait on it
      // besides its own (one round trip each, without them: 38).
      expect(sent).toBeLessThanOrEqual(10)
    } finally {
      client.sendCommand = send
    }
    // What Redis counted beyond the 42 points spent is held ahead, within the bound.
    expect((await counted(prefix, 'k')) - 42).toBeLessThanOrEqual(64)
  })

  it('takes only the points asked for when what it would take ahead no longer fits (another instance spent the rest)', async () => {
    const prefix = uniquePrefix()
    const [a, b] = [leased(prefix, 20, 8), leased(prefix, 20, 8)]
    await a.consume('k')
    await a.consume('k') // 1 and 2 ahead: 4 counted
    expect(a.consumeNow?.('k')?.allowed).toBe(true)
    expect(a.consumeNow?.('k')?.allowed).toBe(true)
    expect((await b.consume('k', 15)).allowed).toBe(true) // 19 counted
    // `a` would take 1 and 4 ahead (24): the 4 are given back, and its own point is the 20th.
    expect(await a.consume('k')).toMatchObject({ allowed: true, remaining: 0 })
    expect(await counted(prefix, 'k')).toBe(20)
    expect((await a.consume('k')).allowed).toBe(false)
    expect(await counted(prefix, 'k')).toBe(21)
  })

  it('gives points back in Redis, where a refused consume counted them (never to the lease: only those under the allowance could be spent again)', async () => {
    const prefix = uniquePrefix()
    const limiter = leased(prefix, 10, 8)
    await limiter.consume('k')
    await limiter.consume('k') // 1 and 2 ahead: 4 counted, 2 held
    expect((await limiter.consume('k', 9)).allowed).toBe(false) // 13 counted
    await limiter.reward('k', 9)
    expect(await counted(prefix, 'k')).toBe(4)
    // The 2 held, and the 6 Redis has left: 8 more, and no further.
    const verdicts = []
    for (let i = 0; i < 9; i++) verdicts.push(await limiter.consume('k'))
    expect(verdicts.map((verdict) => verdict.allowed)).toEqual([...Array<boolean>(8).fill(true), false])
  })
})

describe('the points limiter when its Redis is away', () => {
  let away: Redis
  beforeAll(async () => {
    away = createRedisConnection({ url: `redis://127.0.0.1:${await freePort()}`, name: 'limiter-away', log: keptLog().log, mode: 'commands' })
    await firstAttempt(away)
  })
  afterAll(() => closeRedisConnection(away))

  it("lets actions through uncounted with 'open', logging once per outage and counting each", async () => {
    const { log, lines } = keptLog()
    const limiter = createLimiter({ ...base(log), counts: 'sign-ins', redis: { redis: away, keyPrefix: uniquePrefix() } })
    const verdicts = [await limiter.consume('k'), await limiter.consume('k', 5), await limiter.consume('k')]
    expect(verdicts).toEqual(Array(3).fill({ allowed: true, uncounted: true, limit: 10, remaining: 10, resetS: 0 }))
    await limiter.reward('k')
    expect(limiter.storeErrors).toBe(4)
    expect(lines.map((line) => line.msg)).toEqual(['test-allowance store failing: sign-ins are let through uncounted (logged once until it recovers)'])
  })

  it("refuses with 503 SERVICE_UNAVAILABLE with 'closed'; giving back never throws", async () => {
    const limiter = createLimiter({ ...base(), onStoreError: 'closed', redis: { redis: away, keyPrefix: uniquePrefix() } })
    await expect(limiter.consume('k')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 })
    await expect(limiter.reward('k')).resolves.toBeUndefined()
    expect(limiter.storeErrors).toBe(2)
  })
})

describe('an AppError that says when to retry', () => {
  const spent = () => new AppError('RATE_LIMITED', 'Too many sign-ins; retry in 42 s', undefined, { retryAfterS: 42 })

  it('is answered over REST with Retry-After', async () => {
    const app = Fastify()
    registerErrorHandling(app, { graphql: (error) => ({ errors: [requestError(error)] }) })
    app.get('/spent', () => {
      throw spent()
    })
    app.get('/spent-graphql', { config: { errorBody: 'graphql' } }, () => {
      throw spent()
    })
    try {
      const rest = await app.inject('/spent')
      expect(rest.statusCode).toBe(429)
      expect(rest.headers['retry-after']).toBe('42')
      expect(rest.json()).toEqual({ error: { code: 'RATE_LIMITED', message: 'Too many sign-ins; retry in 42 s' } })
      const graphql = await app.inject('/spent-graphql')
      expect(graphql.headers['retry-after']).toBe('42')
      expect(graphql.json()).toEqual({ errors: [{ message: 'Too many sign-ins; retry in 42 s', extensions: { code: 'RATE_LIMITED', retryAfter: 42 } }] })
    } finally {
      await app.close()
    }
  })

  it('is formatted in GraphQL with extensions.retryAfter, and without it when it does not say', () => {
    const scope = { id: 'req-1', log: keptLog().log }
    const inResolver = new GraphQLError('x', { path: ['signIn'], originalError: spent() })
    expect(formatError(inResolver, scope)).toEqual({
      message: 'Too many sign-ins; retry in 42 s',
      path: ['signIn'],
      extensions: { code: 'RATE_LIMITED', retryAfter: 42 },
    })
    const plain = new GraphQLError('x', { path: ['user'], originalError: new AppError('NOT_FOUND', 'User not found') })
    expect(formatError(plain, scope)).toEqual({ message: 'User not found', path: ['user'], extensions: { code: 'NOT_FOUND' } })
  })
})
