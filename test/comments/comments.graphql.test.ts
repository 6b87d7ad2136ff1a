// commentAdded, the comments' subscription, over a real listening server with the real clients:
// graphql-ws (WebSocket, graphql-transport-ws) and graphql-sse (Server-Sent Events): which comments
// reach which subscribers, drafts' included. The transports themselves (auth, refusals, limits) are
// test/graphql/subscriptions.test.ts's.
import { createClient as createSseClient } from 'graphql-sse'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createFactories } from '../helpers/factories.js'
import { disposeWsClients, gather, listening, type Listening, subscribed, wsClient } from '../helpers/subscription-clients.js'
import { until } from '../helpers/until.js'

const SELECTION = '{ id content author { name } }'

/** The comment a test makes after those it looks at: a subscription's deliveries come in order, so once it has arrived, nothing before it is still on its way. */
const LAST = 'the last one'
const said = (received: unknown[]) => received.map((result) => (result as { data?: { commentAdded?: { content?: string } } }).data?.commentAdded?.content)
/** What arrived before LAST, once LAST has. */
const untilLast = async (...subscriptions: { received: unknown[] }[]) => {
  await until(() => subscriptions.every(({ received }) => said(received).includes(LAST)))
  return subscriptions.map(({ received }) => received.slice(0, said(received).indexOf(LAST)))
}

afterEach(disposeWsClients)

describe('commentAdded', () => {
  let s: Listening
  let first: number
  let second: number
  let draft: number

  beforeAll(async () => {
    s = await listening()
    const make = createFactories(s.t)
    first = (await make.post(s.t.alice, { title: 'first' })).id
    second = (await make.post(s.t.alice, { title: 'second' })).id
    draft = (await make.draft(s.t.alice, { title: 'draft' })).id
  })
  afterAll(() => s.t.close())

  const commentOverRest = (postId: number, content: string, token = s.t.tokens.bob) =>
    s.t.request({ method: 'POST', url: `/api/v1/users/${s.t.alice.id}/posts/${postId}/comments`, token, json: { content } })
  const commentOverGraphQL = (postId: number, content: string, token = s.t.tokens.bob) =>
    s.t.request({
      method: 'POST',
      url: '/graphql',
      token,
      json: { query: `mutation { addComment(input: {postId: "${postId}", content: "${content}"}) { id } }` },
    })

  it('delivers comments made over REST and GraphQL to the subscribers of their post and to those of every post, and nothing else', async () => {
    await subscribed(s.t, 0)
    const onFirst = gather(wsClient(s.ws), `subscription($p: ID) { commentAdded(postId: $p) ${SELECTION} }`, { p: String(first) })
    const onSecond = gather(wsClient(s.ws), `subscription($p: ID) { commentAdded(postId: $p) ${SELECTION} }`, { p: String(second) })
    const onAll = gather(wsClient(s.ws), `subscription { commentAdded { content post { title } } }`)
    await subscribed(s.t, 3)

    expect((await commentOverRest(first, 'rest on first')).statusCode).toBe(201)
    expect((await commentOverGraphQL(second, 'graphql on second')).json().errors).toBeUndefined()
    await commentOverRest(first, LAST)
    await commentOverRest(second, LAST)
    const [toFirst, toSecond] = await untilLast(onFirst, onSecond)
    await until(() => said(onAll.received).filter((content) => content === LAST).length === 2)

    expect(toFirst).toEqual([{ data: { commentAdded: { id: expect.any(String) as string, content: 'rest on first', author: { name: 'Bob' } } } }])
    expect(toSecond).toEqual([{ data: { commentAdded: { id: expect.any(String) as string, content: 'graphql on second', author: { name: 'Bob' } } } }])
    expect(onAll.received.slice(0, -2)).toEqual([
      { data: { commentAdded: { content: 'rest on first', post: { title: 'first' } } } },
      { data: { commentAdded: { content: 'graphql on second', post: { title: 'second' } } } },
    ])
    expect([onFirst.errors, onSecond.errors, onAll.errors]).toEqual([[], [], []])
  })

  it('delivers a comment on a draft only to those who may see the draft, and refuses a subscription to it for others', async () => {
    await subscribed(s.t, 0)
    const anonymous = gather(wsClient(s.ws), `subscription { commentAdded { content } }`)
    const owner = gather(wsClient(s.ws, s.t.tokens.alice), `subscription { commentAdded { content } }`)
    const admin = gather(wsClient(s.ws, s.t.tokens.admin), `subscription($p: ID) { commentAdded(postId: $p) { content } }`, { p: String(draft) })
    const refused = gather(wsClient(s.ws, s.t.tokens.bob), `subscription($p: ID) { commentAdded(postId: $p) { content } }`, { p: String(draft) })
    await until(() => refused.received.length + refused.errors.length > 0)
    expect(refused.received).toEqual([
      { errors: [expect.objectContaining({ message: 'Post not found', path: ['commentAdded'], extensions: { code: 'NOT_FOUND' } })] },
    ])
    await subscribed(s.t, 3)

    expect((await commentOverRest(draft, 'secret note', s.t.tokens.alice)).statusCode).toBe(201)
    // On a published post: heard by the subscribers of every post, not by the draft's.
    await commentOverRest(first, LAST)
    const [toOwner, toAnonymous] = await untilLast(owner, anonymous)
    expect(toOwner).toEqual([{ data: { commentAdded: { content: 'secret note' } } }])
    expect(toAnonymous).toEqual([])
    await until(() => admin.received.length === 1)
    expect(admin.received).toEqual([{ data: { commentAdded: { content: 'secret note' } } }])
  })

  it('publishes nothing for a comment that was refused', async () => {
    await subscribed(s.t, 0)
    const all = gather(wsClient(s.ws), `subscription { commentAdded { content } }`)
    await subscribed(s.t, 1)
    expect((await commentOverRest(first, '   ')).statusCode).toBe(422)
    expect((await commentOverRest(424242, 'nowhere')).statusCode).toBe(404)
    expect(
      (await s.t.request({ method: 'POST', url: `/api/v1/users/${s.t.alice.id}/posts/${first}/comments`, json: { content: 'anonymous' } })).statusCode,
    ).toBe(401)
    await commentOverRest(first, LAST)
    expect(await untilLast(all)).toEqual([[]])
  })

  it('delivers over Server-Sent Events with the same selection and filters', async () => {
    await subscribed(s.t, 0)
    const sse = createSseClient({ url: `${s.http}/graphql/stream`, retryAttempts: 0 })
    const received: unknown[] = []
    const dispose = sse.subscribe(
      { query: `subscription($p: ID) { commentAdded(postId: $p) ${SELECTION} }`, variables: { p: String(second) } },
      { next: (value) => received.push(value), error: () => undefined, complete: () => undefined },
    )
    try {
      await subscribed(s.t, 1)
      await commentOverRest(first, 'not for sse')
      await commentOverGraphQL(second, 'for sse')
      // Delivered in order: the comment on the other post, made before, was not delivered or came first.
      await until(() => received.length === 1)
      expect(received).toEqual([{ data: { commentAdded: { id: expect.any(String) as string, content: 'for sse', author: { name: 'Bob' } } } }])
    } finally {
      dispose()
      sse.dispose()
    }
  })
})
