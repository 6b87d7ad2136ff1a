// The DateTime scalar: createdAt, updatedAt and publishedAt answer as the REST API gives them (over
// HTTP and the subscription transports), inputs in any offset name their instant, and a value that
// names no instant both stores hold is refused before execution (BAD_REQUEST, a clear message),
// as a literal or as a variable; with the JIT on and off.
import { createClient as createSseClient } from 'graphql-sse'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, type Factories } from '../helpers/factories.js'
import { codesOf, graphql, type GraphQLAnswer } from '../helpers/graphql-client.js'
import { disposeWsClients, gather, listening, type Listening, subscribed, wsClient } from '../helpers/subscription-clients.js'
import { until } from '../helpers/until.js'

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** The same instant written with another offset: 2024-01-21T00:00:00.000Z at +02:00 is 2024-01-21T02:00:00.000+02:00. */
const atPlusTwo = (instant: string) => new Date(Date.parse(instant) + 2 * 3_600_000).toISOString().replace('Z', '+02:00')

const NOT_INSTANTS = [
  ['words', '"yesterday"'],
  ['a date without a time', '"2024-01-21"'],
  ['a time without an offset', '"2024-01-21T00:00:00"'],
  ['a day that does not exist', '"2024-02-30T00:00:00Z"'],
  ['a month that does not exist', '"2024-13-01T00:00:00Z"'],
  ['year 0', '"0000-12-31T23:00:00Z"'],
  ['an instant in year 0 written in year 1', '"0001-01-01T00:30:00+01:00"'],
  ['a five-digit year', '"10000-01-01T00:00:00Z"'],
  ['a number', '1705795200000'],
] as const

