// Scale-out, end to end: two `threadline serve` processes started at the same moment on one
// PostgreSQL database and one Redis, as behind a load balancer. They migrate and seed once, read
// each other's writes, share one rate-limit allowance, tell each other's subscribers, and give the
// same data the same ETag.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { createClient } from 'graphql-ws'
import { Redis } from 'ioredis'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { BIN, type ServeProcess, startServe } from '../helpers/serve-process.js'
import { postgresUrl, redisUrl } from '../helpers/services.js'
import { freshPostgresDatabase, type TestDatabase } from '../helpers/test-store.js'

const postgres = await postgresUrl()
const redis = await redisUrl()
const run = promisify(execFile)

describe.runIf(postgres !== undefined && redis !== undefined)('two instances on one PostgreSQL and one Redis', () => {
  let database: TestDatabase
  let a: ServeProcess
  let b: ServeProcess
  let env: Record<string, string>
  const prefix = `threadline-test:${process.pid}:${Date.now()}:`

  beforeAll(async () => {
    database = await freshPostgresDatabase()
    env = {
      DATABASE_URL: database.url,
      REDIS_URL: redis as string,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_MAX: '10000',
      RATE_LIMIT_AUTHENTICATED_MAX: '6',
    }
    // At the same moment, on an empty database: one migrates and seeds, the other waits for it.
    const started = await Promise.allSettled([startServe(env), startServe(env)])
    const failed = started.find((result) => result.status === 'rejected')
    if (failed !== undefined) {
      for (const result of started) if (result.status === 'fulfilled') await result.value.stop()
      throw failed.reason
    }
    ;[a, b] = started.map((result) => (result as PromiseFulfilledResult<ServeProcess>).value) as [ServeProcess, ServeProcess]
  }, 60_000)

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await database?.drop()
    const client = new Redis(redis as string)
    const keys = await client.keys(`${prefix}*`)
    if (keys.length > 0) await client.del(...keys)
    client.disconnect()
  })

  const call = async (base: string, method: 'GET' | 'POST', path: string, options: { token?: string; json?: unknown } = {}) => {
    const res = await request(`${base}${path}`, {
      method,
      headers: {
        ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
        ...(options.json === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
    })
    return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as { data?: Record<string, unknown>; error?: { code: string } } }
  }
  const tokenFor = async (user: number) =>
    (await run(process.execPath, [BIN, 'tokens', 'create', '--user', String(user)], { env: { PATH: process.env.PATH, ...env } })).stdout.trim()

  it('migrated and seeded the demo data once', async () => {
    const users = await call(a.address, 'GET', '/api/v1/users?limit=100')
    expect((users.body as { meta: { pagination: { total: number } } } & typeof users.body).meta.pagination.total).toBe(10)
  })

  it('reads on one what was written on the other, with the same ETag', async () => {
    const token = await tokenFor(1)
    const created = await call(a.address, 'POST', '/api/v1/users', { token, json: { name: 'Written on A', email: 'written-on-a@example.com' } })
    expect(created.status).toBe(201)
    const id = (created.body.data as { id: number }).id
    const [onA, onB] = await Promise.all([call(a.address, 'GET', `/api/v1/users/${id}`), call(b.address, 'GET', `/api/v1/users/${id}`)])
    expect(onB.status).toBe(200)
    expect(onB.body.data).toEqual(onA.body.data)
    expect(onB.headers.etag).toBeDefined()
    expect(onB.headers.etag).toBe(onA.headers.etag)
  })

  it('tells a subscriber on one instance of a comment made on the other', async () => {
    const token = await tokenFor(2)
    const client = createClient({ url: `${a.address.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 })
    const received: string[] = []
    const unsubscribe = client.subscribe<{ commentAdded: { content: string } }>(
      { query: 'subscription { commentAdded { content } }' },
      { next: (value) => received.push(value.data?.commentAdded.content ?? '?'), error: () => undefined, complete: () => undefined },
    )
    try {
      // Written on A first, until A's subscriber hears one: the subscription is in place.
      const comment = (base: string, content: string) => call(base, 'POST', '/api/v1/users/1/posts/1/comments', { token, json: { content } })
      for (let i = 0; i < 25 && received.length === 0; i++) {
        expect((await comment(a.address, 'on A')).status).toBe(201)
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(received[0]).toBe('on A')
      expect((await comment(b.address, 'on B')).status).toBe(201)
      await expect.poll(() => received.at(-1), { timeout: 5000 }).toBe('on B')
    } finally {
      unsubscribe()
      await client.dispose()
    }
  })

  it('counts one allowance across both instances', async () => {
    const token = await tokenFor(3)
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      statuses.push((await call(a.address, 'GET', '/api/v1/users/3', { token })).status)
      statuses.push((await call(b.address, 'GET', '/api/v1/users/3', { token })).status)
    }
    // Six requests a window for a signed-in user, wherever they land.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429])
    const refused = await call(b.address, 'GET', '/api/v1/users/3', { token })
    expect(refused.body.error?.code).toBe('RATE_LIMITED')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
  })
})
