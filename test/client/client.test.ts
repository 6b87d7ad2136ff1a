// threadline/client against a live server (a listening port, the real fetch and the ws package):
// every REST method, the pagination iterator, the client rules docs/client.md gives (429/Retry-After,
// 401), the ETag cache, GraphQL and a subscription.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import WebSocket from 'ws'
import { type ClientOptions, createClient, ThreadlineError, type ThreadlineClient } from '../../src/client/index.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

interface Live {
  t: TestApp
  baseUrl: string
}

async function live(env: Record<string, string> = {}): Promise<Live> {
  const t = await buildTestApp(env)
  const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 })
  return { t, baseUrl }
}

/** A fetch that records what was asked and answered, around the real one. */
function recordingFetch() {
  const exchanges: { method: string; url: string; ifNoneMatch: string | null; status: number }[] = []
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init)
    const response = await globalThis.fetch(request)
    exchanges.push({ method: request.method, url: request.url, ifNoneMatch: request.headers.get('If-None-Match'), status: response.status })
    return response
  }
  return { fetch, exchanges }
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = []
  for await (const item of iterable) items.push(item)
  return items
}

async function rejection(promise: Promise<unknown>): Promise<ThreadlineError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(ThreadlineError)
  return error as ThreadlineError
}

describe.each(['v1', 'v2'] as const)('the client speaking %s', (version) => {
  let s: Live
  let admin: ThreadlineClient
  let alice: ThreadlineClient
  const clientFor = (options: Partial<ClientOptions> = {}) => createClient({ baseUrl: s.baseUrl, version, ...options })

  beforeAll(async () => {
    s = await live()
    admin = clientFor({ token: s.t.tokens.admin })
    alice = clientFor({ token: s.t.tokens.alice })
  })
  afterAll(() => s.t.close())

  it('creates, reads, replaces, changes, lists and deletes users', async () => {
    const created = await admin.users.create({ name: 'Grace', email: 'grace@example.com', age: 85 })
    expect(created).toMatchObject({ name: 'Grace', email: 'grace@example.com', age: 85, role: 'user' })
    expect(await admin.users.get(created.id)).toEqual(created)
    expect(await admin.users.replace(created.id, { name: 'Grace Hopper', email: 'grace@example.com' })).toMatchObject({ name: 'Grace Hopper', age: null })
    expect(await admin.users.update(created.id, { age: 86 })).toMatchObject({ name: 'Grace Hopper', age: 86 })
    const page = await admin.users.list({ name: ['Grace Hopper'] })
    expect(page.data.map((user) => user.id)).toEqual([created.id])
    expect(page.meta.pagination.nextCursor).toBeNull()
    await admin.users.remove(created.id)
    const missing = await rejection(admin.users.get(created.id))
    expect({ status: missing.status, code: missing.code }).toEqual({ status: 404, code: 'NOT_FOUND' })
  })

  it("creates, reads, replaces, changes, lists and deletes a user's posts", async () => {
    const userId = s.t.alice.id
    const post = await alice.posts.create(userId, { title: 'Hello', content: 'First post' })
    expect(post).toMatchObject({ userId, title: 'Hello', status: 'published' })
    expect(await alice.posts.get(userId, post.id)).toEqual(post)
    expect(await alice.posts.replace(userId, post.id, { title: 'Hello again', content: 'Rewritten', status: 'draft' })).toMatchObject({
      title: 'Hello again',
      status: 'draft',
      publishedAt: null,
    })
    expect(await alice.posts.update(userId, post.id, { status: 'published' })).toMatchObject({ title: 'Hello again', status: 'published' })
    expect((await alice.posts.list(userId, { q: 'again' })).data.map((p) => p.id)).toEqual([post.id])
    await alice.posts.remove(userId, post.id)
    expect((await rejection(alice.posts.get(userId, post.id))).status).toBe(404)
  })

  it("creates, reads, changes, lists and deletes a post's comments", async () => {
    const userId = s.t.alice.id
    const post = await alice.posts.create(userId, { title: 'Commented', content: '.' })
    const comment = await alice.comments.create(userId, post.id, { content: 'Nice' })
    expect(comment).toMatchObject({ postId: post.id, authorId: userId, author: { id: userId, name: 'Alice' }, content: 'Nice' })
    expect(await alice.comments.get(userId, post.id, comment.id)).toEqual(comment)
    expect(await alice.comments.update(userId, post.id, comment.id, { content: 'Very nice' })).toMatchObject({ content: 'Very nice' })
    expect((await alice.comments.list(userId, post.id)).data.map((c) => c.content)).toEqual(['Very nice'])
    await alice.comments.remove(userId, post.id, comment.id)
    expect((await rejection(alice.comments.get(userId, post.id, comment.id))).code).toBe('NOT_FOUND')
  })

  it("creates, reads, changes, lists and deletes a user's todos", async () => {
    const userId = s.t.alice.id
    const todo = await alice.todos.create(userId, { text: 'Write the client' })
    expect(todo).toMatchObject({ userId, text: 'Write the client', completed: false })
    expect(await alice.todos.get(userId, todo.id)).toEqual(todo)
    expect(await alice.todos.update(userId, todo.id, { completed: true })).toMatchObject({ completed: true })
    expect((await alice.todos.list(userId, { completed: [true] })).data.map((t) => t.id)).toEqual([todo.id])
    await alice.todos.remove(userId, todo.id)
    expect((await rejection(alice.todos.get(userId, todo.id))).status).toBe(404)
  })

  it('signs in for a token, uses it, and revokes it', async () => {
    const anonymous = clientFor()
    const issued = await anonymous.tokens.create({ email: 'alice@example.com', password: 'correct horse battery' })
    expect(issued).toEqual({ token: expect.any(String) as string, expiresAt: expect.any(String) as string, scope: 'write' })
    anonymous.setToken(issued.token)
    await anonymous.todos.create(s.t.alice.id, { text: 'signed in' })
    await anonymous.tokens.revokeCurrent()
    expect((await rejection(anonymous.todos.create(s.t.alice.id, { text: 'revoked' }))).code).toBe('UNAUTHENTICATED')
  })

  it('throws a ThreadlineError with the details of a refused body', async () => {
    const error = await rejection(admin.users.create({ name: '', email: 'not an address' }))
    expect(error).toMatchObject({ name: 'ThreadlineError', status: 422, code: 'VALIDATION_ERROR' })
    expect(error.details?.map((detail) => detail.field).sort()).toEqual(['email', 'name'])
  })

  it('sends select and include (arrays as repeated parameters) and answers the items they shape', async () => {
    const userId = s.t.alice.id
    const post = await alice.posts.create(userId, { title: 'Shaped', content: '.' })
    await admin.comments.create(userId, post.id, { content: 'First' })
    await admin.comments.create(userId, post.id, { content: 'Second' })
    const page = await alice.posts.list(userId, { select: ['title'], include: ['author', 'comments'], 'comments.limit': 1 })
    const item = page.data.find((shown) => shown.id === post.id)
    expect(item && Object.keys(item)).toEqual(['id', 'title', 'author', 'comments'])
    expect(item?.author).toEqual(await alice.users.get(userId))
    expect(item?.comments.map((comment) => comment.content)).toEqual(['Second'])
    const one = await alice.posts.get(userId, post.id, { select: ['status'] })
    expect(one).toEqual({ id: post.id, status: 'published' })
    const comments = await alice.comments.list(userId, post.id, { include: ['author'] })
    expect(comments.data[0]?.author.email).toBe('ada@example.com')
    const shownUser = await alice.users.get(userId, { select: ['name'], include: ['posts'], 'posts.limit': 1 })
    expect(shownUser).toEqual({ id: userId, name: 'Alice', posts: [expect.objectContaining({ id: post.id })] })
    const todos = await collect(alice.todos.all(userId, { select: ['text'] }))
    for (const todo of todos) expect(Object.keys(todo)).toEqual(['id', 'text'])
  })

  it('iterates over every item of a collection, following nextCursor across pages', async () => {
    const owner = await s.t.createUser({ name: 'Many', email: `many-${version}@example.com` })
    const writer = clientFor({ token: await s.t.tokenFor(owner.id) })
    const texts = Array.from({ length: 7 }, (_, i) => `todo ${i}`)
    for (const text of texts) await writer.todos.create(owner.id, { text })

    const { fetch, exchanges } = recordingFetch()
    const reader = clientFor({ fetch })
    const all = await collect(reader.todos.all(owner.id, { limit: 3, sort: 'text' }))
    expect(all.map((todo) => todo.text)).toEqual(texts)
    expect(exchanges.length).toBe(3)
    expect(exchanges.slice(1).every((exchange) => new URL(exchange.url).searchParams.has('cursor'))).toBe(true)
    expect((await collect(reader.users.all({ limit: 2 }))).length).toBe((await reader.users.list({ limit: 100 })).data.length)
  })
})

