// One operation pipeline for every transport: the same documents sent over POST /graphql, GET
// /graphql, a WebSocket (graphql-transport-ws) and an event stream (graphql-sse) meet the same
// refusals, with the same codes, and cost the caller the same points (read from the allowance that
// is left before and after, by a probe that costs 1 point itself).
// Runs once, on SQLite: the pipeline and the protocols; the data behind the answers is the other tests'.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from 'graphql-ws'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { sha256Hex } from '../../src/graphql/pipeline/persisted-queries.js'
import { type Listening, listening } from '../helpers/subscription-clients.js'

type Transport = 'POST' | 'GET' | 'WebSocket' | 'event stream'
const TRANSPORTS: Transport[] = ['POST', 'GET', 'WebSocket', 'event stream']

interface Result {
  data?: unknown
  errors?: { message: string; extensions?: Record<string, unknown> }[]
}

const sockets: { dispose: () => unknown }[] = []
afterEach(async () => {
  await Promise.all(sockets.splice(0).map(async (client) => client.dispose()))
})

/** Sends one document as `token`'s, over the transport, and gives its first result (or its refusal). */
async function send(s: Listening, transport: Transport, token: string, query: string, variables?: Record<string, unknown>): Promise<Result> {
  const authorization = `Bearer ${token}`
  const body = JSON.stringify({ query, variables })
  if (transport === 'POST' || transport === 'GET') {
    const response =
      transport === 'POST'
        ? await fetch(`${s.http}/graphql`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body })
        : await fetch(`${s.http}/graphql?${new URLSearchParams({ query, ...(variables === undefined ? {} : { variables: JSON.stringify(variables) }) })}`, {
            headers: { authorization },
          })
    return (await response.json()) as Result
  }
  if (transport === 'event stream') {
    const response = await fetch(`${s.http}/graphql/stream`, {
      method: 'POST',
      headers: { authorization, accept: 'text/event-stream', 'content-type': 'application/json' },
      body,
    })
    const text = await response.text()
    if (response.status !== 200) return JSON.parse(text) as Result
    const next = /event: next\ndata: (.*)\n/.exec(text)
    return JSON.parse(next?.[1] ?? 'null') as Result
  }
  const client = createClient({ url: s.ws, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false, connectionParams: { authorization } })
  sockets.push(client)
  return new Promise<Result>((resolve) => {
    let first: Result | undefined
    client.subscribe(
      { query, variables },
      {
        next: (value) => (first ??= value as Result),
        error: (errors) => resolve({ errors: errors as Result['errors'] }),
        complete: () => resolve(first ?? {}),
      },
    )
  })
}

