// Runs once, on SQLite: the allowance is counted in memory or Redis, never in the database.
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { registerRateLimit } from '../../src/http/rate-limit-hooks.js'
import { createRateLimit } from '../../src/limits/rate-limit.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_MAX: '4', RATE_LIMIT_AUTHENTICATED_MAX: '6', RATE_LIMIT_WINDOW_S: '1' })
})
afterAll(() => t.close())

/** A request from its own client address, so each test starts with a fresh allowance. */
let nextAddress = 1
const newClient = () => `10.0.0.${nextAddress++}`
const from = (remoteAddress: string, url = '/users', headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, remoteAddress, headers })

/** Moves the app's clock past the 1 s window: every allowance starts over. */
const nextWindow = () => t.clock.advance(1000)

describe('rate limiting', () => {
  it('says where the caller stands on every answer: 200, 304 and errors alike', async () => {
    const client = newClient()
    const ok = await from(client)
    const notModified = await from(client, '/users', { 'if-none-match': ok.headers.etag as string })
    const missing = await from(client, '/users/999999')
    const invalid = await from(client, '/users?limit=0')
    expect([ok.statusCode, notModified.statusCode, missing.statusCode, invalid.statusCode]).toEqual([200, 304, 404, 400])
    ;[ok, notModified, missing, invalid].forEach((res, i) => {
      expect(res.headers['x-ratelimit-limit']).toBe('4')
      expect(res.headers['x-ratelimit-remaining']).toBe(String(3 - i))
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(0)
      expect(Number(res.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(1)
      expect(res.headers['ratelimit-policy']).toBe('"anonymous";q=4;w=1')
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"anonymous";r=${3 - i};t=[01]$`))
    })
  })

  it('answers 429 RATE_LIMITED with Retry-After past the allowance, and lets the caller in again after the window', async () => {
    const client = newClient()
    for (let i = 0; i < 4; i++) expect((await from(client)).statusCode).toBe(200)
    const refused = await from(client)
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.code).toBe('RATE_LIMITED')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(refused.headers['x-ratelimit-remaining']).toBe('0')
    nextWindow()
    expect((await from(client)).statusCode).toBe(200)
  })

  it('counts each client address separately', async () => {
    const greedy = newClient()
    for (let i = 0; i < 5; i++) await from(greedy)
    expect((await from(greedy)).statusCode).toBe(429)
    expect((await from(newClient())).statusCode).toBe(200)
  })

  it('counts an IPv6 client by its /64, so it cannot step around the allowance', async () => {
    nextWindow()
    const statuses: number[] = []
    for (let i = 1; i <= 5; i++) statuses.push((await from(`2001:db8:1:2::${i}`)).statusCode)
    expect(statuses).toEqual([200, 200, 200, 200, 429])
    expect((await from('2001:db8:1:3::1')).statusCode).toBe(200)
  })

  it('counts a signed-in user by user, with the larger allowance, wherever they call from', async () => {
    nextWindow()
    const token = await t.tokenFor(t.alice.id)
    const statuses: number[] = []
    for (let i = 0; i < 7; i++) {
      const res = await from(newClient(), '/users', { authorization: `Bearer ${token}` })
      statuses.push(res.statusCode)
      if (i === 0) expect(res.headers['ratelimit-policy']).toBe('"signed-in";q=6;w=1')
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429])
  })

  it('counts requests with a bad token against the client address', async () => {
    const client = newClient()
    const bad = { authorization: 'Bearer tl_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }
    for (let i = 0; i < 4; i++) expect((await from(client, '/users', bad)).statusCode).toBe(401)
    expect((await from(client, '/users', bad)).statusCode).toBe(429)
  })
})

describe('rate limiting off', () => {
  it('sends no rate-limit headers and refuses nothing with RATE_LIMIT_MAX=0', async () => {
    const off = await buildTestApp({ RATE_LIMIT_MAX: '0' })
    try {
      for (let i = 0; i < 10; i++) {
        const res = await off.app.inject({ method: 'GET', url: '/users' })
        expect(res.statusCode).toBe(200)
        expect(res.headers['x-ratelimit-limit']).toBeUndefined()
      }
    } finally {
      await off.close()
    }
  })
})

describe('answers given before the rate limit could look at them', () => {
  const ORIGIN = 'https://app.example.com'
  let c: TestApp
  beforeAll(async () => {
    // A long window, so no test crosses into the next one.
    c = await buildTestApp({ RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_S: '60', CORS_ORIGINS: ORIGIN })
  })
  afterAll(() => c.close())
  const get = (remoteAddress: string, url = '/users') => c.app.inject({ method: 'GET', url, remoteAddress })
  const preflight = (remoteAddress: string) =>
    c.app.inject({ method: 'OPTIONS', url: '/users', remoteAddress, headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } })

  it('counts a malformed URL (answered before routing) and says where the caller stands; past the allowance it is 429', async () => {
    const client = newClient()
    const malformed = await get(client, '/api/v1/users/%')
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.code).toBe('BAD_REQUEST')
    expect(malformed.headers['x-ratelimit-limit']).toBe('4')
    expect(malformed.headers['x-ratelimit-remaining']).toBe('3')
    expect(malformed.headers['ratelimit-policy']).toBe('"anonymous";q=4;w=60')
    expect((await get(client)).headers['x-ratelimit-remaining']).toBe('2')
    for (let i = 0; i < 2; i++) await get(client, '/api/v1/users/%')
    const refused = await get(client, '/api/v1/users/%')
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.code).toBe('RATE_LIMITED')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(refused.headers['x-ratelimit-remaining']).toBe('0')
  })

  it('counts a CORS preflight (answered by the CORS hook before the limit) and says where the caller stands; past the allowance it is 429', async () => {
    const client = newClient()
    const first = await preflight(client)
    expect(first.statusCode).toBe(204)
    expect(first.headers['access-control-allow-origin']).toBe(ORIGIN)
    expect(first.headers['x-ratelimit-limit']).toBe('4')
    expect(first.headers['x-ratelimit-remaining']).toBe('3')
    expect(first.headers.ratelimit).toMatch(/^"anonymous";r=3;t=\d+$/)
    expect((await get(client)).headers['x-ratelimit-remaining']).toBe('2')
    expect((await preflight(client)).headers['x-ratelimit-remaining']).toBe('1')
    expect((await preflight(client)).statusCode).toBe(204)
    const refused = await preflight(client)
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error).toEqual({ code: 'RATE_LIMITED', message: expect.stringMatching(/^Too many requests: 4 per 60 s\. Retry in \d+ s\.$/) })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(refused.headers['x-ratelimit-remaining']).toBe('0')
  })
})

describe('points outside an HTTP request', () => {
  it('takes the points a WebSocket message asks (consume(request, points)) from the same allowance, and refuses past it with the seconds to wait', async () => {
    const app = Fastify()
    const limit = createRateLimit({ max: 10, authenticatedMax: 10, windowMs: 60_000, onStoreError: 'open' }, { log: app.log })
    registerRateLimit(app, limit)
    app.get('/message', async (request) => limit.consume?.(request, Number((request.query as { points: string }).points)))
    try {
      const send = (points: number) => app.inject({ url: `/message?points=${points}`, remoteAddress: '10.6.0.1' })
      const first = await send(4)
      // The request's own point, then the message's 4.
      expect(first.json()).toEqual({ allowed: true })
      expect(first.headers['x-ratelimit-remaining']).toBe('9')
      expect((await send(3)).headers['x-ratelimit-remaining']).toBe('4')
      // 1 left: the request takes it, and the message's 4 are refused.
      const last = await send(4)
      expect([last.statusCode, last.headers['x-ratelimit-remaining']]).toEqual([200, '0'])
      const refused = last.json()
      expect(refused).toMatchObject({ allowed: false, error: { code: 'RATE_LIMITED' } })
      expect(refused.retryAfterS).toBeGreaterThanOrEqual(1)
    } finally {
      await app.close()
    }
  })
})
