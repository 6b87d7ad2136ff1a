// Scale-out, persisted queries: two instances on one Redis, as behind a load balancer. A document
// registered on one runs from its hash alone on the other, which never saw it; a hash neither
// instance registered is PersistedQueryNotFound on both. In process (buildApp) for speed: what is
// shared is Redis alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/graphql/pipeline/persisted-queries.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { uniquePrefix } from '../helpers/private-redis.js'
import { redisUrl } from '../helpers/services.js'

const redis = await redisUrl()

describe.runIf(redis !== undefined)('persisted queries shared by two instances through Redis', () => {
  let a: TestApp
  let b: TestApp
  beforeAll(async () => {
    const env = { REDIS_URL: redis as string, REDIS_KEY_PREFIX: uniquePrefix() }
    ;[a, b] = await Promise.all([buildTestApp(env), buildTestApp(env)])
  })
  afterAll(() => Promise.all([a?.close(), b?.close()]))

  const byHash = (query: string) => ({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(query) } } })
  const post = (t: TestApp, payload: unknown) => t.request({ method: 'POST', url: '/graphql', json: payload })
  const get = (t: TestApp, payload: { extensions: unknown }) =>
    t.request({ method: 'GET', url: `/graphql?extensions=${encodeURIComponent(JSON.stringify(payload.extensions))}` })

  it('runs on one instance, by hash, what was registered on the other', async () => {
    const query = `query Shared { user(id: "${a.bob.id}") { name age } }`
    expect((await post(b, byHash(query))).json().errors[0].message).toBe('PersistedQueryNotFound')
    expect((await post(a, { query, ...byHash(query) })).json()).toEqual({ data: { user: { name: 'Bob', age: 41 } } })
    expect((await post(b, byHash(query))).json()).toEqual({ data: { user: { name: 'Bob', age: 41 } } })
    const overGet = await get(b, byHash(query))
    expect(overGet.statusCode).toBe(200)
    expect(overGet.headers.etag).toMatch(/^W\//)
  })

  it('knows no hash that neither registered', async () => {
    const query = '{ users(limit: 2) { id } }'
    for (const t of [a, b]) expect((await post(t, byHash(query))).json().errors[0].message).toBe('PersistedQueryNotFound')
  })
})
