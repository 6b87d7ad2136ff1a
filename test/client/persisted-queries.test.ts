// The client's persisted-query mode against a live server: a query goes out as its hash alone, a
// miss sends the document once (which registers it), and another client then gets its answer from
// the hash alone; hashed queries go as GETs (revalidated with the ETag cache) when asked, mutations
// never; a service with persisted queries off is sent documents in full after its first refusal; a
// service that runs only trusted documents runs one from its hash and refuses others without a retry.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ClientOptions, createClient } from '../../src/client/index.js'
import { isReadOnly } from '../../src/client/persisted-queries.js'
import { buildTestApp } from '../helpers/build-test-app.js'
import { type Exchange, hashSent, querySent, recordingFetch, sha256 } from '../helpers/recording-fetch.js'

async function live(env: Record<string, string> = {}) {
  const t = await buildTestApp({ RATE_LIMIT_MAX: '100000', RATE_LIMIT_AUTHENTICATED_MAX: '100000', ...env })
  const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 })
  return { t, baseUrl }
}

describe('the client with persisted queries', () => {
  let s: Awaited<ReturnType<typeof live>>
  const clientWith = (options: Partial<ClientOptions> = {}) => {
    const recorder = recordingFetch()
    return { client: createClient({ baseUrl: s.baseUrl, token: s.t.tokens.alice, fetch: recorder.fetch, ...options }), exchanges: recorder.exchanges }
  }
  beforeAll(async () => {
    s = await live()
  })
  afterAll(() => s.t.close())

  it('sends the hash alone, the document once on a miss, and then the hash alone from another client', async () => {
    const query = 'query Registered($id: ID!) { user(id: $id) { name } }'
    const first = clientWith({ persistedQueries: true })
    const answer = await first.client.graphql<{ user: { name: string } }>(query, { id: String(s.t.bob.id) })
    expect(answer).toEqual({ data: { user: { name: 'Bob' } } })
    expect(first.exchanges.map((e) => ({ method: e.method, hash: hashSent(e), query: querySent(e) }))).toEqual([
      { method: 'POST', hash: sha256(query), query: undefined },
      { method: 'POST', hash: sha256(query), query },
    ])

    // The server registered it: a fresh client's hash alone is answered, in one request.
    const second = clientWith({ persistedQueries: true })
    expect(await second.client.graphql(query, { id: String(s.t.alice.id) })).toEqual({ data: { user: { name: 'Alice' } } })
    expect(second.exchanges).toHaveLength(1)
    expect(querySent(second.exchanges[0] as Exchange)).toBeUndefined()
  })

  it('sends hashed queries as GETs that the ETag cache revalidates, and mutations as POSTs', async () => {
    const query = `query ByGet { user(id: "${s.t.bob.id}") { name email } }`
    const { client, exchanges } = clientWith({ persistedQueries: { useGETForHashedQueries: true }, etagCache: true })
    for (let i = 0; i < 3; i++) expect(await client.graphql(query)).toEqual({ data: { user: { name: 'Bob', email: expect.any(String) } } })
    expect(exchanges.map((e) => ({ method: e.method, query: querySent(e), status: e.status }))).toEqual([
      { method: 'GET', query: undefined, status: 200 }, // PersistedQueryNotFound
      { method: 'POST', query, status: 200 }, // the registration carries the document: a POST
      { method: 'GET', query: undefined, status: 200 }, // the hash alone, with an ETag
      { method: 'GET', query: undefined, status: 304 }, // revalidated, the remembered body served
    ])
    expect(exchanges[0]?.etag).toBeNull() // an answer with errors is never cached
    const [, , cached, revalidated] = exchanges as [Exchange, Exchange, Exchange, Exchange]
    expect(cached.etag).not.toBeNull()
    expect(revalidated.ifNoneMatch).toBe(cached.etag)
    expect(hashSent(revalidated)).toBe(sha256(query))

    exchanges.length = 0
    const mutation = `mutation Rename { updateUser(id: "${s.t.alice.id}", input: { name: "Alice" }) { name } }`
    const renamed = await client.graphql<{ updateUser: { name: string } }>(mutation)
    expect(renamed.errors).toBeUndefined()
    expect(exchanges.map((e) => e.method)).toEqual(['POST', 'POST'])
  })

  it('tells read-only documents from those with a mutation or a subscription', () => {
    expect(isReadOnly('{ users { id } }')).toBe(true)
    expect(isReadOnly('query Q { user(id: "mutation") { name } } # subscription')).toBe(true)
    expect(isReadOnly('mutation { deleteUser(id: 1) }')).toBe(false)
    expect(isReadOnly('query A { x } subscription B { commentAdded { id } }')).toBe(false)
  })
})

describe('the client with persisted queries, against a service that has them off', () => {
  let s: Awaited<ReturnType<typeof live>>
  beforeAll(async () => {
    s = await live({ GRAPHQL_PERSISTED_QUERIES: 'false' })
  })
  afterAll(() => s.t.close())

  it('sends the document once PersistedQueryNotSupported came back, and documents only from then on', async () => {
    const { fetch, exchanges } = recordingFetch()
    const client = createClient({ baseUrl: s.baseUrl, fetch, persistedQueries: { useGETForHashedQueries: true } })
    expect(await client.graphql('{ __typename }')).toEqual({ data: { __typename: 'Query' } })
    expect(await client.graphql('{ a: __typename }')).toEqual({ data: { a: 'Query' } })
    expect(exchanges.map((e) => ({ method: e.method, hash: hashSent(e), query: querySent(e) }))).toEqual([
      { method: 'GET', hash: sha256('{ __typename }'), query: undefined },
      { method: 'POST', hash: undefined, query: '{ __typename }' },
      { method: 'POST', hash: undefined, query: '{ a: __typename }' },
    ])
  })
})

describe('the client with persisted queries, against a service that runs only trusted documents', () => {
  const trusted = 'query Trusted { __typename }'
  let s: Awaited<ReturnType<typeof live>>
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'threadline-client-trusted-')), 'trusted.json')
    writeFileSync(file, JSON.stringify({ [sha256(trusted)]: trusted }))
    s = await live({ GRAPHQL_TRUSTED_DOCUMENTS: file, GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'true' })
  })
  afterAll(() => s.t.close())

  it('runs a trusted document from its hash alone, and refuses another without sending it', async () => {
    const { fetch, exchanges } = recordingFetch()
    const client = createClient({ baseUrl: s.baseUrl, fetch, persistedQueries: true })
    expect(await client.graphql(trusted)).toEqual({ data: { __typename: 'Query' } })
    expect(exchanges).toHaveLength(1)
    const refused = await client.graphql('{ __typename }')
    expect(refused.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_ALLOWED')
    expect(exchanges).toHaveLength(2)
    expect(querySent(exchanges[1] as Exchange)).toBeUndefined()
  })
})
