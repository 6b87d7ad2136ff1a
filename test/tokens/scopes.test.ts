// Scoped tokens: a `read` token reads (GET, queries, subscriptions) and is refused every write,
// 403 FORBIDDEN with `WWW-Authenticate: Bearer error="insufficient_scope", scope="write"` over REST
// and code FORBIDDEN over each GraphQL transport, with nothing written; a `write` token does all its
// user may. Answers to a request with a token carry X-OAuth-Scopes and X-Accepted-OAuth-Scopes.
import { createClient } from 'graphql-sse'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createFactories, type Factories } from '../helpers/factories.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'
import { disposeWsClients, gather, type Listening, listening, subscribed, wsClient } from '../helpers/subscription-clients.js'
import { until } from '../helpers/until.js'

let s: Listening
let f: Factories
let readToken: string
beforeAll(async () => {
  s = await listening()
  f = createFactories(s.t)
  readToken = await s.t.tokenFor(s.t.alice.id, undefined, 'read')
})
afterEach(() => disposeWsClients())
afterAll(() => s.t.close())

const postsOf = async (userId: number) => (await s.t.request({ method: 'GET', url: `/api/v1/users/${userId}/posts` })).json().data.length as number

describe('a read token over REST', () => {
  it('reads, and says its scope and the scope the route accepts', async () => {
    const res = await s.t.request({ method: 'GET', url: `/api/v1/users/${s.t.alice.id}`, token: readToken })
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-oauth-scopes']).toBe('read')
    expect(res.headers['x-accepted-oauth-scopes']).toBe('read')
  })

  it.each([
    ['POST', () => `/api/v1/users/${s.t.alice.id}/posts`, { title: 'Not by a read token', content: 'No.' }],
    ['PATCH', () => `/api/v1/users/${s.t.alice.id}`, { age: 99 }],
    ['PUT', () => `/api/v1/users/${s.t.alice.id}`, { name: 'Alice', email: 'alice@example.com' }],
    ['DELETE', () => `/api/v1/users/${s.t.alice.id}`, undefined],
  ] as const)('is refused %s with 403 insufficient_scope, and nothing changes', async (method, url, json) => {
    const before = (await s.t.request({ method: 'GET', url: `/api/v1/users/${s.t.alice.id}` })).json().data
    const postsBefore = await postsOf(s.t.alice.id)
    const res = await s.t.request({ method, url: url(), token: readToken, ...(json === undefined ? {} : { json }) })
    expect(res.statusCode).toBe(403)
    expect(res.json().error).toEqual({ code: 'FORBIDDEN', message: `The token's scope does not allow this: it needs the "write" scope` })
    expect(res.headers['www-authenticate']).toBe('Bearer realm="threadline", error="insufficient_scope", scope="write"')
    expect(res.headers['x-oauth-scopes']).toBe('read')
    expect(res.headers['x-accepted-oauth-scopes']).toBe('write')
    expect((await s.t.request({ method: 'GET', url: `/api/v1/users/${s.t.alice.id}` })).json().data).toEqual(before)
    expect(await postsOf(s.t.alice.id)).toBe(postsBefore)
  })

  it('may revoke itself', async () => {
    const token = await s.t.tokenFor(s.t.bob.id, undefined, 'read')
    expect((await s.t.request({ method: 'DELETE', url: '/api/v1/tokens/current', token })).statusCode).toBe(204)
    expect((await s.t.request({ method: 'GET', url: '/api/v1/users', token })).statusCode).toBe(401)
  })

  it('is not asked its scope where nothing is written: a 405 stays a 405', async () => {
    const res = await s.t.request({ method: 'PATCH', url: '/api/v1/users', token: readToken, json: {} })
    expect(res.statusCode).toBe(405)
  })

  it('is not asked its scope where nothing is served: a 404 stays a 404', async () => {
    const res = await s.t.request({ method: 'DELETE', url: '/api/v1/nowhere', token: readToken })
    expect(res.statusCode).toBe(404)
    expect(res.json().error.code).toBe('NOT_FOUND')
  })
})

describe('a write token over REST', () => {
  it('writes, and says so', async () => {
    const res = await s.t.request({ method: 'PATCH', url: `/api/v1/users/${s.t.bob.id}`, token: s.t.tokens.bob, json: { age: 42 } })
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-oauth-scopes']).toBe('write')
    expect(res.headers['x-accepted-oauth-scopes']).toBe('write')
  })

  it('reads: a write token has the read scope too', async () => {
    const res = await s.t.request({ method: 'GET', url: '/api/v1/users', token: s.t.tokens.bob })
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-accepted-oauth-scopes']).toBe('read')
  })

  it('is answered without the headers when no token is sent', async () => {
    const res = await s.t.request({ method: 'GET', url: '/api/v1/users' })
    expect(res.headers['x-oauth-scopes']).toBeUndefined()
    expect(res.headers['x-accepted-oauth-scopes']).toBeUndefined()
  })
})

