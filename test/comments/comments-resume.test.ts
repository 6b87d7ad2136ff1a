// commentAdded resumed after a disconnect, with the real clients and a raw event stream: every
// event of a stream carries its comment's id; a stream sent again with Last-Event-ID, or a
// subscription with `after` (graphql-ws, graphql-sse), first gets the comments it missed, in id
// order, as the caller may see them, then the live ones, none missed and none twice, also when
// they were written through another app on the same database. Bounded: past 1,000 missed, one
// BAD_REQUEST; the replay is charged to the rate limit.
import { sql } from 'kysely'
import { createClient as createSseClient } from 'graphql-sse'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { MAX_REPLAYED } from '../../src/comments/comments.stream.js'
import { createFactories } from '../helpers/factories.js'
import { disposeWsClients, gather, listening, type Listening, settle, subscribed, wsClient } from '../helpers/subscription-clients.js'
import { until } from '../helpers/until.js'

afterEach(disposeWsClients)

interface StreamEvent {
  id: string | undefined
  event: string
  data: unknown
}

/** An event stream read as its events arrive; `close` ends it from the client's side. */
async function openStream(url: string, query: string, headers: Record<string, string> = {}) {
  const controller = new AbortController()
  const response = await fetch(`${url}/graphql/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query }),
    signal: controller.signal,
  })
  const events: StreamEvent[] = []
  const reading = (async () => {
    const decoder = new TextDecoder()
    let buffered = ''
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true })
        let end
        while ((end = buffered.indexOf('\n\n')) !== -1) {
          const block = buffered.slice(0, end)
          buffered = buffered.slice(end + 2)
          const field = (name: string) =>
            block
              .split('\n')
              .find((line) => line.startsWith(`${name}: `))
              ?.slice(name.length + 2)
          const data = field('data')
          events.push({ id: field('id'), event: field('event') ?? 'message', data: data === undefined || data === '' ? null : JSON.parse(data) })
        }
      }
    } catch {
      // Aborted by close().
    }
  })()
  return {
    status: response.status,
    events,
    contents: () =>
      events.filter((e) => e.event === 'next').map((e) => (e.data as { data?: { commentAdded?: { content?: string } } }).data?.commentAdded?.content),
    close: async () => {
      controller.abort()
      await reading
    },
  }
}

/** `count` comments by bob on the post, straight into the store (as an import would): `${prefix} 0`, `${prefix} 1`, … */
async function insertComments(s: Listening, postId: number, count: number, prefix: string): Promise<void> {
  const now = new Date().toISOString()
  const rows = Array.from({ length: count }, (_, i) => ({
    post_id: postId,
    author_id: s.t.bob.id,
    content: `${prefix} ${i}`,
    created_at: now,
    updated_at: now,
  }))
  for (let i = 0; i < rows.length; i += 250)
    await s.t.database.db
      .insertInto('comments')
      .values(rows.slice(i, i + 250))
      .execute()
}

const contentOf = (result: unknown) => (result as { data?: { commentAdded?: { content?: string } } }).data?.commentAdded?.content

describe('commentAdded resumed', () => {
  let s: Listening
  let published: { id: number; userId: number }
  let draft: { id: number; userId: number }
  let make: ReturnType<typeof createFactories>

  beforeAll(async () => {
    s = await listening()
    make = createFactories(s.t)
    published = await make.post(s.t.alice, { title: 'resumed' })
    draft = await make.draft(s.t.alice, { title: 'a draft' })
  })
  afterAll(() => s.t.close())

  const comment = async (content: string, post = published, author = s.t.bob) => (await make.comment(post, author, { content })).id

  it('gives each event of a stream its comment id, and a stream sent again with Last-Event-ID what it missed, then the live ones', async () => {
    await subscribed(s.t, 0)
    const query = `subscription { commentAdded(postId: "${published.id}") { id content } }`
    const first = await openStream(s.http, query)
    expect(first.status).toBe(200)
    await subscribed(s.t, 1)
    const a = await comment('A')
    await until(() => first.contents().includes('A'))
    const [event] = first.events.filter((e) => e.event === 'next')
    expect(event?.id).toBe(String(a))
    await first.close()
    await subscribed(s.t, 0)

    // Away: two comments on the post, and one on the draft it may not see.
    await comment('B')
    await comment('on the draft', draft, s.t.alice)
    await comment('C')
    const again = await openStream(s.http, query, { 'last-event-id': event?.id ?? '' })
    await until(() => again.contents().includes('C'))
    await subscribed(s.t, 1)
    await comment('D')
    await until(() => again.contents().includes('D'))
    await settle()
    expect(again.contents()).toEqual(['B', 'C', 'D'])
    const ids = again.events.filter((e) => e.event === 'next').map((e) => Number(e.id))
    expect(ids).toEqual([...ids].sort((x, y) => x - y))
    await again.close()
  })

  it('resumes a graphql-ws subscription from `after`, the caller seeing what they may: drafts for their owner', async () => {
    const before = await comment('before')
    await comment('E')
    await comment('F on the draft', draft, s.t.alice)
    const anonymous = gather(wsClient(s.ws), `subscription($a: ID) { commentAdded(after: $a) { id content } }`, { a: String(before) })
    const owner = gather(wsClient(s.ws, s.t.tokens.alice), `subscription($a: ID) { commentAdded(after: $a) { id content } }`, { a: String(before) })
    await until(() => anonymous.received.length === 1 && owner.received.length === 2)
    await subscribed(s.t, 2)
    await comment('G')
    await until(() => anonymous.received.map(contentOf).includes('G') && owner.received.map(contentOf).includes('G'))
    await settle()
    expect(anonymous.received.map(contentOf)).toEqual(['E', 'G'])
    expect(owner.received.map(contentOf)).toEqual(['E', 'F on the draft', 'G'])
    expect([anonymous.errors, owner.errors]).toEqual([[], []])
  })

  it('gives a subscriber resuming from the same id as another what was written between the two', async () => {
    const from = await comment('shared start')
    await comment('J')
    const query = `subscription($a: ID) { commentAdded(postId: "${published.id}", after: $a) { content } }`
    const one = gather(wsClient(s.ws), query, { a: String(from) })
    await until(() => one.received.length === 1)
    await comment('K')
    const two = gather(wsClient(s.ws), query, { a: String(from) })
    await until(() => two.received.length === 2)
    await settle()
    expect(one.received.map(contentOf)).toEqual(['J', 'K'])
    expect(two.received.map(contentOf)).toEqual(['J', 'K'])
  })

  it('resumes a graphql-sse client from `after`', async () => {
    const before = await comment('before sse')
    await comment('H')
    const client = createSseClient({ url: `${s.http}/graphql/stream`, retryAttempts: 0 })
    const received: unknown[] = []
    const stop = client.subscribe(
      { query: `subscription($a: ID) { commentAdded(after: $a) { content } }`, variables: { a: String(before) } },
      { next: (value) => void received.push(value), error: () => undefined, complete: () => undefined },
    )
    try {
      await until(() => received.length === 1)
      await subscribed(s.t, 1)
      await comment('I')
      await until(() => received.length === 2)
      expect(received.map(contentOf)).toEqual(['H', 'I'])
    } finally {
      stop()
      client.dispose()
    }
  })

  it('replays what another app on the same database wrote while the client was away (another instance)', async () => {
    const before = await comment('before the other app')
    const other = await buildApp(s.t.config)
    try {
      const written = await other.inject({
        method: 'POST',
        url: `/api/v1/users/${published.userId}/posts/${published.id}/comments`,
        headers: { authorization: `Bearer ${s.t.tokens.bob}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ content: 'from the other app' }),
      })
      expect(written.statusCode).toBe(201)
    } finally {
      await other.close()
    }
    const resumed = await openStream(s.http, `subscription { commentAdded { content } }`, { 'last-event-id': String(before) })
    await until(() => resumed.contents().includes('from the other app'))
    expect(resumed.contents()).toEqual(['from the other app'])
    await resumed.close()
  })

  it('delivers what a resumed stream missed in its caller’s turns of the scheduler, as other work takes its turns', async () => {
    const before = await comment('before the turns')
    await insertComments(s, published.id, 300, 'in turns')
    const scheduler = s.t.scheduler!
    // Sampled on every turn of the loop once the first missed comment has arrived: the replay's
    // deliveries hold slots, or wait for them, as they go.
    let seen = 0
    let sampling = true
    const arrived = { events: [] as unknown[] }
    const sample = () => {
      if (arrived.events.length > 0) {
        const { running, waiting } = scheduler.load()
        seen = Math.max(seen, running + waiting)
      }
      if (sampling) setImmediate(sample)
    }
    sample()
    const resumed = await openStream(s.http, `subscription { commentAdded(postId: "${published.id}") { content } }`, { 'last-event-id': String(before) })
    arrived.events = resumed.events
    await until(() => resumed.contents().length >= 300, 10_000)
    sampling = false
    expect(resumed.contents().slice(0, 2)).toEqual(['in turns 0', 'in turns 1'])
    expect(seen).toBeGreaterThan(0)
    await resumed.close()
  })

  it('refuses an `after` that is not an id, and more than 1,000 missed comments, with BAD_REQUEST', async () => {
    const bad = gather(wsClient(s.ws), `subscription { commentAdded(after: "abc") { id } }`)
    await until(() => bad.errors.length + bad.received.length > 0)
    expect(JSON.stringify([...bad.errors, ...bad.received])).toContain('BAD_REQUEST')

    const before = await comment('before many')
    await insertComments(s, published.id, MAX_REPLAYED + 1, 'many')
    const tooMany = gather(wsClient(s.ws), `subscription($a: ID) { commentAdded(after: $a) { id } }`, { a: String(before) })
    await until(() => tooMany.errors.length + tooMany.received.length > 0)
    const refusal = JSON.stringify([...tooMany.errors, ...tooMany.received])
    expect(refusal).toContain('BAD_REQUEST')
    expect(refusal).toContain('read them from the list first')

    // Exactly 1,000 are replayed.
    const { rows: second } = await sql<{ id: number }>`select id from comments where content = 'many 0'`.execute(s.t.database.db)
    const all = gather(wsClient(s.ws), `subscription($a: ID) { commentAdded(after: $a) { id } }`, { a: String(second[0]?.id) })
    await until(() => all.received.length === MAX_REPLAYED, 10_000)
    expect(all.errors).toEqual([])
  })
})

