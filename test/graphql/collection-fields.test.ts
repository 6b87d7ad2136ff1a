// Every collection's top-level fields, read from the schema (each `<name>Connection` with its
// `<name>` list and `<name>Page`), answer alike: the same items in
// id order by default, pages by offset and by cursor, connections forward and backward, the same
// refusals (BAD_REQUEST naming the argument, never an internal error), cursors bound to their own
// collection, and the same charge for the same work. Each feature's own rules (who sees what, its
// parent filters) are tested in test/<feature>/.
import { buildSchema } from 'graphql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FEATURES, graphqlTypeDefs } from '../../src/features.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { graphql, type GraphQLAnswer } from '../helpers/graphql-client.js'
import { seedEmptyFeatures } from '../helpers/seeded-rows.js'

/** The collections with a list, a page and a connection on Query, from the schema. */
const COLLECTIONS = (() => {
  const fields = buildSchema(graphqlTypeDefs()).getQueryType()?.getFields() ?? {}
  return Object.keys(fields)
    .filter((name) => name.endsWith('Connection'))
    .map((connection) => connection.slice(0, -'Connection'.length))
    .filter((name) => fields[name] !== undefined && fields[`${name}Page`] !== undefined)
})()

interface Connection {
  edges: { cursor: string; node: { id: string } }[]
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }
}

it('finds the collections in the schema: every resource anyone can list (those the landing page counts)', () => {
  expect(COLLECTIONS).toEqual(expect.arrayContaining(FEATURES.filter(({ landingCount }) => landingCount !== undefined).map(({ name }) => name)))
})