/** What is left of `token`'s allowance, read by a request that costs 1 point. */
async function remaining(s: Listening, token: string): Promise<number> {
  const response = await fetch(`${s.http}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  })
  await response.arrayBuffer()
  return Number(response.headers.get('x-ratelimit-remaining'))
}

/** The result of one document, and the points it took. */
async function charged(s: Listening, transport: Transport, token: string, query: string) {
  const before = await remaining(s, token)
  const result = await send(s, transport, token, query)
  const after = await remaining(s, token)
  return { result, points: before - after - 1 }
}

const codesOf = (result: Result) => (result.errors ?? []).map((error) => error.extensions?.code)

/** `{ usersPage(limit: 100) { items { id posts(limit: 100) { id } } } }`, `n` times aliased: 10,201 of cost each. */
const pages = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `p${i}: usersPage(limit: 100) { items { id posts(limit: 100) { id } } }`).join(' ')} }`
const addTodos = (n: number) => `mutation { ${Array.from({ length: n }, (_, i) => `t${i}: addTodo(text: "todo ${i}") { id }`).join(' ')} }`
/** `{ viewer { id id id ... } }`: one selection set of `n` fields. */
const wide = (n: number) => `{ viewer { ${'id '.repeat(n)}} }`
/** `{ viewer { posts { author { posts ... { id } } } } }`, `levels` deep. */
const nested = (levels: number) => {
  const names = Array.from({ length: levels - 1 }, (_, i) => (i === 0 ? 'viewer' : i % 2 === 1 ? 'posts' : 'author'))
  return `{ ${names.join(' { ')} { id ${'} '.repeat(levels - 1)}}`
}

describe.each(TRANSPORTS)('over %s', (transport) => {
  let s: Listening
  let users = 0
  beforeAll(async () => {
    s = await listening({ RATE_LIMIT_MAX: '1000', RATE_LIMIT_AUTHENTICATED_MAX: '300', RATE_LIMIT_WINDOW_S: '600' })
  })
  afterAll(() => s?.t.close())

  /** A fresh signed-in caller, with an allowance of its own (300 points). */
  async function caller() {
    const user = await s.t.createUser({ name: 'Caller', email: `caller-${transport.replace(' ', '-')}-${users++}@example.com` })
    return { id: user.id, token: await s.t.tokenFor(user.id) }
  }

  it('runs a plain query for 1 point', async () => {
    const { id, token } = await caller()
    const { result, points } = await charged(s, transport, token, '{ viewer { id } }')
    expect(result).toEqual({ data: { viewer: { id: String(id) } } })
    expect(points).toBe(1)
  })

  it('charges a query its cost: 9 aliased pages of 100 users with 100 posts each take 92 points, as over POST', async () => {
    const { token } = await caller()
    const { result, points } = await charged(s, transport, token, pages(9))
    expect(result.errors).toBeUndefined()
    expect(points).toBe(92)
  })

  it('runs 3 documents of 92 points within an allowance of 300 and refuses the fourth RATE_LIMITED with retryAfter, running nothing', async () => {
    const { token } = await caller()
    const results = []
    for (let i = 0; i < 4; i++) results.push(await send(s, transport, token, pages(9)))
    expect(results.map(codesOf)).toEqual([[], [], [], ['RATE_LIMITED']])
    expect(results[3]?.errors?.[0]?.extensions?.retryAfter).toEqual(expect.any(Number))
    expect(results[3]?.data).toBeUndefined()
  })

  it('refuses a document past the cost limit with BAD_REQUEST (limit cost) for 1 point', async () => {
    const { token } = await caller()
    const { result, points } = await charged(s, transport, token, pages(10))
    expect(codesOf(result)).toEqual(['BAD_REQUEST'])
    expect(result.errors?.[0]?.extensions).toMatchObject({ limit: 'cost' })
    expect(points).toBe(1)
  })

  it('refuses 1,000 fields in one selection set with BAD_REQUEST (limit fields) for 1 point, before graphql validates it', async () => {
    const { token } = await caller()
    const { result, points } = await charged(s, transport, token, wide(1000))
    expect(codesOf(result)).toEqual(['BAD_REQUEST'])
    expect(result.errors?.[0]?.extensions).toMatchObject({ limit: 'fields', value: 1000, max: 100 })
    expect(points).toBe(1)
  })

  it('refuses a document 11 levels deep with BAD_REQUEST (limit depth) for 1 point', async () => {
    const { token } = await caller()
    const { result, points } = await charged(s, transport, token, nested(11))
    expect(codesOf(result)).toEqual(['BAD_REQUEST'])
    expect(result.errors?.[0]?.extensions).toMatchObject({ limit: 'depth', value: 11, max: 10 })
    expect(points).toBe(1)
  })

  it.skipIf(transport === 'GET')('charges 15 aliased addTodo 15 points, and runs all of them', async () => {
    const { id, token } = await caller()
    const { result, points } = await charged(s, transport, token, addTodos(15))
    expect(result.errors).toBeUndefined()
    expect(points).toBe(15)
    expect((await s.t.database.db.selectFrom('todos').select('id').where('user_id', '=', id).execute()).length).toBe(15)
  })

  it("refuses a read token's mutation FORBIDDEN, running nothing, and runs its query (GET carries no mutation)", async () => {
    const user = await s.t.createUser({ name: 'Reader', email: `reader-${transport.replace(' ', '-')}-${users++}@example.com` })
    const token = await s.t.tokenFor(user.id, undefined, 'read')
    expect(await send(s, transport, token, '{ viewer { id } }')).toEqual({ data: { viewer: { id: String(user.id) } } })
    const refused = await send(s, transport, token, addTodos(1))
    expect(codesOf(refused)).toEqual([transport === 'GET' ? 'METHOD_NOT_ALLOWED' : 'FORBIDDEN'])
    expect(await s.t.database.db.selectFrom('todos').select('id').where('user_id', '=', user.id).execute()).toEqual([])
  })
})

describe.each(TRANSPORTS)('with GRAPHQL_TRUSTED_DOCUMENTS_ONLY, over %s', (transport) => {
  const trusted = '{ viewer { id } }'
  let s: Listening
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'threadline-transports-')), 'trusted.json')
    writeFileSync(file, JSON.stringify({ [sha256Hex(trusted)]: trusted }))
    s = await listening({ GRAPHQL_TRUSTED_DOCUMENTS: file, GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'true', RATE_LIMIT_AUTHENTICATED_MAX: '300' })
  })
  afterAll(() => s?.t.close())

  it('refuses an untrusted document with PERSISTED_QUERY_NOT_ALLOWED, running nothing, and runs a trusted one', async () => {
    const user = await s.t.createUser({ name: 'Trusting', email: `trusting-${transport.replace(' ', '-')}@example.com` })
    const token = await s.t.tokenFor(user.id)
    const { result, points } = await charged(s, transport, token, '{ users { id email } }')
    expect(result).toEqual({ errors: [{ message: expect.stringMatching(/trusted documents/), extensions: { code: 'PERSISTED_QUERY_NOT_ALLOWED' } }] })
    expect(points).toBe(1)
    expect(await send(s, transport, token, trusted)).toEqual({ data: { viewer: { id: String(user.id) } } })
  })
})

