// The callers of tokens kept by the tokens service while their token's and user's rows stand
// (SQLite): a second request with a token does not look it up, not even after writes of other
// rows, and a right is still judged as it stands when it is used: a token revoked or a role changed
// here or elsewhere, or a token expired, counts at once.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { TEST_STORE } from '../helpers/test-store.js'

describe('the callers of tokens already seen', () => {
  let t: TestApp
  let statements: string[]
  beforeEach(async () => {
    statements = []
    t = await buildTestApp({}, { onQuery: (sql) => statements.push(sql) })
  })
  afterEach(() => t.close())

  const tokenLookups = () => statements.filter((sql) => /from "tokens"/i.test(sql)).length

  it(`${TEST_STORE === 'sqlite' ? 'are not looked up again' : 'are looked up on every request (PostgreSQL keeps none)'} while nothing is written`, async () => {
    const url = `/api/v1/users/${t.bob.id}`
    expect((await t.request({ url, token: t.tokens.alice })).statusCode).toBe(200)
    statements.length = 0
    expect((await t.request({ url: `/api/v1/users/${t.alice.id}`, token: t.tokens.alice })).statusCode).toBe(200)
    expect(tokenLookups()).toBe(TEST_STORE === 'sqlite' ? 0 : 1)
  })

  it(`${TEST_STORE === 'sqlite' ? 'are not looked up again' : 'are looked up on every request'} after a write of another user`, async () => {
    const url = `/api/v1/users/${t.bob.id}`
    expect((await t.request({ url, token: t.tokens.alice })).statusCode).toBe(200)
    const patched = await t.request({ method: 'PATCH', url, token: t.tokens.admin, json: { name: 'Bob Renamed' } })
    expect(patched.statusCode).toBe(200)
    statements.length = 0
    expect((await t.request({ url, token: t.tokens.alice })).statusCode).toBe(200)
    console.log('LOOKUPS', tokenLookups(), statements)
    expect(tokenLookups()).toBe(TEST_STORE === 'sqlite' ? 0 : 1)
  })

  it('judge by the role as it stands: a user made admin through the API sees drafts at once', async () => {
    const draft = await createFactories(t).draft(t.bob)
    const url = `/api/v1/users/${t.bob.id}/posts/${draft.id}`
    expect((await t.request({ url, token: t.tokens.alice })).statusCode).toBe(404)
    const promoted = await t.request({ method: 'PATCH', url: `/api/v1/users/${t.alice.id}`, token: t.tokens.admin, json: { role: 'admin' } })
    expect(promoted.statusCode).toBe(200)
    expect((await t.request({ url, token: t.tokens.alice })).statusCode).toBe(200)
  })

  it('refuse a token revoked by another process at once', async () => {
    const url = `/api/v1/users/${t.bob.id}`
    expect((await t.request({ url, token: t.tokens.alice })).statusCode).toBe(200)
    await t.database.db.updateTable('tokens').set({ revoked_at: new Date().toISOString() }).where('user_id', '=', t.alice.id).execute()
    expect((await t.request({ url, token: t.tokens.alice })).statusCode).toBe(401)
  })

  it('judge by the role as it stands: an admin demoted elsewhere no longer sees drafts', async () => {
    const draft = await createFactories(t).draft(t.alice)
    const url = `/api/v1/users/${t.alice.id}/posts/${draft.id}`
    expect((await t.request({ url, token: t.tokens.admin })).statusCode).toBe(200)
    await t.database.db.updateTable('users').set({ role: 'user' }).where('id', '=', t.admin.id).execute()
    expect((await t.request({ url, token: t.tokens.admin })).statusCode).toBe(404)
  })

  it('refuse a token once it has expired, with nothing written meanwhile', async () => {
    const ttlMs = 800
    const token = await t.tokenFor(t.bob.id, ttlMs)
    // Made before now: expired for sure once its lifetime has passed from here.
    const expiredBy = Date.now() + ttlMs
    const url = `/api/v1/users/${t.bob.id}`
    expect((await t.request({ url, token })).statusCode).toBe(200)
    expect((await t.request({ url, token })).statusCode).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, expiredBy + 5 - Date.now()))
    expect((await t.request({ url, token })).statusCode).toBe(401)
  })
})