describe('a resumed subscription and the rate limit, on both transports', () => {
  let s: Listening
  beforeAll(async () => {
    s = await listening({ RATE_LIMIT_AUTHENTICATED_MAX: '6' })
  })
  afterAll(() => s.t.close())

  it('charges the replay as a list read of that many: past the allowance, RATE_LIMITED and nothing replayed', async () => {
    const make = createFactories(s.t)
    const post = await make.post(s.t.alice, { title: 'metered' })
    const anchor = (await make.comment(post, s.t.bob, { content: 'anchor' })).id
    await insertComments(s, post.id, 1000, 'm')
    // A fresh window: the allowance of 6 whole.
    s.t.clock.advance(60_000)
    // 1,000 events of a selection of cost 12: 12 points, past the 5 the stream's own request left.
    const query = `subscription { commentAdded(after: "${anchor}") { id content createdAt updatedAt author { id name email } post { id title content } } }`
    const refused = await openStream(s.http, query, { authorization: `Bearer ${s.t.tokens.alice}` })
    // The stream itself was admitted: the refusal is its replay's.
    expect(refused.status).toBe(200)
    await until(() => refused.events.length > 0)
    expect(JSON.stringify(refused.events)).toContain('RATE_LIMITED')
    expect(refused.contents().filter((content) => content !== undefined)).toEqual([])
    await refused.close()

    // The same over the WebSocket: the subscribe message took its point, the replay is refused.
    s.t.clock.advance(60_000)
    const overWs = gather(wsClient(s.ws, s.t.tokens.alice), query)
    await until(() => overWs.errors.length + overWs.received.length > 0)
    expect(JSON.stringify([...overWs.errors, ...overWs.received])).toContain('RATE_LIMITED')
    expect(overWs.received.map(contentOf).filter((content) => content !== undefined)).toEqual([])

    s.t.clock.advance(60_000)
    // { id }: 1,000 events of cost 1, 1 point.
    const cheap = await openStream(s.http, `subscription { commentAdded(after: "${anchor}") { id } }`, {
      authorization: `Bearer ${s.t.tokens.alice}`,
    })
    await until(() => cheap.events.filter((e) => e.event === 'next').length === 1000, 10_000)
    await cheap.close()
  })
})