describe.each(TRANSPORTS)('in the scheduler, over %s', (transport) => {
  let s: Listening
  beforeAll(async () => {
    // One slot for everyone, so that a slot held by another caller keeps the operation waiting.
    s = await listening({ HTTP_MAX_IN_FLIGHT: '1', RATE_LIMIT_AUTHENTICATED_MAX: '300' })
  })
  afterAll(() => s?.t.close())

  it('waits for a slot as an HTTP request does, and runs once another caller releases its own', async () => {
    const scheduler = s.t.scheduler!
    const user = await s.t.createUser({ name: 'Waiting', email: `waiting-${transport.replace(' ', '-')}@example.com` })
    const token = await s.t.tokenFor(user.id)
    const releaseOthersSlot = await scheduler.acquire('another caller')
    let answered = false
    const answer = send(s, transport, token, '{ viewer { id } }').finally(() => (answered = true))
    await expect.poll(() => scheduler.load().waiting, { timeout: 5000 }).toBe(1)
    expect(answered).toBe(false)
    releaseOthersSlot()
    expect(await answer).toEqual({ data: { viewer: { id: String(user.id) } } })
    expect(scheduler.load()).toMatchObject({ running: 0, waiting: 0 })
  })
})

describe.each(TRANSPORTS)('sent again, over %s', (transport) => {
  let s: Listening
  beforeAll(async () => {
    s = await listening({ RATE_LIMIT_AUTHENTICATED_MAX: '300' })
  })
  afterAll(() => s?.t.close())

  it('answers a document the same the first time and the next ones, when its compiled form runs it', async () => {
    const user = await s.t.createUser({ name: 'Again', email: `again-${transport.replace(' ', '-')}@example.com` })
    const token = await s.t.tokenFor(user.id)
    const query = `query Again($id: ID!) { viewer { id name } user(id: $id) { id } missing: user(id: "999999") { id } }`
    const answers = []
    for (let i = 0; i < 3; i++) answers.push(await send(s, transport, token, query, { id: String(user.id) }))
    expect(answers[0]).toEqual({
      data: { viewer: { id: String(user.id), name: 'Again' }, user: { id: String(user.id) }, missing: null },
      errors: [{ message: 'User not found', locations: [{ line: 1, column: 65 }], path: ['missing'], extensions: { code: 'NOT_FOUND' } }],
    })
    expect(answers[1]).toEqual(answers[0])
    expect(answers[2]).toEqual(answers[0])
  })
})

describe("a caller's queue", () => {
  let s: Listening
  beforeAll(async () => {
    // One slot for everyone and one request of a caller's waiting at most.
    s = await listening({ HTTP_MAX_IN_FLIGHT: '1', HTTP_MAX_QUEUED_PER_CALLER: '1', RATE_LIMIT_AUTHENTICATED_MAX: '300' })
  })
  afterAll(() => s?.t.close())

  it("bounds a caller's HTTP requests, not a WebSocket's operations, which its connection bounds", async () => {
    const scheduler = s.t.scheduler!
    const user = await s.t.createUser({ name: 'Queued', email: 'queued@example.com' })
    const token = await s.t.tokenFor(user.id)
    const releaseOthersSlot = await scheduler.acquire('another caller')
    const overHttp = Array.from({ length: 3 }, () => send(s, 'POST', token, '{ viewer { id } }'))
    const overWebSocket = Array.from({ length: 5 }, () => send(s, 'WebSocket', token, '{ viewer { id } }'))
    await expect.poll(() => scheduler.load().waiting, { timeout: 5000 }).toBe(6)
    releaseOthersSlot()
    const viewer = { data: { viewer: { id: String(user.id) } } }
    expect((await Promise.all(overHttp)).map(codesOf).sort()).toEqual([[], ['RATE_LIMITED'], ['RATE_LIMITED']])
    expect(await Promise.all(overWebSocket)).toEqual(Array.from({ length: 5 }, () => viewer))
  })
})
