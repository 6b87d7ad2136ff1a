import SqliteDatabase from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { sqlitePath, TEST_STORE } from '../helpers/test-store.js'
import { randomUuid } from '../../src/http/request-id.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

/** Every error leaves in the service's error body (docs/rest.md, Envelopes and errors), never with Fastify's own words or codes. */
function expectErrorBody(body: string, code: string) {
  const parsed = JSON.parse(body)
  expect(Object.keys(parsed)).toEqual(['error'])
  expect(parsed.error.code).toBe(code)
  expect(typeof parsed.error.message).toBe('string')
  expect(body).not.toMatch(/FST_|statusCode|Fastify/)
}

const post = (payload: string | Buffer, contentType?: string) =>
  t.app.inject({
    method: 'POST',
    url: '/users',
    headers: { authorization: `Bearer ${t.tokens.admin}`, ...(contentType ? { 'content-type': contentType } : {}) },
    payload,
  })

describe('bodies', () => {
  it.each(['{"name": "x",', '{bad', 'nul', '"unterminated'])('answers 400 BAD_REQUEST to malformed JSON %j', async (payload) => {
    const res = await post(payload, 'application/json')
    expect(res.statusCode).toBe(400)
    expectErrorBody(res.body, 'BAD_REQUEST')
  })

  it('answers 400 to an empty JSON body', async () => {
    const res = await post('', 'application/json')
    expect(res.statusCode).toBe(400)
    expectErrorBody(res.body, 'BAD_REQUEST')
  })

  it('answers 422 to JSON that is not an object', async () => {
    for (const payload of ['[]', '42', '"text"', 'null']) {
      const res = await post(payload, 'application/json')
      expect(res.statusCode, payload).toBe(422)
      expectErrorBody(res.body, 'VALIDATION_ERROR')
      expect(res.json().error.details).toEqual([{ field: '', message: 'must be an object' }])
    }
  })

  it.each([
    '{"__proto__": {"role": "admin"}, "name": "P", "email": "p@example.com"}',
    '{"constructor": {"prototype": {"x": 1}}, "name": "P", "email": "p@example.com"}',
  ])('answers 400 to prototype poisoning %s', async (payload) => {
    const res = await post(payload, 'application/json')
    expect(res.statusCode).toBe(400)
    expectErrorBody(res.body, 'BAD_REQUEST')
  })

  it.each([
    ['PATCH merge-patch', 'PATCH', 'users/bob', 'application/merge-patch+json', '{"__proto__": {"role": "admin"}}'],
    ['PATCH json', 'PATCH', 'users/bob', 'application/json', '{"constructor": {"prototype": {"role": "admin"}}}'],
    [
      'GraphQL variables',
      'POST',
      'graphql',
      'application/json',
      '{"query": "query($id: ID!) { user(id: $id) { id } }", "variables": {"id": "1", "__proto__": {"role": "admin"}}}',
    ],
  ])('answers 400 to prototype poisoning in a %s body, changes nothing and grants nothing', async (_what, method, target, type, payload) => {
    const url = target === 'users/bob' ? `/users/${t.bob.id}` : '/graphql'
    const before = (await t.request({ method: 'GET', url: `/users/${t.bob.id}` })).json().data
    const res = await t.app.inject({
      method: method as 'PATCH' | 'POST',
      url,
      headers: { authorization: `Bearer ${t.tokens.bob}`, 'content-type': type },
      payload,
    })
    expect(res.statusCode).toBe(400)
    // GraphQL answers in its own shape, with the same code.
    if (target === 'graphql') expect(res.json().errors[0].extensions.code).toBe('BAD_REQUEST')
    else expectErrorBody(res.body, 'BAD_REQUEST')
    expect((await t.request({ method: 'GET', url: `/users/${t.bob.id}` })).json().data).toEqual(before)
  })

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml'])(
    'answers 415 to a %s body and creates nothing',
    async (type) => {
      const before = (await t.request({ method: 'GET', url: '/users' })).json().meta.pagination.total
      const res = await post('{"name":"T","email":"t@example.com"}', type)
      expect(res.statusCode).toBe(415)
      expectErrorBody(res.body, 'UNSUPPORTED_MEDIA_TYPE')
      expect((await t.request({ method: 'GET', url: '/users' })).json().meta.pagination.total).toBe(before)
    },
  )

  it('answers 413 to a body over 1 MiB', async () => {
    const res = await post(JSON.stringify({ name: 'x'.repeat(1024 * 1024), email: 'big@example.com' }), 'application/json')
    expect(res.statusCode).toBe(413)
    expectErrorBody(res.body, 'PAYLOAD_TOO_LARGE')
  })

  it.each(['application/json; charset=latin1', 'application/json; charset=utf-16', 'application/json;charset="iso-8859-1"'])(
    'answers 415 to JSON declared in another charset: %s',
    async (type) => {
      const res = await post('{"name":"Latin","email":"latin@example.com"}', type)
      expect(res.statusCode).toBe(415)
      expectErrorBody(res.body, 'UNSUPPORTED_MEDIA_TYPE')
    },
  )

  it('answers 415 to a compressed body', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/users',
      headers: { authorization: `Bearer ${t.tokens.admin}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: '{"name":"Zip","email":"zip@example.com"}',
    })
    expect(res.statusCode).toBe(415)
  })

  it('accepts a JSON content type with a charset', async () => {
    const res = await post('{"name":"Charset","email":"charset@example.com"}', 'application/json; charset=utf-8')
    expect(res.statusCode).toBe(201)
  })
})

describe('routes', () => {
  it('answers 404 NOT_FOUND to an unknown route', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/nothing-here' })
    expect(res.statusCode).toBe(404)
    expectErrorBody(res.body, 'NOT_FOUND')
  })

  it('answers 405 with an Allow header to a method the path does not serve', async () => {
    const collection = await t.request({ method: 'DELETE', url: '/api/v1/users', token: t.tokens.admin })
    expect(collection.statusCode).toBe(405)
    expect(collection.headers.allow).toBe('GET, HEAD, POST, OPTIONS')
    expectErrorBody(collection.body, 'METHOD_NOT_ALLOWED')

    const one = await t.request({ method: 'POST', url: `/users/${t.bob.id}`, json: {} })
    expect(one.statusCode).toBe(405)
    expect(one.headers.allow).toBe('GET, HEAD, PUT, PATCH, DELETE, OPTIONS')
  })

  it('answers OPTIONS with 204 and the methods the path serves', async () => {
    const res = await t.request({ method: 'OPTIONS', url: `/api/v1/users/${t.bob.id}/todos` })
    expect(res.statusCode).toBe(204)
    expect(res.headers.allow).toBe('GET, HEAD, POST, OPTIONS')
  })

  it('answers 400 to a malformed URL', async () => {
    const res = await t.request({ method: 'GET', url: '/users/%E0%A4%A' })
    expect(res.statusCode).toBe(400)
    expectErrorBody(res.body, 'BAD_REQUEST')
  })

  it('answers 404 to an over-long id', async () => {
    const res = await t.request({ method: 'GET', url: `/users/${'9'.repeat(500)}` })
    expect(res.statusCode).toBe(404)
    expectErrorBody(res.body, 'NOT_FOUND')
  })

  it('answers HEAD like GET, without a body', async () => {
    const res = await t.request({ method: 'HEAD', url: `/users/${t.bob.id}` })
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('')
  })
})

describe.runIf(TEST_STORE === 'sqlite')('a busy database (SQLite: another process holds the write lock)', () => {
  it('answers 503 with Retry-After while another process holds the write lock, and writes nothing', async () => {
    const other = new SqliteDatabase(sqlitePath(t.config.database))
    other.exec('BEGIN IMMEDIATE')
    try {
      const res = await t.request({ method: 'POST', url: `/users/${t.bob.id}/todos`, token: t.tokens.bob, json: { text: 'later' } })
      expect(res.statusCode).toBe(503)
      expect(res.headers['retry-after']).toBe('1')
      expectErrorBody(res.body, 'SERVICE_UNAVAILABLE')
    } finally {
      other.exec('ROLLBACK')
      other.close()
    }
    const todos = (await t.request({ method: 'GET', url: `/users/${t.bob.id}/todos?q=later` })).json().data
    expect(todos).toEqual([])
  })
})

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('request ids', () => {
  it('sends an X-Request-Id on every response, successes and errors alike', async () => {
    const ok = await t.request({ method: 'GET', url: '/users' })
    const missing = await t.request({ method: 'GET', url: '/nope' })
    const denied = await t.request({ method: 'POST', url: '/users', json: {} })
    for (const res of [ok, missing, denied]) {
      expect(res.headers['x-request-id']).toMatch(UUID_V4)
    }
    expect(ok.headers['x-request-id']).not.toBe(missing.headers['x-request-id'])
  })

  it('makes each id a random UUID of version 4, none twice, past the random bytes drawn at once', () => {
    const ids = Array.from({ length: 2000 }, randomUuid)
    for (const id of ids) expect(id).toMatch(UUID_V4)
    expect(new Set(ids).size).toBe(ids.length)
    // Every hex digit of the random part turns up: the bytes are used, not a few of them.
    expect(new Set(ids.join('').replaceAll('-', ''))).toEqual(new Set('0123456789abcdef'))
  })

  it("echoes the client's X-Request-Id, and replaces one that is not sane", async () => {
    const echoed = await t.request({ method: 'GET', url: '/users', headers: { 'x-request-id': 'client-abc.123' } })
    expect(echoed.headers['x-request-id']).toBe('client-abc.123')
    const replaced = await t.request({ method: 'GET', url: '/users', headers: { 'x-request-id': 'bad id\twith spaces' } })
    expect(replaced.headers['x-request-id']).toMatch(UUID_V4)
  })
})

// A row no write of ours could make (SQLite keeps any value in any column): what an unexpected
// failure deep inside looks like from the outside, and in the log.
describe.runIf(TEST_STORE === 'sqlite')('an unexpected error', () => {
  it('is answered 500 INTERNAL_ERROR with the request id and nothing of its cause, and logged with the request id and its stack', async () => {
    const lines: string[] = []
    const logged = await buildTestApp({ LOG_LEVEL: 'error' }, { logStream: { write: (line) => void lines.push(line) } })
    try {
      const other = new SqliteDatabase(sqlitePath(logged.config.database))
      other.prepare(`update users set age = 'forty' where id = ?`).run(logged.bob.id)
      other.close()
      const res = await logged.request({ method: 'GET', url: `/api/v1/users/${logged.bob.id}` })
      expect(res.statusCode).toBe(500)
      expectErrorBody(res.body, 'INTERNAL_ERROR')
      const requestId = res.headers['x-request-id'] as string
      expect(res.json().error.message).toBe(`Something went wrong on our side; quote request id ${requestId}`)
      expect(res.body).not.toMatch(/stack|at |\/|\\|sqlite|better-sqlite3|fast-json-stringify|TypeError|select|schema|forty/i)
      const entry = lines
        .map((line) => JSON.parse(line) as { reqId?: string; msg?: string; err?: { stack?: string } })
        .find((l) => l.msg === 'unexpected error')
      expect(entry?.reqId).toBe(requestId)
      expect(entry?.err?.stack).toMatch(/TypeError/)
    } finally {
      await logged.close()
    }
  })
})
