// Automatic persisted queries, in Apollo's protocol: a hash alone is PersistedQueryNotFound
// until the query is sent with it, then it stands for the query, over POST and GET; a hash that is not
// the query's is refused; GET answers by hash are cached as plain GETs are, and answers with errors
// never are; a mutation by hash stays refused over GET; the rate limit meters the document the hash
// stands for. What is kept is bounded: only documents that parsed and validated, none larger than
// GRAPHQL_PERSISTED_QUERY_MAX_BYTES, a caller's bytes per window, and what Redis holds in all.
// Trusted documents, and the mode that runs only them. On this process's store and on Redis.
// Runs once, on SQLite: documents kept in memory or Redis, never in the database.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { sha256Hex } from '../../src/graphql/pipeline/persisted-queries.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { uniquePrefix } from '../helpers/private-redis.js'
import { redisUrl } from '../helpers/services.js'

const sharedUrl = await redisUrl()

const stores = [
  { store: 'memory', skip: false, env: (): Record<string, string> => ({}) },
  { store: 'Redis', skip: sharedUrl === undefined, env: (): Record<string, string> => ({ REDIS_URL: sharedUrl as string, REDIS_KEY_PREFIX: uniquePrefix() }) },
]

const persisted = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256Hex(query) } })
const getUrl = (params: Record<string, unknown>) =>
  `/graphql?${new URLSearchParams(Object.entries(params).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]))}`