describe.each([
  { jit: 'true', label: 'with the JIT' },
  { jit: 'false', label: 'without the JIT' },
])('DateTime $label', ({ jit }) => {
  let t: TestApp
  let make: Factories

  beforeAll(async () => {
    t = await buildTestApp({ GRAPHQL_JIT: jit })
    make = createFactories(t)
  })
  afterAll(() => t.close())

  /** Runs a document twice (the second run is the compiled one when the JIT is on): both answers must agree. */
  async function twice(query: string, variables?: Record<string, unknown>, token?: string): Promise<GraphQLAnswer> {
    const first = await graphql(t, query, { variables, token })
    const second = await graphql(t, query, { variables, token })
    expect(second.body).toEqual(first.body)
    return first
  }

  it('answers createdAt, updatedAt and publishedAt as the REST API gives them', async () => {
    const post = await make.post(t.alice, { title: 'dated' })
    const draft = await make.draft(t.alice, { title: 'undated' })
    const comment = await make.comment(post, t.bob)
    const todo = await make.todo(t.alice)
    const answer = await twice(
      `query($id: ID!) { user(id: $id) { createdAt updatedAt posts { title publishedAt createdAt updatedAt comments { createdAt updatedAt } } todos { createdAt updatedAt } } }`,
      { id: String(t.alice.id) },
      t.tokens.alice,
    )
    expect(answer.body.errors).toBeUndefined()
    const rest = async (url: string) => (await t.request({ method: 'GET', url, token: t.tokens.alice })).json().data as Record<string, unknown>
    const restUser = await rest(`/api/v1/users/${t.alice.id}`)
    const restDraft = await rest(`/api/v1/users/${t.alice.id}/posts/${draft.id}`)
    expect(answer.body.data).toEqual({
      user: {
        createdAt: restUser.createdAt,
        updatedAt: restUser.updatedAt,
        posts: [
          {
            title: 'dated',
            publishedAt: post.publishedAt,
            createdAt: post.createdAt,
            updatedAt: post.updatedAt,
            comments: [{ createdAt: comment.createdAt, updatedAt: comment.updatedAt }],
          },
          { title: 'undated', publishedAt: null, createdAt: restDraft.createdAt, updatedAt: restDraft.updatedAt, comments: [] },
        ],
        todos: [{ createdAt: todo.createdAt, updatedAt: todo.updatedAt }],
      },
    })
    for (const value of [restUser.createdAt, post.publishedAt, comment.createdAt, todo.updatedAt]) expect(value).toMatch(ISO_UTC)
  })

  it('reads a DateTime written with any offset as the instant it names, as a literal and as a variable', async () => {
    const other = atPlusTwo(t.bob.createdAt)
    expect(other).not.toBe(t.bob.createdAt)
    const literal = await twice(`{ users(filter: {createdAt: ["${other}"]}) { name createdAt } }`)
    expect(literal.body).toEqual({ data: { users: [{ name: 'Bob', createdAt: t.bob.createdAt }] } })
    const variable = await twice('query($at: DateTime!) { users(filter: {createdAt: [$at]}) { name } }', { at: other })
    expect(variable.body).toEqual({ data: { users: [{ name: 'Bob' }] } })
  })

  it.each(NOT_INSTANTS)('refuses %s as a DateTime literal while validating the document, saying what a DateTime is', async (_what, literal) => {
    for (const args of [`filter: {createdAt: [${literal}]}`, `where: {updatedAt: {gte: ${literal}}}`]) {
      const answer = await twice(`{ users(${args}) { id } }`)
      expect(codesOf(answer), args).toEqual(['BAD_REQUEST'])
      expect(answer.body.data).toBeUndefined()
      const [error] = answer.body.errors ?? []
      expect(error?.message).toMatch(/DateTime/)
      expect(error?.message).toMatch(/ISO 8601/)
      expect(error?.locations).toEqual([{ line: 1, column: expect.any(Number) as number }])
    }
  })

  // graphql-jit words a refused variable tersely ("Expected type DateTime."): the compiled form's
  // refusal is judged again by graphql-js, so every run names the variable and says what a DateTime is.
  it.each(NOT_INSTANTS)('refuses %s as a DateTime variable before running the operation, naming the variable', async (_what, literal) => {
    const value: unknown = JSON.parse(literal)
    const cases: [string, Record<string, unknown>, string][] = [
      ['query($at: DateTime!) { users(filter: {createdAt: [$at]}) { id } }', { at: value }, '$at'],
      ['query($where: UserWhere) { users(where: $where) { id } }', { where: { createdAt: { lt: value } } }, '$where'],
    ]
    for (const [query, variables, name] of cases) {
      for (const run of ['first', 'second']) {
        const answer = await graphql(t, query, { variables })
        expect(codesOf(answer), `${query} (${run} run)`).toEqual(['BAD_REQUEST'])
        expect(answer.body.data).toBeUndefined()
        const message = answer.body.errors?.[0]?.message
        expect(message, `${query} (${run} run)`).toContain(`Variable "${name}"`)
        expect(message).toMatch(/DateTime must be an ISO 8601 date-time with an offset/)
      }
    }
  })

  it('answers a refused DateTime with 400 to a client that takes application/graphql-response+json', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/graphql',
      headers: { accept: 'application/graphql-response+json' },
      json: { query: 'query($at: DateTime!) { users(filter: {createdAt: [$at]}) { id } }', variables: { at: 'soon' } },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().errors[0].extensions.code).toBe('BAD_REQUEST')
  })
})

describe('DateTime in subscriptions', () => {
  let s: Listening

  beforeAll(async () => {
    s = await listening()
  })
  afterEach(disposeWsClients)
  afterAll(() => s.t.close())

  it("delivers commentAdded's timestamps over WebSocket and Server-Sent Events as the REST API gives them", async () => {
    const make = createFactories(s.t)
    const post = await make.post(s.t.alice, { title: 'watched' })
    const selection = '{ createdAt updatedAt post { publishedAt createdAt } author { createdAt } }'
    const overWs = gather(wsClient(s.ws), `subscription { commentAdded ${selection} }`)
    const sse = createSseClient({ url: `${s.http}/graphql/stream`, retryAttempts: 0 })
    const overSse: unknown[] = []
    const dispose = sse.subscribe(
      { query: `subscription { commentAdded ${selection} }` },
      { next: (value) => overSse.push(value), error: () => undefined, complete: () => undefined },
    )
    try {
      await subscribed(s.t, 2)
      const comment = await make.comment(post, s.t.bob)
      await until(() => overWs.received.length === 1 && overSse.length === 1)
      const expected = {
        data: {
          commentAdded: {
            createdAt: comment.createdAt,
            updatedAt: comment.updatedAt,
            post: { publishedAt: post.publishedAt, createdAt: post.createdAt },
            author: { createdAt: s.t.bob.createdAt },
          },
        },
      }
      expect(overWs.received).toEqual([expected])
      expect(overSse).toEqual([expected])
      expect(comment.createdAt).toMatch(ISO_UTC)
    } finally {
      dispose()
      sse.dispose()
    }
  })
})
