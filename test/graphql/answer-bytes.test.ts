// GraphQL answers bounded and charged by their bytes, on every transport (src/limits/answer-bytes.ts,
// the operation pipeline's last stage): an answer over 16 MiB is PAYLOAD_TOO_LARGE in its place
// (413 alone, in its slot of a batch, an error result over a WebSocket), never a 500. Introspection
// is charged its fields like any selection, and answered once per schema.
import { getIntrospectionQuery, Kind, type OperationDefinitionNode, parse, print, SchemaMetaFieldDef } from 'graphql'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { MAX_ANSWER_BYTES } from '../../src/limits/answer-bytes.js'
import { disposeWsClients, gather, type Listening, listening, wsClient } from '../helpers/subscription-clients.js'
import { until } from '../helpers/until.js'

let s: Listening
let author: number
beforeAll(async () => {
  s = await listening()
  // 12 posts of 100,000 characters: 15 aliases of a page of them answer 18 MB.
  const user = await s.t.createUser({ name: 'Prolific', email: 'prolific@example.com' })
  author = user.id
  const token = await s.t.tokenFor(user.id)
  const created = await s.t.request({ method: 'POST', url: `/api/v1/users/${user.id}/posts`, token, json: { title: 'Long', content: '.' } })
  expect(created.statusCode).toBe(201)
  const { db } = s.t.database
  await db
    .updateTable('posts')
    .set({ content: 'x'.repeat(100_000) })
    .where('user_id', '=', user.id)
    .execute()
  const columns = ['user_id', 'title', 'content', 'status', 'published_at', 'created_at', 'updated_at'] as const
  for (let made = 1; made < 12; made *= 2) {
    await db
      .insertInto('posts')
      .columns(columns)
      .expression(
        db
          .selectFrom('posts')
          .select(columns)
          .where('user_id', '=', user.id)
          .limit(12 - made),
      )
      .execute()
  }
})
afterAll(() => s?.t.close())
afterEach(disposeWsClients)

/** `n` aliases of the author's posts, their content: 1.2 MB each. */
const pages = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: user(id: "${author}") { posts(limit: 100) { content } }`).join(' ')} }`

const post = (body: unknown, headers: Record<string, string> = {}) =>
  s.t.app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) })

const tooLarge = {
  errors: [
    {
      message: `This answer would be more than the ${MAX_ANSWER_BYTES} bytes (16 MiB) an answer may hold: ask for fewer items (limit, first), fewer aliases or fewer fields; in a batch, the answers count together: send the operations apart`,
      extensions: { code: 'PAYLOAD_TOO_LARGE', max: MAX_ANSWER_BYTES },
    },
  ],
}

describe('the bound on a GraphQL answer', () => {
  it('refuses an answer over 16 MiB with 413 PAYLOAD_TOO_LARGE over POST and GET, and answers a smaller one', async () => {
    const refused = await post({ query: pages(15) })
    expect(refused.statusCode).toBe(413)
    expect(refused.json()).toEqual(tooLarge)
    const byGet = await s.t.app.inject({ method: 'GET', url: `/graphql?query=${encodeURIComponent(pages(15))}` })
    expect(byGet.statusCode).toBe(413)
    expect(byGet.json()).toEqual(tooLarge)
    const fits = await post({ query: pages(2) })
    expect(fits.statusCode).toBe(200)
    expect(fits.json().data.a1.posts).toHaveLength(12)
  })

  it('bounds the answers of a batch together: the operation that would pass the bound gets PAYLOAD_TOO_LARGE in its place', async () => {
    const batch = await post([{ query: pages(8) }, { query: pages(8) }, { query: '{ __typename }' }])
    expect(batch.statusCode).toBe(200)
    const [first, second, third] = batch.json<unknown[]>() as [{ data: { a7: { posts: unknown[] } } }, unknown, unknown]
    expect(first.data.a7.posts).toHaveLength(12)
    expect(second).toEqual(tooLarge)
    expect(third).toEqual({ data: { __typename: 'Query' } })
  })

  it('sends an answer over 16 MiB as a PAYLOAD_TOO_LARGE result over a WebSocket, and the connection goes on', async () => {
    const client = wsClient(s.ws)
    const large = gather(client, pages(15))
    await until(() => large.received.length > 0 || large.errors.length > 0)
    expect(large.received).toEqual([tooLarge])
    const small = gather(client, '{ __typename }')
    await until(() => small.received.length > 0)
    expect(small.received).toEqual([{ data: { __typename: 'Query' } }])
  })
})

/** `n` aliased full introspections, as GraphiQL asks one: the fields of getIntrospectionQuery() under each alias. */
function aliasedIntrospections(n: number, prefix = 'a'): string {
  const document = parse(getIntrospectionQuery())
  const operation = document.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode
  const [schemaField] = operation.selectionSet.selections
  const selections = Array.from({ length: n }, (_, i) => ({ ...schemaField, alias: { kind: Kind.NAME, value: `${prefix}${i}` } }))
  return print({
    ...document,
    definitions: document.definitions.map((d) => (d === operation ? { ...operation, selectionSet: { ...operation.selectionSet, selections } } : d)),
  } as typeof document)
}

describe('introspection', () => {
  const cost = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-cost'] ?? 1)

  it('charges aliased full introspections their fields, as any other selection', async () => {
    const one = await post({ query: aliasedIntrospections(1) })
    expect(one.statusCode).toBe(200)
    expect(one.json().errors).toBeUndefined()
    expect(cost(one)).toBeGreaterThan(5)
    // Two are within introspection's own bound (twice the full query); each is charged its fields.
    const two = await post({ query: aliasedIntrospections(2) })
    expect(two.json().errors).toBeUndefined()
    expect(cost(two)).toBeGreaterThanOrEqual(2 * (cost(one) - 1))
  })

  it('answers full introspection once per schema, however many aliases and requests ask it', async () => {
    const resolve = SchemaMetaFieldDef.resolve!
    let resolved = 0
    SchemaMetaFieldDef.resolve = (...args) => {
      resolved++
      return resolve(...args)
    }
    try {
      const first = await post({ query: aliasedIntrospections(2, 'b') })
      const again = await post({ query: aliasedIntrospections(2, 'c') })
      expect(resolved).toBeLessThanOrEqual(1)
      const answers = [...Object.values(first.json().data), ...Object.values(again.json().data)]
      expect(answers).toHaveLength(4)
      for (const answer of answers) expect(answer).toEqual(answers[0])
      expect(answers[0]).toMatchObject({ queryType: { name: 'Query' } })
    } finally {
      SchemaMetaFieldDef.resolve = resolve
    }
  })
})
