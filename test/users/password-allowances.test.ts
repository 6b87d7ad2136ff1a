// Setting a password costs a scrypt derivation, so each signed-in user has an allowance of them
// (PASSWORD_CHANGES_MAX per window), the same for REST and GraphQL: a batch of ten updateUser
// mutations hashes the allowance's worth, and the rest are refused with RATE_LIMITED and retryAfter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { passwordHashingStats } from '../../src/users/passwords.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

const DEFAULTS = loadConfig({ HTTP_SHED_LOOP_DELAY_MS: '0' }).passwords
const WINDOW_S = DEFAULTS.changesWindowMs / 1000

describe('the password allowance', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ PASSWORD_CHANGES_MAX: String(DEFAULTS.changesMax) })
  })
  afterAll(() => t.close())

  it('lets a batch of ten GraphQL updateUser(password) hash only the allowance, and refuses the rest with RATE_LIMITED and retryAfter', async () => {
    const before = passwordHashingStats().derivations
    const batch = Array.from({ length: 10 }, (_, i) => ({
      query: 'mutation ($id: ID!, $password: String!) { updateUser(id: $id, input: { password: $password }) { id } }',
      variables: { id: String(t.alice.id), password: `new password number ${i}` },
    }))
    const res = await t.request({ method: 'POST', url: '/graphql', token: t.tokens.alice, json: batch })
    expect(res.statusCode, res.body).toBe(200)
    const answers = res.json<{ data: unknown; errors?: { extensions: { code: string; retryAfter?: number } }[] }[]>()
    expect(answers).toHaveLength(10)
    const refused = answers.filter((answer) => answer.errors !== undefined)
    expect(answers.length - refused.length).toBe(DEFAULTS.changesMax)
    for (const answer of refused) {
      expect(answer.errors?.[0]?.extensions.code).toBe('RATE_LIMITED')
      expect(answer.errors?.[0]?.extensions.retryAfter).toBeGreaterThanOrEqual(1)
      expect(answer.errors?.[0]?.extensions.retryAfter).toBeLessThanOrEqual(WINDOW_S)
    }
    expect(passwordHashingStats().derivations - before).toBe(DEFAULTS.changesMax)
  })

  it('counts REST from the same allowance: PATCH with a password is 429 with Retry-After, a PATCH without one goes on', async () => {
    const before = passwordHashingStats().derivations
    const refused = await t.request({ method: 'PATCH', url: `/api/v1/users/${t.alice.id}`, token: t.tokens.alice, json: { password: 'yet another password' } })
    expect(refused.statusCode, refused.body).toBe(429)
    expect(refused.json().error.code).toBe('RATE_LIMITED')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    const put = await t.request({
      method: 'PUT',
      url: `/api/v1/users/${t.alice.id}`,
      token: t.tokens.alice,
      json: { name: 'Alice', email: 'alice@example.com', password: 'and another one' },
    })
    expect(put.statusCode, put.body).toBe(429)
    expect(passwordHashingStats().derivations).toBe(before)
    const renamed = await t.request({ method: 'PATCH', url: `/api/v1/users/${t.alice.id}`, token: t.tokens.alice, json: { name: 'Alice A.' } })
    expect(renamed.statusCode).toBe(200)
  })

  it('charges the caller, an admin creating users with passwords too, and a refusal for rights costs nothing', async () => {
    // Bob may not change Alice: 403, no point taken, nothing hashed.
    const before = passwordHashingStats().derivations
    for (let i = 0; i < DEFAULTS.changesMax + 1; i++) {
      const res = await t.request({ method: 'PATCH', url: `/api/v1/users/${t.alice.id}`, token: t.tokens.bob, json: { password: 'not yours to set' } })
      expect(res.statusCode).toBe(403)
    }
    expect(passwordHashingStats().derivations).toBe(before)
    // Bob's own allowance is whole.
    const own = await t.request({ method: 'PATCH', url: `/api/v1/users/${t.bob.id}`, token: t.tokens.bob, json: { password: 'bob sets his own' } })
    expect(own.statusCode, own.body).toBe(200)

    const created = await Promise.all(
      Array.from({ length: DEFAULTS.changesMax + 2 }, (_, i) =>
        t.request({
          method: 'POST',
          url: '/api/v1/users',
          token: t.tokens.admin,
          json: { name: `New ${i}`, email: `new${i}@example.com`, password: 'a first password' },
        }),
      ),
    )
    expect(created.filter((res) => res.statusCode === 201)).toHaveLength(DEFAULTS.changesMax)
    expect(created.filter((res) => res.statusCode === 429)).toHaveLength(2)
    // Without a password, creating costs no hash and no point.
    const plain = await t.request({ method: 'POST', url: '/api/v1/users', token: t.tokens.admin, json: { name: 'Plain', email: 'plain@example.com' } })
    expect(plain.statusCode).toBe(201)
  })
})