describe.each(stores)('persisted queries on the $store store', ({ skip, env }) => {
  let t: TestApp
  beforeAll(async () => {
    if (skip) return
    t = await buildTestApp({ RATE_LIMIT_MAX: '100000', RATE_LIMIT_AUTHENTICATED_MAX: '100000', ...env() })
  })
  afterAll(() => t?.close())

  const post = (payload: unknown, headers: Record<string, string> = {}) => t.request({ method: 'POST', url: '/graphql', json: payload, headers })
  /** A query no other test sends (the store is shared by the tests of one app). */
  let unique = 0
  const fresh = (selection = 'name') => `query Fresh${++unique} { user(id: "${t.bob.id}") { ${selection} } }`

  it.skipIf(skip)('answers a hash it does not hold with PersistedQueryNotFound, registers it with the query, then runs it from the hash alone', async () => {
    const query = fresh()
    const miss = await post({ extensions: persisted(query) })
    expect(miss.statusCode).toBe(200)
    expect(miss.json()).toEqual({ errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] })
    const strict = await post({ extensions: persisted(query) }, { accept: 'application/graphql-response+json' })
    expect(strict.statusCode).toBe(400)

    const register = await post({ query, extensions: persisted(query) })
    expect(register.json()).toEqual({ data: { user: { name: 'Bob' } } })
    const hit = await post({ extensions: persisted(query) })
    expect(hit.json()).toEqual({ data: { user: { name: 'Bob' } } })
    // Over GET too, with extensions as JSON in the query string.
    const get = await t.request({ method: 'GET', url: getUrl({ extensions: persisted(query) }) })
    expect(get.statusCode).toBe(200)
    expect(get.json()).toEqual({ data: { user: { name: 'Bob' } } })
  })

  it.skipIf(skip)('registers over GET, and serves a batch whose operations are persisted, missing and sent in full', async () => {
    const query = fresh('email')
    expect((await t.request({ method: 'GET', url: getUrl({ extensions: persisted(query) }) })).json().errors[0].message).toBe('PersistedQueryNotFound')
    const registered = await t.request({ method: 'GET', url: getUrl({ query, extensions: persisted(query) }) })
    expect(registered.json()).toEqual({ data: { user: { email: 'bob@example.com' } } })
    const unknown = fresh()
    const batch = await post([{ extensions: persisted(query) }, { extensions: persisted(unknown) }, { query: '{ __typename }' }])
    expect(batch.json()).toEqual([
      { data: { user: { email: 'bob@example.com' } } },
      { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] },
      { data: { __typename: 'Query' } },
    ])
  })

  it.skipIf(skip)('refuses a query that is not the one its hash names, and does not register it', async () => {
    const query = fresh()
    const other = fresh()
    const mismatch = await post({ query: other, extensions: persisted(query) })
    expect(mismatch.json()).toEqual({ errors: [{ message: 'provided sha does not match query', extensions: { code: 'BAD_REQUEST' } }] })
    expect((await post({ extensions: persisted(query) })).json().errors[0].message).toBe('PersistedQueryNotFound')
    expect((await post({ extensions: persisted(other) })).json().errors[0].message).toBe('PersistedQueryNotFound')
  })

  it.skipIf(skip)('refuses a malformed persistedQuery with 400 and details', async () => {
    for (const extensions of [
      { persistedQuery: { version: 2, sha256Hash: sha256Hex('{ __typename }') } },
      { persistedQuery: { version: 1, sha256Hash: 'abc' } },
    ]) {
      const response = await post({ extensions })
      expect(response.statusCode).toBe(400)
      const body = response.json()
      expect(body.errors[0].extensions.code).toBe('BAD_REQUEST')
      expect(body.errors[0].extensions.details.map((d: { field: string }) => d.field)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^extensions\.persistedQuery\./)]),
      )
    }
  })

  it.skipIf(skip)('caches a GET by hash as a plain GET: ETag and 304, public for anonymous callers, private for signed-in ones, Vary', async () => {
    const query = fresh()
    await post({ query, extensions: persisted(query) })
    const url = getUrl({ extensions: persisted(query) })
    const first = await t.request({ method: 'GET', url })
    expect(first.statusCode).toBe(200)
    expect(first.headers.etag).toMatch(/^W\//)
    expect(first.headers['cache-control']).toMatch(/^public, max-age=\d+$/)
    expect(first.headers.vary).toBe('Accept, Authorization, Accept-Encoding')
    const again = await t.request({ method: 'GET', url, headers: { 'if-none-match': String(first.headers.etag) } })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
    const signedIn = await t.request({ method: 'GET', url, token: t.tokens.alice })
    expect(signedIn.headers['cache-control']).toBe('private, no-cache')
    expect(signedIn.headers.etag).toMatch(/^W\//)
  })

  it.skipIf(skip)('never caches an answer with errors, by hash or in full: no-store and no ETag, even against If-None-Match: *', async () => {
    const failing = `{ user(id: "999999") { name } }`
    await post({ query: failing, extensions: persisted(failing) })
    for (const url of [
      getUrl({ query: failing }),
      getUrl({ extensions: persisted(failing) }),
      getUrl({ query: '{ nope }' }),
      getUrl({ extensions: persisted(fresh()) }),
    ]) {
      const response = await t.request({ method: 'GET', url })
      expect({ url, status: response.statusCode, cache: response.headers['cache-control'], etag: response.headers.etag }).toEqual({
        url,
        status: 200,
        cache: 'no-store',
        etag: undefined,
      })
      expect(response.json().errors.length).toBeGreaterThan(0)
      const star = await t.request({ method: 'GET', url, headers: { 'if-none-match': '*' } })
      expect([star.statusCode, star.headers.etag, star.json().errors.length > 0]).toEqual([200, undefined, true])
    }
  })

  it.skipIf(skip)('refuses a persisted mutation over GET with 405, running nothing', async () => {
    const mutation = 'mutation { addTodo(text: "by hash over GET") { id } }'
    const count = async () => (await t.database.db.selectFrom('todos').select('id').where('text', '=', 'by hash over GET').execute()).length
    const registered = await post({ query: mutation, extensions: persisted(mutation) }, { authorization: `Bearer ${t.tokens.alice}` })
    expect(registered.json().data.addTodo.id).toBeDefined()
    const response = await t.request({ method: 'GET', url: getUrl({ extensions: persisted(mutation) }), token: t.tokens.alice })
    expect(response.statusCode).toBe(405)
    expect(response.headers.allow).toBe('POST')
    expect(await count()).toBe(1)
  })

  it.skipIf(skip)('meters the document a hash stands for, as if it had been sent', async () => {
    const costly = '{ users(limit: 100) { posts(limit: 100) { id } } }'
    const full = await post({ query: costly, extensions: persisted(costly) })
    const byHash = await post({ extensions: persisted(costly) })
    expect(Number(byHash.headers['x-ratelimit-cost'])).toBeGreaterThan(1)
    expect(byHash.headers['x-ratelimit-cost']).toBe(full.headers['x-ratelimit-cost'])
  })
})