describe('the client on an ETag cache', () => {
  let s: Live
  beforeAll(async () => {
    s = await live()
  })
  afterAll(() => s.t.close())

  it('revalidates a GET with If-None-Match and returns the remembered body on 304', async () => {
    const { fetch, exchanges } = recordingFetch()
    const client = createClient({ baseUrl: s.baseUrl, fetch, etagCache: true })
    const first = await client.users.get(s.t.alice.id)
    const second = await client.users.get(s.t.alice.id)
    expect(second).toEqual(first)
    expect(exchanges.map(({ status, ifNoneMatch }) => ({ status, revalidated: ifNoneMatch !== null }))).toEqual([
      { status: 200, revalidated: false },
      { status: 304, revalidated: true },
    ])
  })

  it('answers with the new body once the resource changed', async () => {
    const { fetch, exchanges } = recordingFetch()
    const client = createClient({ baseUrl: s.baseUrl, fetch, etagCache: true, token: s.t.tokens.bob })
    await client.users.get(s.t.bob.id)
    await client.users.update(s.t.bob.id, { age: 42 })
    expect(await client.users.get(s.t.bob.id)).toMatchObject({ age: 42 })
    expect(exchanges.map((exchange) => exchange.status)).toEqual([200, 200, 200])
  })

  it('does not send If-None-Match without the cache', async () => {
    const { fetch, exchanges } = recordingFetch()
    const client = createClient({ baseUrl: s.baseUrl, fetch })
    await client.users.get(s.t.alice.id)
    await client.users.get(s.t.alice.id)
    expect(exchanges.map((exchange) => [exchange.status, exchange.ifNoneMatch])).toEqual([
      [200, null],
      [200, null],
    ])
  })
})

