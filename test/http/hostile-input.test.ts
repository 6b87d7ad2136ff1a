// Property tests: whatever a client sends, the answer is never a 500, and every error is in the
// service's error body. Then the values SQLite would take and PostgreSQL refuses, one by one.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, type Factories } from '../helpers/factories.js'
import { fuzzRuns } from '../helpers/fuzz.js'
import type { LightMyRequestResponse } from 'fastify'
import { parseCollectionQuery } from '../../src/collections/collection-query.js'
import { encodeCursor, type KeyValue } from '../../src/collections/cursor.js'
import { UsersCollection } from '../../src/users/users.schemas.js'

let t: TestApp
let make: Factories
beforeAll(async () => {
  t = await buildTestApp()
  make = createFactories(t)
})
afterAll(() => t.close())

const RUNS = fuzzRuns(300)

function expectHandled(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBeLessThan(500)
  if (res.statusCode >= 400) {
    const { error } = res.json()
    expect(typeof error.code).toBe('string')
    expect(typeof error.message).toBe('string')
  }
}

// The values one store takes and the other refuses: the whole of Unicode (NUL and lone surrogates
// included), integers beyond 32 bits, and date-times in years 0 and 10000 or on days no month has.
const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.oneof(fc.constantFrom('\u0000', '\ud800', '\u202e', '%', '_', '\\'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })) }),
)
const anyInteger = fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.constantFrom(2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 53, 1e15, -1e15))
const twoDigits = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'))
const anyDateTime = fc
  .tuple(
    fc.oneof(fc.constantFrom(0, 1, 9999, 10000), fc.integer({ min: 0, max: 10000 })),
    twoDigits(13),
    twoDigits(32),
    twoDigits(24),
    twoDigits(60),
    fc.constantFrom('Z', '+00:00', '+01:00', '-02:00', '+23:59', '-23:59', '.999Z', ':59.999999999-00:01'),
  )
  .map(([year, month, day, hour, minute, rest]) => `${String(year).padStart(4, '0')}-${month}-${day}T${hour}:${minute}${rest}`)
/** Instants as a cursor holds them (toISOString), from year 0 to year 10000. */
const anyInstant = fc
  .date({ min: new Date('0000-01-01T00:00:00.000Z'), max: new Date('+010000-12-31T23:59:59.999Z'), noInvalidDate: true })
  .map((date) => date.toISOString())

/** X-Forwarded-For as proxies write it, as a client forges it, and as nothing writes it. */
const forwardedFor = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc
    .array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('unknown', '_hidden', '[::1]:80', '1.2.3.4:5678', '')), { minLength: 1, maxLength: 5 })
    .map((hops) => hops.join(', ')),
  fc.string({ maxLength: 60 }).filter((value) => /^[\t\x20-\x7e]*$/.test(value)),
  fc.constantFrom('999.999.999.999', '::ffff:127.0.0.1', '0.0.0.0', ', , ,', `${'1.1.1.1, '.repeat(500)}2.2.2.2`),
)

/** JSON values shaped like user bodies, with hostile strings, numbers and keys mixed in. */
const userish = fc.record(
  {
    name: fc.oneof(anyText, fc.integer(), fc.constant(null)),
    email: fc.oneof(
      fc.emailAddress(),
      anyText,
      anyText.map((local) => `${local}@example.com`),
      fc.constant('a@b.co'),
    ),
    age: fc.oneof(anyInteger, fc.double(), fc.string(), fc.constant(null)),
    avatar: fc.oneof(
      fc.webUrl(),
      anyText,
      anyText.map((path) => `https://example.com/${path}`),
      fc.constant(null),
    ),
    role: fc.oneof(fc.constantFrom('user', 'admin', 'root', ''), fc.anything()),
    password: fc.oneof(
      anyText,
      fc.string({ minLength: 8, maxLength: 300 }),
      anyText.map((text) => `password${text}`),
    ),
    extra: fc.anything(),
  },
  { requiredKeys: [] },
)