describe('signing in for a scope', () => {
  const signIn = (json: unknown) => s.t.request({ method: 'POST', url: '/api/v1/tokens', json })

  it('issues a read token when asked, and a write token by default', async () => {
    const read = await signIn({ email: 'alice@example.com', password: 'correct horse battery', scope: 'read' })
    expect(read.statusCode).toBe(201)
    expect(read.json().data.scope).toBe('read')
    const refused = await s.t.request({ method: 'PATCH', url: `/api/v1/users/${s.t.alice.id}`, token: read.json().data.token, json: { age: 30 } })
    expect(refused.statusCode).toBe(403)

    const write = await signIn({ email: 'alice@example.com', password: 'correct horse battery' })
    expect(write.json().data.scope).toBe('write')
    const done = await s.t.request({ method: 'PATCH', url: `/api/v1/users/${s.t.alice.id}`, token: write.json().data.token, json: { age: 30 } })
    expect(done.statusCode).toBe(200)
  })

  it('refuses an unknown scope with 422', async () => {
    const res = await signIn({ email: 'alice@example.com', password: 'correct horse battery', scope: 'admin' })
    expect(res.statusCode).toBe(422)
    expect(res.json().error.details).toEqual([expect.objectContaining({ field: 'scope' })])
  })
})

describe('a read token over GraphQL', () => {
  const mutation = (title: string) => `mutation { createPost(input: {title: "${title}", content: "No."}) { id } }`

  it('runs queries and is refused mutations FORBIDDEN over POST, nothing written', async () => {
    const before = await postsOf(s.t.alice.id)
    const query = await graphql(s.t, '{ viewer { id } }', { token: readToken })
    expect(query.body).toEqual({ data: { viewer: { id: String(s.t.alice.id) } } })
    expect(query.headers['x-accepted-oauth-scopes']).toBe('read')

    const refused = await graphql(s.t, mutation('over POST'), { token: readToken })
    expect(refused.body.data).toBeUndefined()
    expect(codesOf(refused)).toEqual(['FORBIDDEN'])
    expect(refused.body.errors?.[0]?.message).toContain('"write" scope')
    expect(refused.headers['x-oauth-scopes']).toBe('read')
    expect(refused.headers['x-accepted-oauth-scopes']).toBe('write')
    expect(await postsOf(s.t.alice.id)).toBe(before)
  })

  it('is refused the mutation of a batch, while its query runs', async () => {
    const res = await fetch(`${s.http}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${readToken}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ query: '{ viewer { id } }' }, { query: mutation('in a batch') }]),
    })
    const [query, refused] = (await res.json()) as { data?: unknown; errors?: { extensions: { code: string } }[] }[]
    expect(query).toEqual({ data: { viewer: { id: String(s.t.alice.id) } } })
    expect(refused?.errors?.map((error) => error.extensions.code)).toEqual(['FORBIDDEN'])
  })

  it('is refused a mutation FORBIDDEN over the WebSocket, and subscribes there', async () => {
    const before = await postsOf(s.t.alice.id)
    const client = wsClient(s.ws, readToken)
    const result = await new Promise<{ errors?: readonly { extensions?: { code?: unknown } }[] }>((resolve) => {
      client.subscribe(
        { query: mutation('over the WebSocket') },
        { next: resolve, error: (errors) => resolve({ errors: errors as never }), complete: () => {} },
      )
    })
    expect(result.errors?.map((error) => error.extensions?.code)).toEqual(['FORBIDDEN'])
    expect(await postsOf(s.t.alice.id)).toBe(before)

    const post = await f.post(s.t.bob)
    const events = gather(client, 'subscription ($postId: ID!) { commentAdded(postId: $postId) { content } }', { postId: String(post.id) })
    await subscribed(s.t, 1)
    await f.comment(post, s.t.bob, { content: 'heard by a read token' })
    await until(() => events.received.length === 1)
    expect(events.received[0]).toEqual({ data: { commentAdded: { content: 'heard by a read token' } } })
  })

  it('is refused a mutation FORBIDDEN over the event stream, and subscribes there', async () => {
    const before = await postsOf(s.t.alice.id)
    const refused = await fetch(`${s.http}/graphql/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${readToken}`, accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: mutation('over the event stream') }),
    })
    const body = (await refused.json()) as { errors: { extensions: { code: string } }[] }
    expect(body.errors.map((error) => error.extensions.code)).toEqual(['FORBIDDEN'])
    expect(await postsOf(s.t.alice.id)).toBe(before)

    const client = createClient({ url: `${s.http}/graphql/stream`, headers: { authorization: `Bearer ${readToken}` }, retryAttempts: 0 })
    try {
      const post = await f.post(s.t.bob)
      const heard: unknown[] = []
      const stop = client.subscribe(
        { query: 'subscription ($postId: ID!) { commentAdded(postId: $postId) { content } }', variables: { postId: String(post.id) } },
        { next: (value) => heard.push(value), error: () => {}, complete: () => {} },
      )
      await subscribed(s.t, 1)
      await f.comment(post, s.t.bob, { content: 'streamed to a read token' })
      await until(() => heard.length === 1)
      expect(heard[0]).toEqual({ data: { commentAdded: { content: 'streamed to a read token' } } })
      stop()
    } finally {
      client.dispose()
    }
  })

  it('a write token runs the same mutation', async () => {
    const res = await graphql(s.t, mutation('by a write token'), { token: s.t.tokens.alice })
    expect((res.body.data?.createPost as { id: string }).id).toEqual(expect.any(String))
    expect(res.headers['x-accepted-oauth-scopes']).toBe('write')
  })
})
