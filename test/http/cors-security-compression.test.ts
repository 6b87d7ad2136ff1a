import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

const ORIGIN = 'https://app.example.com'
let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ CORS_ORIGINS: `${ORIGIN},http://localhost:5173` })
  for (let i = 0; i < 30; i++) await t.createUser({ name: `Filler ${i}`, email: `filler${i}@example.com` })
})
afterAll(() => t.close())

describe('CORS', () => {
  it('answers a preflight from an allowed origin', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: `/users/${t.bob.id}`,
      headers: { origin: ORIGIN, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, content-type, if-match' },
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN)
    expect(res.headers['access-control-allow-methods']).toContain('PATCH')
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('if-match')
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it('exposes the paging, caching and rate-limit headers to the page', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/users?limit=2', headers: { origin: ORIGIN } })
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN)
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/)
    for (const header of ['etag', 'link', 'x-ratelimit-remaining', 'ratelimit', 'retry-after', 'location', 'x-request-id']) {
      expect(exposed).toContain(header)
    }
  })

  it('lets a browser read refusals too', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/users', headers: { origin: ORIGIN, 'content-type': 'application/json' }, payload: '{}' })
    expect(res.statusCode).toBe(401)
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN)
  })

  it('names Origin in Vary beside Accept, Authorization and Accept-Encoding on the GETs it echoes an origin to, REST and GraphQL, 200 and 304', async () => {
    const graphql = `/graphql?${new URLSearchParams({ query: `{ user(id: "${t.bob.id}") { name } }` })}`
    for (const url of [`/users/${t.bob.id}`, '/users?limit=2', graphql]) {
      const first = await t.app.inject({ method: 'GET', url, headers: { origin: ORIGIN } })
      const again = await t.app.inject({ method: 'GET', url, headers: { origin: ORIGIN, 'if-none-match': String(first.headers.etag) } })
      for (const res of [first, again]) {
        expect(res.headers['access-control-allow-origin']).toBe(ORIGIN)
        const vary = String(res.headers.vary)
          .toLowerCase()
          .split(/\s*,\s*/)
          .sort()
        expect({ url, status: res.statusCode, vary }).toEqual({
          url,
          status: res === first ? 200 : 304,
          vary: ['accept', 'accept-encoding', 'authorization', 'origin'],
        })
      }
    }
  })

  it('says nothing to an origin not on the list', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/users', headers: { origin: 'https://evil.example.com' } })
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    expect(res.headers['access-control-expose-headers']).toBeUndefined()
    expect(String(res.headers.vary).toLowerCase()).toContain('origin')
  })

  it("answers another origin's preflight as a plain OPTIONS: 204 with Allow and no CORS header", async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/users',
      headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' },
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers.allow).toBe('GET, HEAD, POST, OPTIONS')
    expect(Object.keys(res.headers).filter((name) => name.startsWith('access-control-'))).toEqual([])
  })

  it('names Origin in Vary when no Origin is sent too: a shared cache must not give that answer to a page', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/users/${t.bob.id}` })
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    expect(
      String(res.headers.vary)
        .toLowerCase()
        .split(/\s*,\s*/),
    ).toContain('origin')
  })

  it('answers a preflight from each origin on the list with that origin, and keeps it 10 minutes', async () => {
    for (const origin of [ORIGIN, 'http://localhost:5173']) {
      const res = await t.app.inject({ method: 'OPTIONS', url: '/graphql', headers: { origin, 'access-control-request-method': 'POST' } })
      expect(res.statusCode).toBe(204)
      expect(res.headers['access-control-allow-origin']).toBe(origin)
      expect(res.headers['access-control-max-age']).toBe('600')
      expect(res.headers['content-length']).toBe('0')
      expect(res.body).toBe('')
    }
  })

  it('sends no CORS headers when no origin is configured', async () => {
    const plain = await buildTestApp()
    try {
      const res = await plain.app.inject({ method: 'GET', url: '/users', headers: { origin: ORIGIN } })
      expect(res.headers['access-control-allow-origin']).toBeUndefined()
    } finally {
      await plain.close()
    }
  })
})

describe('security headers', () => {
  it('are on every answer', async () => {
    for (const url of ['/users', '/users/999999', '/nowhere']) {
      const res = await t.app.inject({ method: 'GET', url })
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'")
      expect(res.headers['referrer-policy']).toBe('no-referrer')
    }
  })
})

describe('compression', () => {
  const list = (encoding?: string) => t.app.inject({ method: 'GET', url: '/users?limit=30', headers: encoding ? { 'accept-encoding': encoding } : {} })

  it('compresses answers over 1 KiB with gzip or br, as the client asks', async () => {
    const identity = await list()
    expect(identity.headers['content-encoding']).toBeUndefined()
    expect(identity.rawPayload.length).toBeGreaterThan(1024)
    const gzip = await list('gzip')
    expect(gzip.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(gzip.rawPayload).toString()).toContain('"pagination"')
    const br = await list('br')
    expect(br.headers['content-encoding']).toBe('br')
    expect(br.rawPayload.length).toBeLessThan(identity.rawPayload.length)
    const decoded = JSON.parse(brotliDecompressSync(br.rawPayload).toString())
    expect(decoded.data).toEqual(identity.json().data)
  })

  it('leaves small answers alone', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/users/${t.bob.id}`, headers: { 'accept-encoding': 'gzip' } })
    expect(res.headers['content-encoding']).toBeUndefined()
  })

  it('keeps the ETag the same whatever the encoding, and 304 works under compression', async () => {
    const identity = await list()
    const gzip = await list('gzip')
    expect(gzip.headers.etag).toBe(identity.headers.etag)
    const again = await t.app.inject({
      method: 'GET',
      url: '/users?limit=30',
      headers: { 'accept-encoding': 'br', 'if-none-match': identity.headers.etag as string },
    })
    expect(again.statusCode).toBe(304)
    expect(again.rawPayload.length).toBe(0)
  })
})
