// The smaller defects a scanner finds (docs/security.md, API8): what an unknown path, an unknown method, a bare
// OPTIONS and a refused encoding are answered, with and without CORS.
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

const ORIGIN = 'https://app.example.com'

/** Every refusal leaves in the service's error body (docs/rest.md, Envelopes and errors). */
function expectErrorBody(body: string, code: string) {
  const parsed = JSON.parse(body)
  expect(Object.keys(parsed)).toEqual(['error'])
  expect(parsed.error.code).toBe(code)
}

let plain: TestApp
let cors: TestApp
beforeAll(async () => {
  plain = await buildTestApp()
  cors = await buildTestApp({ CORS_ORIGINS: ORIGIN, GRAPHQL_INTROSPECTION: 'false', GRAPHIQL: 'false' })
})
afterAll(async () => {
  await plain.close()
  await cors.close()
})

describe('unknown paths with CORS on', () => {
  it.each(['/nowhere', '/api/v1/nothing-here', '/graphql/schema.graphql', '/graphiql'])('answers GET %s 404 NOT_FOUND, not 405', async (url) => {
    const res = await cors.app.inject({ method: 'GET', url })
    expect(res.statusCode).toBe(404)
    expect(res.headers.allow).toBeUndefined()
    expectErrorBody(res.body, 'NOT_FOUND')
  })

  it('answers other methods on an unknown path 404 too, and an OPTIONS without a preflight', async () => {
    for (const method of ['POST', 'DELETE', 'OPTIONS'] as const) {
      const res = await cors.app.inject({ method, url: '/nowhere' })
      expect(res.statusCode, method).toBe(404)
      expectErrorBody(res.body, 'NOT_FOUND')
    }
  })

  it('still answers a preflight to any path', async () => {
    const res = await cors.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/users',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN)
    expect(res.headers['access-control-allow-methods']).toContain('POST')
  })

  it('keeps 405 with Allow for a known path', async () => {
    const res = await cors.app.inject({ method: 'DELETE', url: '/api/v1/users', headers: { authorization: `Bearer ${cors.tokens.admin}` } })
    expect(res.statusCode).toBe(405)
    expect(res.headers.allow).toBe('GET, HEAD, POST, OPTIONS')
    expectErrorBody(res.body, 'METHOD_NOT_ALLOWED')
  })
})

describe('a bare OPTIONS (no preflight) with CORS on', () => {
  it.each([
    ['no Origin', {}],
    ['an Origin but no Access-Control-Request-Method', { origin: ORIGIN }],
  ])('answers 204 with Allow to %s, as without CORS', async (_name, headers: Record<string, string>) => {
    const res = await cors.app.inject({ method: 'OPTIONS', url: '/api/v1/users', headers })
    expect(res.statusCode).toBe(204)
    expect(res.headers.allow).toBe('GET, HEAD, POST, OPTIONS')
    expect(res.body).toBe('')
    const without = await plain.app.inject({ method: 'OPTIONS', url: '/api/v1/users', headers })
    expect(without.statusCode).toBe(204)
    expect(without.headers.allow).toBe(res.headers.allow)
  })
})

describe('methods the path does not serve', () => {
  it.each([
    ['TRACE', '/api/v1/users', 'GET, HEAD, POST, OPTIONS'],
    ['PROPFIND', '/api/v1/users', 'GET, HEAD, POST, OPTIONS'],
    ['MKCOL', '/users', 'GET, HEAD, POST, OPTIONS'],
    ['QUERY', '/api/v1/users', 'GET, HEAD, POST, OPTIONS'],
    ['TRACE', '/health', 'GET, HEAD, OPTIONS'],
  ])('answers %s %s 405 with Allow', async (method, url, allow) => {
    for (const t of [plain, cors]) {
      const res = await t.app.inject({ method: method as 'GET', url, headers: { 'content-type': 'application/json' } })
      expect(res.statusCode, `${method} ${url}`).toBe(405)
      expect(res.headers.allow).toBe(allow)
      expectErrorBody(res.body, 'METHOD_NOT_ALLOWED')
    }
  })

  it('answers an unknown method on an unknown path 404', async () => {
    for (const method of ['TRACE', 'PROPFIND']) {
      const res = await plain.app.inject({ method: method as 'GET', url: '/nowhere' })
      expect(res.statusCode, method).toBe(404)
      expectErrorBody(res.body, 'NOT_FOUND')
    }
  })
})

describe('Accept-Encoding', () => {
  beforeAll(async () => {
    for (let i = 0; i < 30; i++) await plain.createUser({ name: `Filler ${i}`, email: `filler${i}@example.com` })
  })
  const list = (encoding: string) => plain.app.inject({ method: 'GET', url: '/api/v1/users?limit=100', headers: { 'accept-encoding': encoding } })

  it.each(['br;q=0, gzip;q=0, *;q=1', 'gzip;q=0, br;q=0', 'br;q=0, gzip;q=0', '*;q=0, identity'])(
    'sends no encoding the client refused (%s)',
    async (encoding) => {
      const res = await list(encoding)
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-encoding']).toBeUndefined()
      expect(res.rawPayload.length).toBeGreaterThan(1024)
      expect(res.json().data.length).toBeGreaterThan(30)
    },
  )

  it.each([
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0, *', 'gzip'],
    ['gzip;q=0, *', 'br'],
    ['gzip;q=0.5, br;q=0.1', 'gzip'],
  ])('picks an encoding the client accepts (%s → %s)', async (encoding, expected) => {
    const res = await list(encoding)
    expect(res.headers['content-encoding']).toBe(expected)
    if (expected === 'gzip') expect(JSON.parse(gunzipSync(res.rawPayload).toString()).data.length).toBeGreaterThan(30)
  })
})
