// Property tests: whatever a client sends, the answer is never a 500, and every error is in the
// spec's error body.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import type { LightMyRequestResponse } from 'fastify'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

const RUNS = { numRuns: 150 }

function expectHandled(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBeLessThan(500)
  if (res.statusCode >= 400) {
    const { error } = res.json()
    expect(typeof error.code).toBe('string')
    expect(typeof error.message).toBe('string')
  }
}

/** JSON values shaped like user bodies, with hostile strings, numbers and keys mixed in. */
const userish = fc.record(
  {
    name: fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.integer(), fc.constant(null)),
    email: fc.oneof(fc.emailAddress(), fc.string(), fc.constant('a@b.co')),
    age: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)),
    avatar: fc.oneof(fc.webUrl(), fc.string(), fc.constant(null)),
    role: fc.oneof(fc.constantFrom('user', 'admin', 'root', ''), fc.anything()),
    password: fc.oneof(fc.string(), fc.string({ minLength: 8, maxLength: 300 })),
    extra: fc.anything(),
  },
  { requiredKeys: [] },
)

describe('hostile input', () => {
  it('never answers 500 to any JSON body on POST, PUT and PATCH', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('POST', 'PUT', 'PATCH'), fc.oneof(userish, fc.jsonValue()), async (method, json) => {
        const url = method === 'POST' ? '/users' : `/users/${t.bob.id}`
        const token = method === 'POST' ? t.tokens.admin : t.tokens.bob
        expectHandled(await t.request({ method, url, token, json }))
      }),
      RUNS,
    )
  })

  it('never answers 500 to any bytes as a JSON body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), async (bytes) => {
        expectHandled(
          await t.app.inject({
            method: 'PATCH',
            url: `/users/${t.bob.id}`,
            headers: { authorization: `Bearer ${t.tokens.bob}`, 'content-type': 'application/json' },
            payload: Buffer.from(bytes),
          }),
        )
      }),
      RUNS,
    )
  })

  it('never answers 500 to any path, query string or header', async () => {
    const segment = fc.oneof(fc.string(), fc.integer().map(String), fc.constantFrom('users', 'api', 'v1', 'v2', 'tokens', 'current'))
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 12 }), { maxKeys: 3 }),
        fc.record(
          {
            accept: fc.string(),
            authorization: fc.oneof(fc.string(), fc.string().map((s) => `Bearer ${s}`)),
            'content-type': fc.string(),
            'if-none-match': fc.oneof(fc.string(), fc.constant('*'), fc.string().map((s) => `W/"${s}"`)),
            'if-match': fc.oneof(fc.string(), fc.constant('*')),
            'if-modified-since': fc.oneof(fc.string(), fc.date({ noInvalidDate: true }).map((d) => d.toUTCString())),
            origin: fc.string(),
            'accept-encoding': fc.oneof(fc.string(), fc.constantFrom('gzip', 'br', 'br;q=0, gzip;q=1', 'identity;q=0')),
          },
          { requiredKeys: [] },
        ),
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
        async (segments, query, headers, method) => {
          const path = '/' + segments.map(encodeURIComponent).join('/')
          const search = new URLSearchParams(query).toString()
          const res = await t.app.inject({
            method,
            url: search ? `${path}?${search}` : path,
            headers: Object.fromEntries(Object.entries(headers).filter(([, v]) => /^[\t\x20-\x7e]*$/.test(v))),
          })
          expect(res.statusCode, `${method} ${path}`).toBeLessThan(500)
        },
      ),
      RUNS,
    )
  })

  it('never answers 500 to any collection query, cursors included', async () => {
    const first = await t.request({ method: 'GET', url: '/api/v2/users?limit=1' })
    const realCursor: string = first.json().meta.pagination.nextCursor
    const value = fc.oneof(fc.string(), fc.integer().map(String), fc.constantFrom('null', 'true', '-name', 'name,-age', realCursor))
    const key = fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('page', 'limit', 'cursor', 'sort', 'q', 'fields', 'age', 'role', 'email', 'createdAt'))
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(key, value), { maxLength: 6 }), fc.constantFrom('/users', `/api/v2/users/${t.bob.id}/todos`), async (pairs, path) => {
        const search = new URLSearchParams(pairs).toString()
        expectHandled(await t.request({ method: 'GET', url: `${path}?${search}` }))
      }),
      RUNS,
    )
  })

  it('still serves normally afterwards', async () => {
    const res = await t.request({ method: 'GET', url: `/users/${t.admin.id}` })
    expect(res.statusCode).toBe(200)
  })
})