describe('the client under a tiny rate limit', () => {
  let s: Live
  beforeAll(async () => {
    s = await live({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '1' })
  })
  afterAll(() => s.t.close())

  /** Moves the server's clock to a fresh window, so each test starts with its full allowance. */
  const freshWindow = () => s.t.clock.advance(1000)

  it('waits Retry-After on 429 and retries until it succeeds', async () => {
    freshWindow()
    const { fetch, exchanges } = recordingFetch()
    const client = createClient({ baseUrl: s.baseUrl, fetch })
    for (let i = 0; i < 3; i++) expect((await client.users.get(s.t.alice.id)).id).toBe(s.t.alice.id)
    expect(exchanges.map((exchange) => exchange.status)).toContain(429)
    expect(exchanges.at(-1)?.status).toBe(200)
  })

  it('throws RATE_LIMITED once its retries are spent (maxRetries 0: at once)', async () => {
    freshWindow()
    const { fetch, exchanges } = recordingFetch()
    const client = createClient({ baseUrl: s.baseUrl, fetch, maxRetries: 0 })
    await client.users.get(s.t.alice.id)
    await client.users.get(s.t.alice.id)
    const error = await rejection(client.users.get(s.t.alice.id))
    expect({ status: error.status, code: error.code }).toEqual({ status: 429, code: 'RATE_LIMITED' })
    expect(exchanges.map((exchange) => exchange.status)).toEqual([200, 200, 429])
  })
})

describe('the client when an answer is lost', () => {
  let s: Live
  beforeAll(async () => {
    s = await live()
  })
  afterAll(() => s.t.close())

  it('retries a create whose answer never came with the same key: one post, and the client gets it', async () => {
    // The first POST reaches the server and is answered, but the answer is lost on the way back.
    let lost = 0
    const keys: (string | null)[] = []
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const request = new Request(input, init)
      keys.push(request.headers.get('Idempotency-Key'))
      const response = await globalThis.fetch(request)
      if (request.method === 'POST' && lost++ === 0) {
        await response.body?.cancel()
        throw new TypeError('fetch failed')
      }
      return response
    }
    const client = createClient({ baseUrl: s.baseUrl, fetch, token: s.t.tokens.alice })
    const post = await client.posts.create(s.t.alice.id, { title: 'Answer lost once', content: 'Written once' })
    expect(post.title).toBe('Answer lost once')
    expect(keys).toHaveLength(2)
    expect(keys[1]).toBe(keys[0])
    const titles = (await client.posts.list(s.t.alice.id, { limit: 100 })).data.map((item) => item.title)
    expect(titles.filter((title) => title === 'Answer lost once')).toHaveLength(1)
  })

  it('does the same for a GraphQL mutation', async () => {
    let lost = 0
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const response = await globalThis.fetch(new Request(input, init))
      if (lost++ === 0) {
        await response.body?.cancel()
        throw new TypeError('fetch failed')
      }
      return response
    }
    const client = createClient({ baseUrl: s.baseUrl, fetch, token: s.t.tokens.alice })
    const result = await client.graphql<{ addTodo: { text: string } }>('mutation { addTodo(text: "Lost answer") { text } }')
    expect(result.data?.addTodo.text).toBe('Lost answer')
    const todos = await client.todos.list(s.t.alice.id, { limit: 100 })
    expect(todos.data.filter((todo) => todo.text === 'Lost answer')).toHaveLength(1)
  })
})