/** Bodies for the other resources' writes. */
const otherish = fc.record(
  {
    title: fc.oneof(anyText, fc.integer()),
    content: fc.oneof(anyText, fc.constant(null)),
    text: anyText,
    status: fc.oneof(fc.constantFrom('draft', 'published'), anyText),
    completed: fc.oneof(fc.boolean(), anyText),
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

  it('never answers 500 to any JSON body for posts, comments and todos', async () => {
    const posts = `/users/${t.alice.id}/posts`
    const post = `${posts}/${(await make.post(t.alice)).id}`
    const todo = (await make.todo(t.bob)).id
    const targets = fc.constantFrom<{ method: 'POST' | 'PUT' | 'PATCH'; url: string; token: string }>(
      { method: 'POST', url: posts, token: t.tokens.alice },
      { method: 'PUT', url: post, token: t.tokens.alice },
      { method: 'PATCH', url: post, token: t.tokens.alice },
      { method: 'POST', url: `${post}/comments`, token: t.tokens.bob },
      { method: 'POST', url: `/users/${t.bob.id}/todos`, token: t.tokens.bob },
      { method: 'PATCH', url: `/users/${t.bob.id}/todos/${todo}`, token: t.tokens.bob },
    )
    await fc.assert(
      fc.asyncProperty(targets, fc.oneof(otherish, fc.jsonValue()), async (target, json) => {
        expectHandled(await t.request({ ...target, json }))
      }),
      RUNS,
    )
  })

  it('never answers 500 to any credentials', async () => {
    const credentials = fc.record({
      email: fc.oneof(
        anyText,
        anyText.map((local) => `${local}@example.com`),
      ),
      password: anyText,
    })
    await fc.assert(
      fc.asyncProperty(fc.oneof(credentials, fc.jsonValue()), async (json) => {
        expectHandled(await t.request({ method: 'POST', url: '/tokens', json }))
      }),
      // Fewer: every well-formed attempt costs a scrypt (a decoy one for an unknown e-mail).
      fuzzRuns(100),
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

  it('never answers 500 to any X-Forwarded-For when proxies are trusted, and counts each client address apart', async () => {
    // Behind a proxy the address comes from the header: it keys the rate limit of anonymous callers.
    const proxied = await buildTestApp({ TRUST_PROXY: 'true', RATE_LIMIT_MAX: '1000000' })
    const remaining = async (forwardedFor: string) =>
      Number(
        (await proxied.app.inject({ method: 'GET', url: '/api/v1/users/1', headers: { 'x-forwarded-for': forwardedFor } })).headers['x-ratelimit-remaining'],
      )
    try {
      await fc.assert(
        fc.asyncProperty(forwardedFor, fc.constantFrom('/api/v1/users/1', '/api/v1/users?limit=1', '/graphql?query=%7B__typename%7D'), async (header, url) => {
          const res = await proxied.app.inject({ method: 'GET', url, headers: { 'x-forwarded-for': header } })
          expect(res.statusCode, `${header} ${res.body}`).toBeLessThan(500)
        }),
        RUNS,
      )
      // The client is the first address of the chain: the same one is counted on, another apart.
      const first = await remaining('203.0.113.7, 10.0.0.1')
      expect(await remaining('203.0.113.7, 10.0.0.2')).toBe(first - 1)
      expect(await remaining('198.51.100.9')).toBe(999_999)
    } finally {
      await proxied.close()
    }
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
            authorization: fc.oneof(
              fc.string(),
              fc.string().map((s) => `Bearer ${s}`),
            ),
            'content-type': fc.string(),
            'if-none-match': fc.oneof(
              fc.string(),
              fc.constant('*'),
              fc.string().map((s) => `W/"${s}"`),
            ),
            'if-match': fc.oneof(fc.string(), fc.constant('*')),
            'if-modified-since': fc.oneof(
              fc.string(),
              fc.date({ noInvalidDate: true }).map((d) => d.toUTCString()),
            ),
            origin: fc.string(),
            'accept-encoding': fc.oneof(fc.string(), fc.constantFrom('gzip', 'br', 'br;q=0, gzip;q=1', 'identity;q=0')),
            'x-forwarded-for': forwardedFor,
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
    const value = fc.oneof(
      anyText,
      anyInteger.map(String),
      fc.bigInt().map(String),
      anyDateTime,
      fc.constantFrom('null', 'true', '-name', 'name,-age', realCursor),
    )
    const key = fc.oneof(
      fc.string({ maxLength: 10 }),
      fc.constantFrom('page', 'limit', 'cursor', 'sort', 'q', 'fields', 'id', 'age', 'name', 'role', 'email', 'createdAt', 'text', 'completed', 'userId'),
    )
    // Besides any key with any value, each type's fields with the values that stretch that type.
    const pair = fc.oneof(
      fc.tuple(key, value),
      fc.tuple(fc.constantFrom('id', 'age', 'userId', 'page', 'limit'), fc.oneof(anyInteger.map(String), fc.bigInt().map(String))),
      fc.tuple(fc.constantFrom('createdAt', 'updatedAt', 'publishedAt'), fc.oneof(anyDateTime, anyInstant)),
      fc.tuple(fc.constantFrom('name', 'email', 'title', 'text', 'q', 'sort', 'fields'), anyText),
    )
    const paths = fc.constantFrom('/users', `/api/v2/users/${t.bob.id}/todos`, `/api/v1/users/${t.alice.id}/posts`)
    await fc.assert(
      // Short queries too: one bad parameter is a 400 that keeps the others from the database.
      fc.asyncProperty(fc.oneof(fc.array(pair, { maxLength: 6 }), fc.array(pair, { minLength: 1, maxLength: 2 })), paths, async (pairs, path) => {
        const search = new URLSearchParams(pairs).toString()
        expectHandled(await t.request({ method: 'GET', url: `${path}?${search}` }))
      }),
      RUNS,
    )
  })

  it('never answers 500 to a cursor made with the real encoder, whatever values it carries', async () => {
    // Cursors are not signed and the fingerprint is public: the values are what the server checks.
    const cursorValue: fc.Arbitrary<KeyValue> = fc.oneof(anyInteger, fc.double(), anyText, anyInstant, anyDateTime, fc.boolean(), fc.constant(null))
    const sorted = fc.constantFrom('', 'age', '-name', 'createdAt', '-updatedAt,age', 'role,name', 'email').chain((sort) => {
      const keys = sort === '' ? 1 : sort.split(',').length + 1
      return fc.tuple(fc.constant(sort), fc.array(cursorValue, { minLength: keys, maxLength: keys }), fc.constantFrom<'after' | 'before'>('after', 'before'))
    })
    await fc.assert(
      fc.asyncProperty(sorted, fc.constantFrom<Record<string, string>>({}, { role: 'user' }, { q: 'a' }), async ([sort, values, direction], rest) => {
        const raw: Record<string, string> = { ...rest, ...(sort === '' ? {} : { sort }) }
        const { fingerprint } = parseCollectionQuery(UsersCollection, raw, { defaultMode: 'cursor', withTotal: false, scope: '' })
        const cursor = encodeCursor({ direction, values }, fingerprint)
        expectHandled(await t.request({ method: 'GET', url: `/api/v2/users?${new URLSearchParams({ ...raw, cursor }).toString()}` }))
      }),
      RUNS,
    )
  })

  it('still serves normally afterwards', async () => {
    const res = await t.request({ method: 'GET', url: `/users/${t.admin.id}` })
    expect(res.statusCode).toBe(200)
  })
})

/** The answer is a 4xx in the service's error shape, with `code` and one detail naming `field`. */
function expectRefused(res: LightMyRequestResponse, status: number, code: string, field: string) {
  expect(res.statusCode, res.body).toBe(status)
  const { error } = res.json()
  expect(error.code).toBe(code)
  expect(typeof error.message).toBe('string')
  expect(error.details.map((detail: { field: string }) => detail.field)).toContain(field)
}

// Values SQLite's loose typing would take but PostgreSQL's typed columns refuse (integer, timestamptz,
// text without NUL): the parser and the schemas refuse them first, so both stores answer alike.
describe('values no column of either store can hold', () => {
  let post: number
  beforeAll(async () => {
    const created = await make.post(t.alice)
    post = created.id
    await make.comment(created, t.bob)
  })

  const INTEGER = 'must be an integer from -2147483648 to 2147483647'
  const INSTANT = 'must be an ISO 8601 date-time in the years 0001 to 9999'
  const TEXT = 'must be text without NUL characters'
  // {alice}, {bob} and {post} are filled in: the ids exist only once beforeAll has run.
  it.each([
    ['/api/v1/users?age=99999999999', 'age', `${INTEGER} (or null)`],
    ['/api/v1/users?age=-999999999999999', 'age', `${INTEGER} (or null)`],
    ['/api/v1/users?age=2147483648', 'age', `${INTEGER} (or null)`],
    ['/api/v1/users?id=99999999999', 'id', INTEGER],
    ['/api/v1/users?id=-2147483649', 'id', INTEGER],
    ['/api/v1/users/{bob}/todos?id=99999999999', 'id', INTEGER],
    ['/api/v1/users/{alice}/posts/{post}/comments?authorId=99999999999', 'authorId', `${INTEGER} (or null)`],
    ['/api/v1/users?createdAt=0000-01-01T00:00Z', 'createdAt', INSTANT],
    ['/api/v1/users?createdAt=0001-01-01T00:30%2B01:00', 'createdAt', INSTANT],
    ['/api/v1/users?createdAt=9999-12-31T23:00-02:00', 'createdAt', INSTANT],
    ['/api/v1/users?createdAt=2024-02-31T00:00Z', 'createdAt', INSTANT],
    ['/api/v1/users/{alice}/posts?publishedAt=0000-06-01T00:00Z', 'publishedAt', `${INSTANT} (or null)`],
    ['/api/v1/users?name=%00', 'name', TEXT],
    ['/api/v1/users?email=a%00@x.com', 'email', TEXT],
    ['/api/v1/users/{alice}/posts?title=a%00', 'title', TEXT],
    ['/api/v1/users?q=a%00b', 'q', 'must not contain NUL characters'],
    ['/api/v1/users/{alice}/posts/{post}/comments?q=%00', 'q', 'must not contain NUL characters'],
  ])('answers GET %s with 400 naming the parameter', async (template, field, message) => {
    const ids: Record<string, number> = { alice: t.alice.id, bob: t.bob.id, post }
    const url = template.replace(/\{(\w+)\}/g, (_, name: string) => String(ids[name]))
    const res = await t.request({ method: 'GET', url })
    expectRefused(res, 400, 'BAD_REQUEST', field)
    expect(res.json().error.details).toEqual([{ field, message }])
  })

  it('serves the bounds themselves', async () => {
    for (const query of [
      'age=2147483647',
      'age=-2147483648',
      'id=2147483647',
      'createdAt=0001-01-01T00:00Z',
      'createdAt=9999-12-31T23:59:59.999Z',
      'createdAt=2024-02-29T00:00Z',
      'q=%01',
    ]) {
      const res = await t.request({ method: 'GET', url: `/api/v1/users?${query}` })
      expect(res.statusCode, query).toBe(200)
      expect(res.json().data, query).toEqual([])
    }
  })

  // The fingerprint is public (anyone can compute it from the query), so a cursor is only as safe as
  // the check of its values: each case's twin with values in range is served, so the 400 is the values'.
  it.each([
    ['the id', '', [1e15], [1]],
    ['an integer', 'age', [1e12, 1], [30, 1]],
    ['a negative integer', '-age', [-(2 ** 31) - 1, 1], [30, 1]],
    ['an instant in year 0', 'createdAt', ['0000-01-01T00:00:00.000Z', 1], ['2024-01-01T00:00:00.000Z', 1]],
    ['an instant in year 10000', '-createdAt', ['+010000-01-01T00:00:00.000Z', 1], ['2024-01-01T00:00:00.000Z', 1]],
    ['text with NUL', 'name', ['a\u0000', 1], ['a', 1]],
  ])('answers 400 to a cursor made with the real encoder carrying %s out of range', async (_what, sort, values, inRange) => {
    const raw: Record<string, string> = sort === '' ? {} : { sort }
    const { fingerprint } = parseCollectionQuery(UsersCollection, raw, { defaultMode: 'cursor', withTotal: false, scope: '' })
    const page = (cursorValues: (string | number)[]) => {
      const cursor = encodeCursor({ direction: 'after', values: cursorValues }, fingerprint)
      return t.request({ method: 'GET', url: `/api/v2/users?${new URLSearchParams({ ...raw, cursor }).toString()}` })
    }
    expectRefused(await page(values), 400, 'BAD_REQUEST', 'cursor')
    expect((await page(inRange)).statusCode).toBe(200)
  })

  it('answers a sign-in with NUL in the e-mail 422, as a body that is not valid', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/tokens', json: { email: 'a\u0000b', password: 'x' } })
    expectRefused(res, 422, 'VALIDATION_ERROR', 'email')
    expect((await t.request({ method: 'POST', url: '/api/v1/tokens', json: { email: 'not-an-address', password: 'x' } })).statusCode).toBe(401)
  })

  it('answers 400 to a body that is not UTF-8, and stores nothing; takes UTF-8 beyond ASCII as sent', async () => {
    const url = `/api/v1/users/${t.bob.id}/todos`
    const send = (payload: Buffer, contentType = 'application/json') =>
      t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t.tokens.bob}`, 'content-type': contentType }, payload })
    const before = (await t.request({ method: 'GET', url, token: t.tokens.bob })).json().data.length
    for (const bytes of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const payload = Buffer.concat([Buffer.from('{"text":"milk'), Buffer.from(bytes), Buffer.from('"}')])
      for (const contentType of ['application/json', 'application/json; charset=utf-8']) {
        const res = await send(payload, contentType)
        expect(res.statusCode, `${bytes.join(',')} as ${contentType}`).toBe(400)
        expect(res.json().error).toEqual({ code: 'BAD_REQUEST', message: 'The request body is not valid UTF-8' })
      }
    }
    const merge = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${t.bob.id}`,
      headers: { authorization: `Bearer ${t.tokens.bob}`, 'content-type': 'application/merge-patch+json' },
      payload: Buffer.concat([Buffer.from('{"name":"B'), Buffer.from([0xff]), Buffer.from('b"}')]),
    })
    expect(merge.statusCode).toBe(400)
    expect((await t.request({ method: 'GET', url, token: t.tokens.bob })).json().data.length).toBe(before)
    expect((await t.request({ method: 'GET', url: `/api/v1/users/${t.bob.id}` })).json().data.name).toBe('Bob')
    const fine = await send(Buffer.from('{"text":"Zoë 東京 🙂"}'))
    expect(fine.statusCode).toBe(201)
    expect(fine.json().data.text).toBe('Zoë 東京 🙂')
  })

  it('answers 422 to NUL in any text of a body, and takes a password with NUL (only its hash is stored)', async () => {
    const posts = `/api/v1/users/${t.alice.id}/posts`
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['/api/v1/users', t.tokens.admin, { name: 'a\u0000b', email: 'nul1@example.com' }, 'name'],
      ['/api/v1/users', t.tokens.admin, { name: 'Nul', email: 'nul\u0000@example.com' }, 'email'],
      ['/api/v1/users', t.tokens.admin, { name: 'Nul', email: 'nul2@example.com', avatar: 'https://x.example/\u0000' }, 'avatar'],
      [posts, t.tokens.alice, { title: 'a\u0000', content: 'x' }, 'title'],
      [posts, t.tokens.alice, { title: 'a', content: 'x\u0000' }, 'content'],
      [`${posts}/${post}/comments`, t.tokens.bob, { content: '\u0000' }, 'content'],
      [`/api/v1/users/${t.bob.id}/todos`, t.tokens.bob, { text: 'milk\u0000' }, 'text'],
    ]
    for (const [url, token, json, field] of cases) expectRefused(await t.request({ method: 'POST', url, token, json }), 422, 'VALIDATION_ERROR', field)
    const withPassword = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      token: t.tokens.admin,
      json: { name: 'Nul', email: 'nul3@example.com', password: 'pass\u0000word' },
    })
    expect(withPassword.statusCode, withPassword.body).toBe(201)
    const signIn = await t.request({ method: 'POST', url: '/api/v1/tokens', json: { email: 'nul3@example.com', password: 'pass\u0000word' } })
    expect(signIn.statusCode).toBe(201)
  })
})
