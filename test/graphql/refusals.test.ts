// One preparation for every transport (src/graphql/pipeline/operation-pipeline.ts): a bad operation meets
// the same refusal, the same code and the same words, whether it came by POST or GET /graphql,
// over a WebSocket (graphql-transport-ws) or on an event stream (graphql-sse, by POST and by GET).
// Each row names the transports that carry its operation; the refusal of a type a transport does
// not carry (a mutation sent with GET, a subscription over plain HTTP) is a row of its own.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { disposeWsClients, type Listening, listening, wsClient } from '../helpers/subscription-clients.js'

type Transport = 'POST' | 'GET' | 'WebSocket' | 'event stream' | 'event stream by GET'
const EVERY_TRANSPORT: Transport[] = ['POST', 'GET', 'WebSocket', 'event stream', 'event stream by GET']

interface Refusal {
  code: unknown
  message: string
}

interface Row {
  name: string
  query: string
  operationName?: string
  /** The token's scope: 'read' for a caller who may not write. @default 'write' */
  scope?: 'read'
  transports: Transport[]
  refusal: { code: string; message: string | RegExp }
}

const ROWS: Row[] = [
  {
    name: 'a document that does not parse',
    query: '{ viewer { id }',
    transports: EVERY_TRANSPORT,
    refusal: { code: 'BAD_REQUEST', message: 'Syntax Error: Expected Name, found <EOF>.' },
  },
  {
    name: 'a field the schema does not have',
    query: '{ viewer { nope } }',
    transports: EVERY_TRANSPORT,
    refusal: { code: 'BAD_REQUEST', message: 'Cannot query field "nope" on type "User".' },
  },
  {
    name: 'an operation name the document does not hold',
    query: 'query A { viewer { id } }',
    operationName: 'B',
    transports: EVERY_TRANSPORT,
    refusal: { code: 'BAD_REQUEST', message: 'Unknown operation named "B".' },
  },
  {
    name: 'a document past the depth limit',
    // viewer { posts { author { posts ... { id } } } }, 11 levels deep
    query: `{ viewer { ${'posts { author { '.repeat(4)}posts { id } ${'} } '.repeat(4)}} }`,
    transports: EVERY_TRANSPORT,
    refusal: { code: 'BAD_REQUEST', message: /^The query is 11 levels deep/ },
  },
  {
    name: "a mutation with a read token's caller",
    query: 'mutation { addTodo(text: "refused") { id } }',
    scope: 'read',
    transports: ['POST', 'WebSocket', 'event stream'],
    refusal: { code: 'FORBIDDEN', message: /write/ },
  },
  {
    name: 'a mutation sent with GET',
    query: 'mutation { addTodo(text: "refused") { id } }',
    transports: ['GET', 'event stream by GET'],
    refusal: { code: 'METHOD_NOT_ALLOWED', message: 'Mutations cannot be sent with GET; send them with POST' },
  },
  {
    name: 'a subscription over plain HTTP',
    query: 'subscription { commentAdded { id } }',
    transports: ['POST', 'GET'],
    refusal: { code: 'BAD_REQUEST', message: /^Subscriptions are served over WebSocket at \/graphql/ },
  },
]

let s: Listening
const tokens = new Map<'read' | 'write', string>()
beforeAll(async () => {
  s = await listening({ RATE_LIMIT_AUTHENTICATED_MAX: '1000' })
  const user = await s.t.createUser({ name: 'Refused', email: 'refused@example.com' })
  tokens.set('write', await s.t.tokenFor(user.id))
  tokens.set('read', await s.t.tokenFor(user.id, undefined, 'read'))
})
afterAll(() => s?.t.close())
afterEach(disposeWsClients)

/** The first error the transport answers the operation with, as its code and message. */
async function refusalOver(transport: Transport, row: Row): Promise<Refusal> {
  const token = tokens.get(row.scope ?? 'write') as string
  const { query, operationName } = row
  const errors = await errorsOver(transport, token, { query, operationName })
  return { code: errors?.[0]?.extensions?.code, message: errors?.[0]?.message ?? '(no error)' }
}

type Errors = { message: string; extensions?: Record<string, unknown> }[] | undefined

async function errorsOver(transport: Transport, token: string, params: { query: string; operationName?: string }): Promise<Errors> {
  const authorization = `Bearer ${token}`
  const search = new URLSearchParams({ query: params.query, ...(params.operationName === undefined ? {} : { operationName: params.operationName }) })
  const body = JSON.stringify(params)
  const json = { authorization, 'content-type': 'application/json' }
  const stream = { authorization, accept: 'text/event-stream' }
  if (transport === 'WebSocket') return errorsOverWebSocket(token, params)
  const response =
    transport === 'POST'
      ? await fetch(`${s.http}/graphql`, { method: 'POST', headers: json, body })
      : transport === 'GET'
        ? await fetch(`${s.http}/graphql?${search}`, { headers: { authorization } })
        : transport === 'event stream'
          ? await fetch(`${s.http}/graphql/stream`, { method: 'POST', headers: { ...stream, 'content-type': 'application/json' }, body })
          : await fetch(`${s.http}/graphql/stream?${search}`, { headers: stream })
  const text = await response.text()
  // A stream that opened carries its refusal as its first event.
  const event = /event: next\ndata: (.*)\n/.exec(text)?.[1]
  return (JSON.parse(event ?? text) as { errors?: Errors }).errors
}

function errorsOverWebSocket(token: string, params: { query: string; operationName?: string }): Promise<Errors> {
  const client = wsClient(s.ws, token)
  return new Promise((resolve) => {
    let first: Errors
    client.subscribe(params, {
      next: (value) => (first ??= (value as { errors?: Errors }).errors),
      error: (errors) => resolve(errors as Errors),
      complete: () => resolve(first),
    })
  })
}

describe.each(ROWS)('$name', (row) => {
  it(`is refused with ${row.refusal.code}, in the same words, over ${row.transports.join(', ')}`, async () => {
    const refusals: (Refusal & { transport: Transport })[] = []
    for (const transport of row.transports) refusals.push({ transport, ...(await refusalOver(transport, row)) })
    const expected = row.transports.map((transport) => ({ transport, code: row.refusal.code, message: refusals[0]?.message }))
    expect(refusals).toEqual(expected)
    expect(refusals[0]?.message).toMatch(row.refusal.message)
  })
})
