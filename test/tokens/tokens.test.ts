import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

const signIn = (json: unknown) => t.request({ method: 'POST', url: '/api/v1/tokens', json })

describe('POST /tokens', () => {
  it('exchanges an e-mail and password for a token that works', async () => {
    const res = await signIn({ email: 'alice@example.com', password: 'correct horse battery' })
    expect(res.statusCode).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    const { data } = res.json()
    expect(data.token).toMatch(/^tl_[A-Za-z0-9_-]{43}$/)
    const expiresIn = Date.parse(data.expiresAt) - Date.now()
    expect(expiresIn).toBeGreaterThan(29 * 86_400_000)
    expect(expiresIn).toBeLessThanOrEqual(30 * 86_400_000)

    const me = await t.request({ method: 'PATCH', url: `/users/${t.alice.id}`, token: data.token, json: { age: 33 } })
    expect(me.statusCode).toBe(200)
  })

  it('matches the e-mail address without regard to case', async () => {
    const res = await signIn({ email: 'ALICE@example.com', password: 'correct horse battery' })
    expect(res.statusCode).toBe(201)
  })

  it('answers a wrong password, an unknown e-mail and a user without password alike: 401', async () => {
    const answers = await Promise.all([
      signIn({ email: 'alice@example.com', password: 'wrong password' }),
      signIn({ email: 'nobody@example.com', password: 'correct horse battery' }),
      signIn({ email: 'bob@example.com', password: 'anything at all' }),
    ])
    for (const res of answers) {
      expect(res.statusCode).toBe(401)
      expect(res.json().error).toEqual({ code: 'UNAUTHENTICATED', message: 'The e-mail address or the password is wrong' })
    }
  })

  it('answers 422 to a body without the credentials', async () => {
    const res = await signIn({ email: 'alice@example.com' })
    expect(res.statusCode).toBe(422)
    expect(res.json().error.details).toEqual([{ field: 'password', message: 'is required' }])
  })
})

describe('bearer tokens', () => {
  it('stores only the SHA-256 of a token', async () => {
    const token = await t.tokenFor(t.bob.id)
    const rows = await t.database.db.selectFrom('tokens').select('token_hash').execute()
    const hashes = rows.map((r) => r.token_hash)
    expect(hashes).toContain(createHash('sha256').update(token).digest('hex'))
    expect(JSON.stringify(rows)).not.toContain(token)
  })

  it.each([
    ['an unknown token', 'Bearer tl_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'invalid_token'],
    ['a token of the wrong shape', 'Bearer hello', 'invalid_token'],
    ['an empty bearer', 'Bearer ', 'invalid_request'],
    ['another scheme', 'Basic dXNlcjpwYXNz', 'invalid_request'],
  ])('refuses %s with 401 and says why in WWW-Authenticate, even on a public read', async (_what, authorization, reason) => {
    const res = await t.request({ method: 'GET', url: '/users', headers: { authorization } })
    expect(res.statusCode).toBe(401)
    expect(res.json().error.code).toBe('UNAUTHENTICATED')
    expect(res.headers['www-authenticate']).toBe(`Bearer realm="threadline", error="${reason}"`)
  })

  it('accepts the scheme in any case', async () => {
    const res = await t.request({ method: 'GET', url: '/users', headers: { authorization: `bearer ${t.tokens.bob}` } })
    expect(res.statusCode).toBe(200)
  })

  it('refuses an expired token', async () => {
    const token = await t.tokenFor(t.bob.id, 1)
    await new Promise((resolve) => setTimeout(resolve, 5))
    const res = await t.request({ method: 'GET', url: '/users', token })
    expect(res.statusCode).toBe(401)
  })

  it('DELETE /tokens/current revokes the token in use, and only that one', async () => {
    const first = await t.tokenFor(t.bob.id)
    const second = await t.tokenFor(t.bob.id)
    const res = await t.request({ method: 'DELETE', url: '/tokens/current', token: first })
    expect(res.statusCode).toBe(204)
    expect((await t.request({ method: 'GET', url: '/users', token: first })).statusCode).toBe(401)
    expect((await t.request({ method: 'GET', url: '/users', token: second })).statusCode).toBe(200)
    const revoked = await t.database.db.selectFrom('tokens').select('revoked_at').where('revoked_at', 'is not', null).execute()
    expect(revoked.length).toBeGreaterThan(0)
  })

  it('DELETE /tokens/current without a token is 401', async () => {
    const res = await t.request({ method: 'DELETE', url: '/tokens/current' })
    expect(res.statusCode).toBe(401)
  })

  it('a demoted admin loses admin rights at once, with the same token', async () => {
    const other = await t.createUser({ name: 'Second Admin', email: 'second@example.com', role: 'admin' })
    const token = await t.tokenFor(other.id)
    await t.request({ method: 'PATCH', url: `/users/${other.id}`, token: t.tokens.admin, json: { role: 'user' } })
    const res = await t.request({ method: 'POST', url: '/users', token, json: { name: 'Z', email: 'z@example.com' } })
    expect(res.statusCode).toBe(403)
  })
})