describe('the client on a 401', () => {
  let s: Live
  beforeAll(async () => {
    s = await live()
  })
  afterAll(() => s.t.close())

  it('calls onUnauthorized once and throws, without retrying', async () => {
    const { fetch, exchanges } = recordingFetch()
    const onUnauthorized = vi.fn()
    const client = createClient({ baseUrl: s.baseUrl, fetch, token: 'not-a-token', onUnauthorized })
    const error = await rejection(client.users.list())
    expect({ status: error.status, code: error.code }).toEqual({ status: 401, code: 'UNAUTHENTICATED' })
    expect(onUnauthorized).toHaveBeenCalledTimes(1)
    expect(onUnauthorized).toHaveBeenCalledWith(error)
    expect(exchanges.length).toBe(1)
  })

  it('does the same for a GraphQL query and for a subscription refused for its token', async () => {
    const onUnauthorized = vi.fn()
    const client = createClient({ baseUrl: s.baseUrl, token: 'not-a-token', onUnauthorized, webSocketImpl: WebSocket })
    try {
      const queried = await rejection(client.graphql('{ users { id } }'))
      expect({ status: queried.status, code: queried.code }).toEqual({ status: 401, code: 'UNAUTHENTICATED' })
      const subscribed = await rejection(client.subscribe('subscription { commentAdded { id } }').next())
      expect(subscribed).toBeInstanceOf(ThreadlineError)
      expect({ status: subscribed.status, code: subscribed.code }).toEqual({ status: 401, code: 'UNAUTHENTICATED' })
      expect(onUnauthorized.mock.calls.map(([error]) => error)).toEqual([queried, subscribed])
    } finally {
      await client.close()
    }
  })
})

describe('the client over GraphQL', () => {
  let s: Live
  let client: ThreadlineClient
  beforeAll(async () => {
    s = await live()
    client = createClient({ baseUrl: s.baseUrl, token: s.t.tokens.bob, webSocketImpl: WebSocket })
  })
  afterAll(async () => {
    await client.close()
    await s.t.close()
  })

  it('runs a query with variables', async () => {
    const result = await client.graphql<{ user: { name: string } }>('query($id: ID!) { user(id: $id) { name } }', { id: String(s.t.alice.id) })
    expect(result).toEqual({ data: { user: { name: 'Alice' } } })
  })

  it('reports GraphQL errors in the result', async () => {
    const result = await client.graphql('{ nope }')
    expect(result.errors?.length).toBeGreaterThan(0)
  })

  it('receives, over a subscription, a comment made over REST', async () => {
    const post = await createClient({ baseUrl: s.baseUrl, token: s.t.tokens.alice }).posts.create(s.t.alice.id, { title: 'Watched', content: '.' })
    const events = client.subscribe<{ commentAdded: { content: string; author: { name: string } } }>(
      'subscription($p: ID) { commentAdded(postId: $p) { content author { name } } }',
      { p: String(post.id) },
    )
    const first = events.next()
    await vi.waitFor(() => expect(s.t.app.subscriptionStats.subscriptions).toBe(1), { timeout: 5000 })
    await client.comments.create(s.t.alice.id, post.id, { content: 'Seen live' })
    expect(await first).toEqual({ done: false, value: { data: { commentAdded: { content: 'Seen live', author: { name: 'Bob' } } } } })
    await events.return?.()
    await vi.waitFor(() => expect(s.t.app.subscriptionStats.subscriptions).toBe(0), { timeout: 5000 })
  })
})