describe.each(COLLECTIONS)('Query.%s, %sPage and %sConnection', (name) => {
  let t: TestApp
  /** Every item's id, in id order, as an admin sees them. */
  let all: string[] = []

  beforeAll(async () => {
    t = await buildTestApp()
    const make = createFactories(t)
    for (let i = 0; i < 4; i++) {
      const writer = await make.user()
      const post = await make.post(writer)
      await make.comment(post, t.bob)
      await make.comment(post, writer)
      await make.todo(writer)
    }
    // The other features' rows come from their seed sections.
    await seedEmptyFeatures(t.database.db)
    const answer = await read(`{ ${name}(limit: 100) { id } }`)
    all = (answer.body.data?.[name] as { id: string }[]).map((item) => item.id)
  })
  afterAll(() => t.close())

  const read = (query: string) => graphql(t, query, { token: t.tokens.admin })
  const dataOf = <T>(answer: GraphQLAnswer, field: string): T => {
    expect(answer.body.errors).toBeUndefined()
    return answer.body.data?.[field] as T
  }
  const ids = (items: { id: string }[]) => items.map((item) => item.id)
  const edgeIds = (connection: Connection) => connection.edges.map((edge) => edge.node.id)

  it('answers every item in id order, and -id reverses it', async () => {
    expect(all.length).toBeGreaterThanOrEqual(4)
    expect(all).toEqual([...all].sort((a, b) => Number(a) - Number(b)))
    expect(ids(dataOf(await read(`{ ${name}(sort: "-id", limit: 100) { id } }`), name))).toEqual([...all].reverse())
    expect(ids(dataOf(await read(`{ ${name}(where: {id: {gt: "${all[1]}"}}, limit: 100) { id } }`), name))).toEqual(all.slice(2))
  })

  it('pages by offset and by cursor through the same items', async () => {
    const page = async (args: string) =>
      dataOf<{ items: { id: string }[]; pageInfo: { nextCursor: string | null; hasMore: boolean; total: number | null } }>(
        await read(`{ ${name}Page(${args}) { items { id } pageInfo { nextCursor hasMore total } } }`),
        `${name}Page`,
      )
    const byOffset = []
    for (let n = 1; n <= Math.ceil(all.length / 3); n++) byOffset.push(...ids((await page(`limit: 3, page: ${n}`)).items))
    expect(byOffset).toEqual(all)
    const byCursor: string[] = []
    let cursor: string | null = null
    do {
      const next = await page(`limit: 3${cursor === null ? '' : `, cursor: "${cursor}"`}`)
      byCursor.push(...ids(next.items))
      cursor = next.pageInfo.hasMore ? next.pageInfo.nextCursor : null
    } while (cursor !== null)
    expect(byCursor).toEqual(all)
    expect((await page('limit: 1')).pageInfo.total).toBe(all.length)
  })

  it('walks the connection forward with first/after and backward with last/before', async () => {
    const connection = async (args: string) =>
      dataOf<Connection>(
        await read(`{ ${name}Connection(${args}) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`),
        `${name}Connection`,
      )
    const forward: string[] = []
    let after: string | null = null
    do {
      const next: Connection = await connection(`first: 3${after === null ? '' : `, after: "${after}"`}`)
      forward.push(...edgeIds(next))
      after = next.pageInfo.hasNextPage ? next.pageInfo.endCursor : null
    } while (after !== null)
    expect(forward).toEqual(all)
    const backward: string[] = []
    let before: string | null = null
    do {
      const previous: Connection = await connection(`last: 3${before === null ? '' : `, before: "${before}"`}`)
      backward.unshift(...edgeIds(previous))
      before = previous.pageInfo.hasPreviousPage ? previous.pageInfo.startCursor : null
    } while (before !== null)
    expect(backward).toEqual(all)
  })

  it.each([
    ['list', (n: string) => `{ ${n}(sort: "nope") { id } }`, [{ field: 'sort', message: '"nope" is not a field of this collection' }]],
    ['list', (n: string) => `{ ${n}(limit: 0) { id } }`, [{ field: 'limit', message: 'must be an integer of at least 1' }]],
    ['list', (n: string) => `{ ${n}(cursor: "garbage") { id } }`, [{ field: 'cursor', message: 'is not valid for this query' }]],
    ['list', (n: string) => `{ ${n}(where: {id: {eq: "x"}}) { id } }`, [{ field: 'id[eq]', message: 'must be an integer from -2147483648 to 2147483647' }]],
    ['page', (n: string) => `{ ${n}Page(page: 0) { items { id } } }`, [{ field: 'page', message: 'must be an integer of at least 1' }]],
    ['connection', (n: string) => `{ ${n}Connection(first: 1, last: 1) { totalCount } }`, [{ field: 'last', message: 'cannot be combined with first' }]],
  ])('refuses bad arguments of the %s with BAD_REQUEST naming them: %#', async (_kind, query, details) => {
    const answer = await read(query(name))
    expect(answer.status).toBe(200)
    expect(answer.body.errors?.map((error) => error.extensions)).toEqual([{ code: 'BAD_REQUEST', details }])
  })

  it("refuses another collection's cursor, and a cursor of another sort", async () => {
    const other = name === 'users' ? 'todos' : 'users'
    const foreign = dataOf<{ pageInfo: { nextCursor: string } }>(await read(`{ ${other}Page(limit: 1) { pageInfo { nextCursor } } }`), `${other}Page`)
    const own = dataOf<{ pageInfo: { nextCursor: string } }>(await read(`{ ${name}Page(limit: 1, sort: "-id") { pageInfo { nextCursor } } }`), `${name}Page`)
    for (const cursor of [foreign.pageInfo.nextCursor, own.pageInfo.nextCursor]) {
      for (const query of [`{ ${name}(cursor: "${cursor}") { id } }`, `{ ${name}Connection(after: "${cursor}") { totalCount } }`]) {
        const answer = await read(query)
        expect(answer.body.errors?.map((error) => error.extensions)).toEqual([
          { code: 'BAD_REQUEST', details: [{ field: 'cursor', message: 'is not valid for this query' }] },
        ])
      }
    }
  })

  it('is charged as users is for the same work, every alias counted: 15 aliased searches with their totals are refused by cost', async () => {
    const charge = async (query: string) => {
      const response = await t.request({ method: 'POST', url: '/graphql', json: { query } })
      return Number(response.headers['x-ratelimit-cost'])
    }
    const searchAndCount = (field: string, aliases: number) =>
      `{ ${Array.from({ length: aliases }, (_, i) => `a${i}: ${field}Page(q: "zz-nomatch", limit: 1) { pageInfo { total } }`).join(' ')} }`
    // A search and a count, 10,000 rows each: 21 points (test/graphql/metering.test.ts).
    expect(await charge(searchAndCount(name, 1))).toBe(21)
    expect(await charge(searchAndCount('users', 1))).toBe(21)
    expect(await charge(searchAndCount(name, 4))).toBe(await charge(searchAndCount('users', 4)))
    expect(await charge(`{ ${name}Connection(first: 100) { totalCount edges { node { id } } } }`)).toBe(
      await charge('{ usersConnection(first: 100) { totalCount edges { node { id } } } }'),
    )
    const refused = await graphql(t, searchAndCount(name, 15))
    expect(refused.body.errors?.map((error) => error.extensions)).toEqual([{ code: 'BAD_REQUEST', limit: 'cost', value: 15 * 20_003, max: 100_000 }])
  })
})