describe.each(stores)('what persisted queries keep, on the $store store', ({ store, skip, env }) => {
  const REDIS_BUDGET = 2 ** 20
  let t: TestApp
  let prefix: string
  let redis: Redis | undefined
  const lines: string[] = []
  beforeAll(async () => {
    if (skip) return
    const storeEnv = env()
    prefix = storeEnv.REDIS_KEY_PREFIX ?? ''
    if (store === 'Redis') redis = new Redis(sharedUrl as string)
    t = await buildTestApp(
      { ...storeEnv, LOG_LEVEL: 'warn', GRAPHQL_PERSISTED_QUERIES_CALLER_BYTES: '100000', GRAPHQL_PERSISTED_QUERIES_REDIS_MB: '1' },
      { logStream: { write: (line) => lines.push(line) } },
    )
  })
  afterAll(async () => {
    await t?.close()
    await redis?.quit()
  })

  const post = (payload: unknown, from = '127.0.0.1') => t.request({ method: 'POST', url: '/graphql', json: payload, remoteAddress: from })
  let unique = 0
  /** A valid query of about `bytes` bytes, most of them a comment before it (as a client could send). */
  const padded = (bytes: number) => {
    const query = `query Padded${++unique} { user(id: "${t.bob.id}") { name } }`
    return `# ${'x'.repeat(bytes - query.length - 3)}\n${query}`
  }
  const bob = { data: { user: { name: 'Bob' } } }
  const notFound = { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] }

  it.skipIf(skip)(
    'never registers a document that does not parse or validate, over POST, GET or in a batch: its hash alone stays PersistedQueryNotFound',
    async () => {
      const invalid = ['{ nope }', `{ user(id: "${t.bob.id}") { name }`, '{ users(limit: 5) }', 'subscription { commentAdded(postId: "1") { id } }']
      for (const query of invalid) {
        const answer = (await post({ query, extensions: persisted(query) })).json()
        expect(answer.errors.length).toBeGreaterThan(0)
        expect(answer.data).toBeUndefined()
      }
      const overGet = '{ alsoNope }'
      expect((await t.request({ method: 'GET', url: getUrl({ query: overGet, extensions: persisted(overGet) }) })).json().errors.length).toBeGreaterThan(0)
      const inBatch = '{ batchNope }'
      expect((await post([{ query: inBatch, extensions: persisted(inBatch) }])).json()[0].errors.length).toBeGreaterThan(0)
      for (const query of [...invalid, overGet, inBatch])
        expect({ query, answer: (await post({ extensions: persisted(query) })).json() }).toEqual({ query, answer: notFound })
    },
  )

  it.skipIf(skip)(
    'runs a document larger than GRAPHQL_PERSISTED_QUERY_MAX_BYTES sent with its hash, answers it as any other, and does not keep it',
    async () => {
      const large = padded(70_000)
      const answer = await post({ query: large, extensions: persisted(large) })
      expect(answer.statusCode).toBe(200)
      expect(answer.json()).toEqual(bob)
      expect((await post({ extensions: persisted(large) })).json()).toEqual(notFound)
      // One at the bound is kept.
      const atBound = padded(65_536)
      expect((await post({ query: atBound, extensions: persisted(atBound) })).json()).toEqual(bob)
      expect((await post({ extensions: persisted(atBound) })).json()).toEqual(bob)
    },
  )

  it.skipIf(skip)(
    "keeps no more of one caller's documents a window than GRAPHQL_PERSISTED_QUERIES_CALLER_BYTES, runs the rest, and says so in one log line",
    async () => {
      const documents = Array.from({ length: 6 }, () => padded(40_000))
      for (const query of documents) expect((await post({ query, extensions: persisted(query) }, '10.1.0.1')).json()).toEqual(bob)
      const kept = []
      for (const query of documents) kept.push((await post({ extensions: persisted(query) })).json().data !== undefined)
      expect(kept).toEqual([true, true, false, false, false, false])
      // Another caller's allowance is its own.
      const other = padded(40_000)
      expect((await post({ query: other, extensions: persisted(other) }, '10.1.0.2')).json()).toEqual(bob)
      expect((await post({ extensions: persisted(other) })).json()).toEqual(bob)
      const skippedLines = lines.filter((line) => line.includes('persisted query run but not registered'))
      expect(skippedLines).toHaveLength(1)
    },
  )

  it.skipIf(skip || store !== 'Redis')(
    'keeps what Redis holds under the prefix within GRAPHQL_PERSISTED_QUERIES_REDIS_MB, however many documents are registered, and still registers new ones',
    async () => {
      const documents = Array.from({ length: 40 }, () => padded(40_000))
      for (const [i, query] of documents.entries()) {
        expect((await post({ query, extensions: persisted(query) }, `10.2.0.${i + 1}`)).json()).toEqual(bob)
      }
      let memory = 0
      let documentBytes = 0
      for await (const keys of redis!.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
        for (const key of keys) {
          memory += (await redis!.memory('USAGE', key)) ?? 0
          if (key.startsWith(`${prefix}apq:`)) documentBytes += await redis!.strlen(key)
        }
      }
      expect(documentBytes).toBeGreaterThan(REDIS_BUDGET / 2)
      expect(memory).toBeLessThanOrEqual(REDIS_BUDGET)
      // The oldest registrations made room; the newest is in Redis, so another instance knows it.
      expect(await redis!.exists(`${prefix}apq:${sha256Hex(documents[0] as string)}`)).toBe(0)
      const newest = documents.at(-1) as string
      expect(await redis!.get(`${prefix}apq:${sha256Hex(newest)}`)).toBe(newest)
      const small = `query AfterTheFlood { user(id: "${t.bob.id}") { name } }`
      expect((await post({ query: small, extensions: persisted(small) }, '10.2.1.1')).json()).toEqual(bob)
      expect(await redis!.get(`${prefix}apq:${sha256Hex(small)}`)).toBe(small)
    },
  )
})

