// `Prefer: return=minimal` on the API's writes (src/http/prefer.ts): the status without the body,
// the write made all the same; errors, reads and GraphQL untouched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { returnPreference } from '../../src/http/prefer.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ CORS_ORIGINS: 'https://app.example' })
})
afterAll(() => t.close())

const MINIMAL = { prefer: 'return=minimal' }

describe('Prefer: return=minimal', () => {
  it('answers a create 201 with Location and no body, and the row is made', async () => {
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.alice.id}/posts`,
      token: t.tokens.alice,
      headers: MINIMAL,
      json: { title: 'Quiet', content: 'No echo' },
    })
    expect(res.statusCode).toBe(201)
    expect(res.body).toBe('')
    expect(res.headers['content-type']).toBeUndefined()
    expect(res.headers['preference-applied']).toBe('return=minimal')
    const location = String(res.headers.location)
    expect(location).toMatch(new RegExp(`^/api/v1/users/${t.alice.id}/posts/\\d+$`))
    const made = await t.request({ method: 'GET', url: location, token: t.tokens.alice })
    expect(made.statusCode).toBe(200)
    expect(made.json().data).toMatchObject({ title: 'Quiet', content: 'No echo' })
  })

  it('drops a large answer before it is compressed: no Content-Encoding on an empty body', async () => {
    const content = 'A long post. '.repeat(200)
    const headers = { ...MINIMAL, 'accept-encoding': 'gzip' }
    const res = await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts`, token: t.tokens.alice, headers, json: { title: 'Long', content } })
    expect(res.statusCode).toBe(201)
    expect(res.rawPayload.length).toBe(0)
    expect(res.headers['content-encoding']).toBeUndefined()
    const full = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.alice.id}/posts`,
      token: t.tokens.alice,
      headers: { 'accept-encoding': 'gzip' },
      json: { title: 'Long', content },
    })
    expect(full.headers['content-encoding']).toBe('gzip')
  })

  it('answers PATCH and PUT 204 without a body, and the change is made', async () => {
    const created = await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/todos`, token: t.tokens.alice, json: { text: 'Before' } })
    const url = `/api/v1/users/${t.alice.id}/todos/${created.json().data.id}`
    const patched = await t.request({ method: 'PATCH', url, token: t.tokens.alice, headers: MINIMAL, json: { completed: true } })
    expect(patched.statusCode).toBe(204)
    expect(patched.body).toBe('')
    expect(patched.headers['preference-applied']).toBe('return=minimal')
    const replaced = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${t.bob.id}`,
      token: t.tokens.bob,
      headers: MINIMAL,
      json: { name: 'Robert', email: 'bob@example.com' },
    })
    expect(replaced.statusCode).toBe(204)
    expect(replaced.body).toBe('')
    expect((await t.request({ method: 'GET', url, token: t.tokens.alice })).json().data.completed).toBe(true)
    expect((await t.request({ method: 'GET', url: `/api/v1/users/${t.bob.id}` })).json().data.name).toBe('Robert')
  })

  it('keeps the body of an error, and says no preference was applied', async () => {
    const res = await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts`, token: t.tokens.alice, headers: MINIMAL, json: { title: '' } })
    expect(res.statusCode).toBe(422)
    expect(res.json().error.code).toBe('VALIDATION_ERROR')
    expect(res.headers['preference-applied']).toBeUndefined()
    const refused = await t.request({ method: 'PATCH', url: `/api/v1/users/${t.alice.id}`, token: t.tokens.bob, headers: MINIMAL, json: { name: 'Mallory' } })
    expect(refused.statusCode).toBe(403)
    expect(refused.json().error.code).toBe('FORBIDDEN')
  })

  it('says return=representation back and answers as without it; ignores other preferences', async () => {
    const asked = await t.request({
      method: 'PATCH',
      url: `/api/v1/users/${t.bob.id}`,
      token: t.tokens.bob,
      headers: { prefer: 'return=representation' },
      json: { age: 42 },
    })
    expect(asked.statusCode).toBe(200)
    expect(asked.headers['preference-applied']).toBe('return=representation')
    expect(asked.json().data.age).toBe(42)
    for (const prefer of ['respond-async', 'return=everything', 'wait=10', '']) {
      const res = await t.request({ method: 'PATCH', url: `/api/v1/users/${t.bob.id}`, token: t.tokens.bob, headers: { prefer }, json: { age: 43 } })
      expect(res.statusCode, prefer).toBe(200)
      expect(res.json().data.age, prefer).toBe(43)
      expect(res.headers['preference-applied'], prefer).toBeUndefined()
    }
  })

  it('leaves reads, GraphQL and DELETE as they are', async () => {
    const read = await t.request({ method: 'GET', url: '/api/v1/users', headers: MINIMAL })
    expect(read.statusCode).toBe(200)
    expect(read.json().data.length).toBeGreaterThan(0)
    expect(read.headers['preference-applied']).toBeUndefined()
    const graphql = await t.request({
      method: 'POST',
      url: '/graphql',
      token: t.tokens.alice,
      headers: MINIMAL,
      json: { query: 'mutation { addTodo(text: "Via GraphQL") { text } }' },
    })
    expect(graphql.json()).toEqual({ data: { addTodo: { text: 'Via GraphQL' } } })
    expect(graphql.headers['preference-applied']).toBeUndefined()
    const created = await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/todos`, token: t.tokens.alice, json: { text: 'Gone soon' } })
    const deleted = await t.request({
      method: 'DELETE',
      url: `/api/v1/users/${t.alice.id}/todos/${created.json().data.id}`,
      token: t.tokens.alice,
      headers: MINIMAL,
    })
    expect(deleted.statusCode).toBe(204)
  })

  it('lets a browser on an allowed origin send Prefer and read Preference-Applied', async () => {
    const preflight = await t.request({
      method: 'OPTIONS',
      url: `/api/v1/users/${t.alice.id}/posts`,
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'prefer, content-type' },
    })
    expect(String(preflight.headers['access-control-allow-headers']).toLowerCase()).toContain('prefer')
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.alice.id}/todos`,
      token: t.tokens.alice,
      headers: { ...MINIMAL, origin: 'https://app.example' },
      json: { text: 'From a browser' },
    })
    expect(String(res.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/)).toContain('preference-applied')
  })
})

describe('returnPreference', () => {
  it('reads the first return preference, in any case, quoted or not, among others and with parameters', () => {
    expect(returnPreference(undefined)).toBeUndefined()
    expect(returnPreference('return=minimal')).toBe('minimal')
    expect(returnPreference('RETURN = "Minimal"')).toBe('minimal')
    expect(returnPreference('respond-async, wait=5, return=representation; x=1')).toBe('representation')
    expect(returnPreference(['wait=5', 'return=minimal'])).toBe('minimal')
    expect(returnPreference('return=representation, return=minimal')).toBe('representation')
    expect(returnPreference('return=bogus, return=minimal')).toBeUndefined()
    expect(returnPreference('returns=minimal')).toBeUndefined()
    expect(returnPreference('return')).toBeUndefined()
  })
})
