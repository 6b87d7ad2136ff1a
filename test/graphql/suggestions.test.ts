// With introspection off, refusals do not name what the schema holds: graphql-js's "Did you mean …?"
// suggestions (fields, arguments, types, enum values, mutations) are left out of every answer —
// POST, GET, WebSocket and event stream — and the rest of the message stays (docs/security.md, API8).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { until } from '../helpers/until.js'

/** Each document has a typo graphql-js would suggest a name for; the message it keeps without one. */
const TYPOS: readonly { name: string; query: string; variables?: Record<string, unknown>; kept: string }[] = [
  { name: 'a query field', query: '{ usr(id: 1) { id } }', kept: 'Cannot query field "usr" on type "Query".' },
  { name: 'a field of a type', query: '{ user(id: 1) { nme } }', kept: 'Cannot query field "nme" on type "User".' },
  { name: 'an argument', query: '{ user(idd: 1) { id } }', kept: 'Unknown argument "idd" on field "Query.user".' },
  {
    name: 'an enum value',
    query: 'mutation { createUser(input: { name: "N", email: "n@example.com", role: admn }) { id } }',
    kept: 'Value "admn" does not exist in "Role" enum.',
  },
  {
    name: 'a mutation',
    query: 'mutation { creatUser(input: { name: "N", email: "n@example.com" }) { id } }',
    kept: 'Cannot query field "creatUser" on type "Mutation".',
  },
  { name: 'a type', query: 'query ($id: Id!) { user(id: $id) { id } }', variables: { id: '1' }, kept: 'Unknown type "Id".' },
  {
    name: 'a field of an input, in variables',
    query: 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }',
    variables: { input: { nam: 'N', email: 'n@example.com' } },
    kept: 'Variable "$input" got invalid value { nam: "N", email: "n@example.com" }; Field "nam" is not defined by type "CreateUserInput".',
  },
]

const SUGGESTION = /Did you mean/

let off: TestApp
let on: TestApp
let offUrl: string
beforeAll(async () => {
  off = await buildTestApp({ GRAPHQL_INTROSPECTION: 'false' })
  on = await buildTestApp()
  offUrl = await off.app.listen({ host: '127.0.0.1', port: 0 })
})
afterAll(async () => {
  await off.close()
  await on.close()
})

const post = (t: TestApp, query: string, variables?: Record<string, unknown>) =>
  t.request({ method: 'POST', url: '/graphql', token: t.tokens.admin, json: { query, variables } })
const get = (t: TestApp, query: string, variables?: Record<string, unknown>) =>
  t.request({
    method: 'GET',
    url: `/graphql?query=${encodeURIComponent(query)}${variables === undefined ? '' : `&variables=${encodeURIComponent(JSON.stringify(variables))}`}`,
    token: t.tokens.admin,
  })
const messagesOf = (body: { errors?: { message: string }[] }) => (body.errors ?? []).map((error) => error.message)

describe('with introspection off', () => {
  it.each(TYPOS.map((typo) => [typo.name, typo]))('suggests no name for %s, over POST and GET, and keeps the rest of the message', async (_name, typo) => {
    const posted = await post(off, typo.query, typo.variables)
    expect(messagesOf(posted.json()), typo.query).toContain(typo.kept)
    expect(posted.json().errors[0].extensions.code).toBe('BAD_REQUEST')
    // GET runs queries only: a mutation is refused for its method, before it is validated.
    const got = await get(off, typo.query, typo.variables)
    if (!typo.query.startsWith('mutation')) expect(messagesOf(got.json())).toContain(typo.kept)
    for (const message of [...messagesOf(posted.json()), ...messagesOf(got.json())]) expect(message).not.toMatch(SUGGESTION)
  })

  it('suggests no name over a WebSocket', async () => {
    const socket = new WebSocket(`${offUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws')
    const messages: { type: string; id?: string; payload?: unknown }[] = []
    socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString()) as (typeof messages)[number]))
    await new Promise<void>((resolve, reject) => socket.on('open', () => resolve()).on('error', reject))
    try {
      socket.send(JSON.stringify({ type: 'connection_init' }))
      await until(() => messages.some((m) => m.type === 'connection_ack'))
      socket.send(JSON.stringify({ id: 'a', type: 'subscribe', payload: { query: 'subscription { commentAdded { contnt } }' } }))
      socket.send(JSON.stringify({ id: 'b', type: 'subscribe', payload: { query: 'subscription { commentAded { id } }' } }))
      await until(() => messages.filter((m) => m.type === 'error').length === 2)
      const errors = messages.filter((m) => m.type === 'error').flatMap((m) => m.payload as { message: string }[])
      expect(errors.map((e) => e.message).sort()).toEqual([
        'Cannot query field "commentAded" on type "Subscription".',
        'Cannot query field "contnt" on type "Comment".',
      ])
    } finally {
      socket.close()
    }
  })

  it('suggests no name on an event stream', async () => {
    const response = await fetch(`${offUrl}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { commentAdded { contnt } }' }),
    })
    expect(response.status).toBe(400)
    const body = (await response.json()) as { errors: { message: string }[] }
    expect(messagesOf(body)).toEqual(['Cannot query field "contnt" on type "Comment".'])
  })
})

describe('with introspection on', () => {
  it('still suggests names (the schema is public then)', async () => {
    for (const typo of TYPOS) {
      const messages = messagesOf((await post(on, typo.query, typo.variables)).json())
      expect(
        messages.some((message) => message.startsWith(typo.kept) && SUGGESTION.test(message)),
        typo.query,
      ).toBe(true)
    }
  })
})