describe('trusted documents', () => {
  const trusted = '{ __typename }'
  const directory = mkdtempSync(join(tmpdir(), 'threadline-trusted-'))
  const file = (name: string, content: unknown) => {
    const path = join(directory, name)
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
    return path
  }
  const plain = file('plain.json', { [sha256Hex(trusted)]: trusted })
  const manifest = file('manifest.json', {
    format: 'apollo-persisted-query-manifest',
    version: 1,
    operations: [{ id: sha256Hex(trusted), name: 'T', type: 'query', body: trusted }],
  })

  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ GRAPHQL_TRUSTED_DOCUMENTS: manifest, GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'true' })
  })
  afterAll(() => t.close())
  const post = (payload: unknown) => t.request({ method: 'POST', url: '/graphql', json: payload })

  it('runs only the trusted documents: by hash, or in full; any other is refused, registration too', async () => {
    expect((await post({ extensions: persisted(trusted) })).json()).toEqual({ data: { __typename: 'Query' } })
    expect((await post({ query: trusted })).json()).toEqual({ data: { __typename: 'Query' } })
    const other = '{ users { id } }'
    for (const payload of [{ query: other }, { query: other, extensions: persisted(other) }, { extensions: persisted(other) }]) {
      const body = (await post(payload)).json()
      expect(body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_ALLOWED')
      expect(body.data).toBeUndefined()
    }
  })

  it('reads both file formats, and refuses to start on a bad file, naming the variable', () => {
    const load = (env: Record<string, string>) => loadConfig({ HTTP_SHED_LOOP_DELAY_MS: '0', DATABASE_URL: 'sqlite::memory:', ...env }).graphql.persistedQueries
    expect(load({ GRAPHQL_TRUSTED_DOCUMENTS: plain }).trustedDocuments.get(sha256Hex(trusted))).toBe(trusted)
    expect(load({ GRAPHQL_TRUSTED_DOCUMENTS: manifest }).trustedDocuments.get(sha256Hex(trusted))).toBe(trusted)
    for (const bad of [
      join(directory, 'missing.json'),
      file('not-json.json', '{'),
      file('array.json', []),
      file('wrong-hash.json', { [sha256Hex('{ x }')]: trusted }),
    ]) {
      expect(() => load({ GRAPHQL_TRUSTED_DOCUMENTS: bad })).toThrow(/Invalid environment variable GRAPHQL_TRUSTED_DOCUMENTS:/)
    }
    expect(() => load({ GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'true' })).toThrow(/GRAPHQL_TRUSTED_DOCUMENTS_ONLY/)
  })
})

describe('persisted queries with Redis away', () => {
  let t: TestApp
  beforeAll(async () => {
    // Nothing listens on port 1: every Redis command fails at once.
    t = await buildTestApp({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_KEY_PREFIX: uniquePrefix() })
  })
  afterAll(() => t.close())
  const post = (payload: unknown) => t.request({ method: 'POST', url: '/graphql', json: payload })

  it('runs a query sent in full, and answers a hash alone from this process, else PersistedQueryNotFound', async () => {
    const query = `{ user(id: "${t.bob.id}") { name } }`
    expect((await post({ extensions: persisted(query) })).json().errors[0].message).toBe('PersistedQueryNotFound')
    expect((await post({ query, extensions: persisted(query) })).json()).toEqual({ data: { user: { name: 'Bob' } } })
    expect((await post({ extensions: persisted(query) })).json()).toEqual({ data: { user: { name: 'Bob' } } })
  })
})
