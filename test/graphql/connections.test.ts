// Relay cursor connections (the GraphQL Cursor Connections Specification): usersConnection pages
// forward with first/after and backward with last/before over the same keyset as REST's cursors,
// with filters, search and sort; nested connections read the first page of every parent in one
// statement per level; bad arguments and cursors of another query are refused; and their cost is
// counted as the lists' is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { graphql } from '../helpers/graphql-client.js'
import type { User } from '../../src/users/users.schemas.js'

interface PageInfo {
  hasNextPage: boolean
  hasPreviousPage: boolean
  startCursor: string | null
  endCursor: string | null
}
interface Connection {
  edges: { cursor: string; node: { id: string } }[]
  pageInfo: PageInfo
  totalCount?: number | null
}

const PAGE = 'edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }'
/** The seven fixture users: ages 100 to 106. */
const FIXTURES = 'where: {age: {gte: 100}}'

describe('usersConnection', () => {
  let t: TestApp
  let statements: string[] = []
  const people: User[] = []

  beforeAll(async () => {
    t = await buildTestApp({}, { onQuery: (sql) => statements.push(sql) })
    const make = createFactories(t)
    // Ages out of id order, so that sorting by age is not sorting by id.
    for (const age of [103, 100, 106, 101, 105, 102, 104]) people.push(await make.user({ age }))
  })
  afterAll(() => t.close())

  async function connection(args: string, token?: string): Promise<Connection> {
    const answer = await graphql(t, `{ usersConnection(${args}) { ${PAGE} } }`, { token })
    expect(answer.body.errors).toBeUndefined()
    return answer.body.data?.usersConnection as Connection
  }
  const ids = (page: Connection) => page.edges.map((edge) => Number(edge.node.id))
  const sortedIds = (compare: (a: User, b: User) => number) => [...people].sort((a, b) => compare(a, b) || a.id - b.id).map((user) => user.id)

  const ORDERS: [string, number[] | (() => number[])][] = [
    ['-age', () => sortedIds((a, b) => (b.age ?? 0) - (a.age ?? 0))],
    ['createdAt', () => sortedIds((a, b) => a.createdAt.localeCompare(b.createdAt))],
    ['-email', () => sortedIds((a, b) => b.email.toLowerCase().localeCompare(a.email.toLowerCase()))],
  ]

  it.each(ORDERS)('walks every page forward with first/after under sort %s, mixed with a filter', async (sort, expected) => {
    const pages: Connection[] = []
    let after: string | null = null
    do {
      const page = await connection(`${FIXTURES}, sort: "${sort}", first: 3${after === null ? '' : `, after: "${after}"`}`)
      pages.push(page)
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null
    } while (after !== null)
    expect(pages.map(ids).flat()).toEqual(typeof expected === 'function' ? expected() : expected)
    expect(pages.map((page) => page.edges.length)).toEqual([3, 3, 1])
    expect(pages.map((page) => [page.pageInfo.hasPreviousPage, page.pageInfo.hasNextPage])).toEqual([
      [false, true],
      [true, true],
      [true, false],
    ])
    for (const page of pages) {
      expect(page.pageInfo.startCursor).toBe(page.edges[0]?.cursor)
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor)
    }
  })

  it.each(ORDERS)('walks every page backward with last/before under sort %s: the end of the list first', async (sort, expected) => {
    const pages: Connection[] = []
    let before: string | null = null
    do {
      const page = await connection(`${FIXTURES}, sort: "${sort}", last: 3${before === null ? '' : `, before: "${before}"`}`)
      pages.unshift(page)
      before = page.pageInfo.hasPreviousPage ? page.pageInfo.startCursor : null
    } while (before !== null)
    expect(pages.map(ids).flat()).toEqual(typeof expected === 'function' ? expected() : expected)
    expect(pages.map((page) => page.edges.length)).toEqual([1, 3, 3])
    // The last page: nothing follows; the earlier ones were read before a cursor, whose row follows.
    expect(pages.map((page) => [page.pageInfo.hasPreviousPage, page.pageInfo.hasNextPage])).toEqual([
      [false, true],
      [true, true],
      [true, false],
    ])
  })

  it('pages from any edge: after and before an edge in the middle', async () => {
    const all = await connection(`${FIXTURES}, first: 7`)
    const middle = all.edges[3]?.cursor as string
    expect(ids(await connection(`${FIXTURES}, first: 2, after: "${middle}"`))).toEqual(ids(all).slice(4, 6))
    expect(ids(await connection(`${FIXTURES}, last: 2, before: "${middle}"`))).toEqual(ids(all).slice(1, 3))
    expect(ids(await connection(`${FIXTURES}, before: "${middle}"`))).toEqual(ids(all).slice(0, 3))
  })

  it('answers an empty connection for no match, and past the end of the list', async () => {
    const empty = { edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } }
    expect(await connection('where: {age: {gte: 1000}}, first: 3')).toEqual(empty)
    expect(await connection('where: {age: {gte: 1000}}, last: 3')).toEqual(empty)
    const all = await connection(`${FIXTURES}, first: 7`)
    expect(all.pageInfo.hasNextPage).toBe(false)
    expect(await connection(`${FIXTURES}, first: 3, after: "${all.pageInfo.endCursor}"`)).toEqual(empty)
    expect(await connection(`${FIXTURES}, last: 3, before: "${all.pageInfo.startCursor}"`)).toEqual(empty)
  })

  it('searches with q as the list does', async () => {
    const [someone] = people
    const found = await connection(`q: "${someone?.email}", fields: ["email"]`)
    expect(ids(found)).toEqual([someone?.id])
  })

  it('counts totalCount only when it is selected', async () => {
    statements = []
    await connection(`${FIXTURES}, first: 2`)
    expect(statements.filter((sql) => /count\(\*\)/i.test(sql))).toHaveLength(0)
    statements = []
    const answer = await graphql(t, `{ usersConnection(${FIXTURES}, first: 2) { totalCount totalCountCapped edges { cursor } } }`)
    expect(answer.body.data?.usersConnection).toMatchObject({ totalCount: 7, totalCountCapped: false })
    expect(statements.filter((sql) => /count\(\*\)/i.test(sql))).toHaveLength(1)
  })

  it("gives edges REST's cursors: an edge's cursor is REST's cursor on the same query", async () => {
    const page = await connection(`${FIXTURES}, sort: "-age", first: 2`)
    const response = await t.request({ method: 'GET', url: `/api/v1/users?age[gte]=100&sort=-age&limit=3&cursor=${page.pageInfo.endCursor}` })
    expect(response.statusCode).toBe(200)
    const next = await connection(`${FIXTURES}, sort: "-age", first: 3, after: "${page.pageInfo.endCursor}"`)
    expect((response.json().data as User[]).map((user) => user.id)).toEqual(ids(next))
  })

  it('refuses a cursor of another query: another sort, other filters, or a nested list', async () => {
    const page = await connection(`${FIXTURES}, sort: "-age", first: 2`)
    const cursor = page.pageInfo.endCursor as string
    const nested = await graphql(t, `{ user(id: ${t.alice.id}) { postsConnection { ${PAGE} } } }`)
    expect(nested.body.errors).toBeUndefined()
    for (const args of [
      `${FIXTURES}, sort: "age", after: "${cursor}"`,
      `where: {age: {gte: 101}}, sort: "-age", before: "${cursor}"`,
      `after: "not a cursor"`,
      `after: "${(nested.body.data?.user as { postsConnection: Connection }).postsConnection.pageInfo.endCursor}"`,
    ]) {
      const answer = await graphql(t, `{ usersConnection(${args}) { edges { cursor } } }`)
      expect(answer.body.errors?.map((error) => error.extensions?.code)).toEqual(['BAD_REQUEST'])
      expect(answer.body.errors?.[0]?.extensions?.details).toEqual([{ field: 'cursor', message: 'is not valid for this query' }])
    }
  })

  it.each([
    ['first: 2, last: 2', [{ field: 'last', message: 'cannot be combined with first' }]],
    ['after: "a", before: "b"', [{ field: 'before', message: 'cannot be combined with after' }]],
    ['first: 2, before: "b"', [{ field: 'before', message: 'cannot be combined with first: use last' }]],
    ['last: 2, after: "a"', [{ field: 'after', message: 'cannot be combined with last: use first' }]],
    ['first: -1', [{ field: 'first', message: 'must be an integer of at least 1' }]],
    ['last: 0', [{ field: 'last', message: 'must be an integer of at least 1' }]],
  ])('refuses %s (400 BAD_REQUEST naming the argument)', async (args, details) => {
    const answer = await graphql(t, `{ usersConnection(${args}) { edges { cursor } } }`)
    expect(answer.body.data).toBeNull()
    expect(answer.body.errors?.map((error) => error.extensions)).toEqual([{ code: 'BAD_REQUEST', details }])
  })

  it('caps first and last at 100, as REST caps limit', async () => {
    for (const args of ['first: 5000', 'last: 5000']) {
      const answer = await graphql(t, `{ usersConnection(${args}) { edges { cursor } } }`)
      expect(answer.body.errors).toBeUndefined()
      expect((answer.body.data?.usersConnection as Connection).edges).toHaveLength(people.length + 3)
    }
  })
})

describe('nested connections', () => {
  let t: TestApp
  let statements: string[] = []
  let recording = false
  const writers: User[] = []

  beforeAll(async () => {
    // Counts cost 10,000 each in the cost model (READ_ROWS.count): these queries count one per parent on purpose.
    t = await buildTestApp({ GRAPHQL_MAX_COST: '10000000' }, { onQuery: (sql) => recording && statements.push(sql) })
    const make = createFactories(t)
    for (let u = 0; u < 6; u++) {
      const writer = await make.user({ age: 200 + u })
      writers.push(writer)
      for (let p = 0; p < 3; p++) {
        const post = await make.post(writer)
        for (let c = 0; c < 3; c++) await make.comment(post, t.bob)
        await make.todo(writer)
      }
    }
  })
  afterAll(() => t.close())

  const NESTED = (where: string) => `{
    usersConnection(where: ${where}, first: 10) {
      edges { node { id
        postsConnection(first: 2) { ${PAGE} edges { node { commentsConnection(first: 2) { ${PAGE} } } } }
        todosConnection(first: 2) { ${PAGE} }
      } }
    }
  }`

  async function recorded(query: string, token?: string) {
    statements = []
    recording = true
    const answer = await graphql(t, query, { token })
    recording = false
    expect(answer.body.errors).toBeUndefined()
    return { data: answer.body.data, statements: [...statements] }
  }

  it('reads the first page of every parent in one statement per level, whatever the number of parents', async () => {
    const one = await recorded(NESTED('{age: {gte: 205}}'))
    const six = await recorded(NESTED('{age: {gte: 200}}'))
    // usersConnection, postsConnection, todosConnection, commentsConnection.
    expect(one.statements).toHaveLength(4)
    expect(six.statements).toHaveLength(4)
    const users = (
      six.data?.usersConnection as { edges: { node: { postsConnection: Connection & { edges: { node: { commentsConnection: Connection } }[] } } }[] }
    ).edges
    expect(users).toHaveLength(6)
    for (const { node } of users) {
      expect(node.postsConnection.edges).toHaveLength(2)
      expect(node.postsConnection.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false })
      for (const post of node.postsConnection.edges) {
        expect(post.node.commentsConnection.edges).toHaveLength(2)
        expect(post.node.commentsConnection.pageInfo.hasNextPage).toBe(true)
      }
    }
  })

  it("reads every parent's totalCount in one more statement per level, only when selected", async () => {
    const counting = (where: string) =>
      NESTED(where)
        .replace('postsConnection(first: 2) {', 'postsConnection(first: 2) { totalCount')
        .replace('commentsConnection(first: 2) {', 'commentsConnection(first: 2) { totalCount totalCountCapped')
        .replace('todosConnection(first: 2) {', 'todosConnection(first: 2) { totalCount')
    const one = await recorded(counting('{age: {gte: 205}}'))
    const six = await recorded(counting('{age: {gte: 200}}'))
    expect(one.statements).toHaveLength(7)
    expect(six.statements).toHaveLength(7)
    const users = (
      six.data?.usersConnection as {
        edges: { node: { postsConnection: Connection & { edges: { node: { commentsConnection: Connection } }[] }; todosConnection: Connection } }[]
      }
    ).edges
    for (const { node } of users) {
      expect(node.postsConnection.totalCount).toBe(3)
      expect(node.todosConnection.totalCount).toBe(3)
      for (const post of node.postsConnection.edges) expect(post.node.commentsConnection).toMatchObject({ totalCount: 3, totalCountCapped: false })
    }
  })

  it("pages one parent's list on from an edge's cursor, forward and backward, in id order", async () => {
    const writer = writers[0] as User
    const posts = (args: string) =>
      graphql(t, `{ user(id: ${writer.id}) { postsConnection(${args}) { ${PAGE} totalCount } } }`).then((answer) => {
        expect(answer.body.errors).toBeUndefined()
        return (answer.body.data?.user as { postsConnection: Connection }).postsConnection
      })
    const first = await posts('first: 2')
    const rest = await posts(`first: 2, after: "${first.pageInfo.endCursor}"`)
    expect(rest.edges).toHaveLength(1)
    expect(rest.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true })
    const all = [...first.edges, ...rest.edges].map((edge) => Number(edge.node.id))
    expect(all).toEqual([...all].sort((a, b) => a - b))
    expect(first.totalCount).toBe(3)
    const last = await posts('last: 2')
    expect(last.edges.map((edge) => Number(edge.node.id))).toEqual(all.slice(1))
    expect(last.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true })
    // A nested edge's cursor is REST's on the user's posts.
    const response = await t.request({ method: 'GET', url: `/api/v1/users/${writer.id}/posts?cursor=${first.pageInfo.endCursor}` })
    expect((response.json().data as { id: number }[]).map((post) => post.id)).toEqual(all.slice(2))
  })

  it('shows drafts in postsConnection only to their author and admins, as posts does', async () => {
    const make = createFactories(t)
    const draft = await make.draft(t.alice)
    const counts = async (token?: string) => {
      const answer = await graphql(t, `{ user(id: ${t.alice.id}) { postsConnection { totalCount } last: postsConnection(last: 1) { totalCount } } }`, { token })
      return Object.values(answer.body.data?.user as Record<string, Connection>).map((connection) => connection.totalCount)
    }
    const published = (await counts()) as number[]
    expect(await counts(t.tokens.alice)).toEqual(published.map((count) => count + 1))
    expect(await counts(t.tokens.bob)).toEqual(published)
    const query = `{ user(id: ${t.alice.id}) { postsConnection { edges { node { id } } } first: postsConnection(first: 5) { edges { node { id } } } last: postsConnection(last: 5) { edges { node { id } } } } }`
    const seen = async (token?: string) => {
      const answer = await graphql(t, query, { token })
      expect(answer.body.errors).toBeUndefined()
      const user = answer.body.data?.user as Record<string, Connection>
      return Object.values(user).map((connection) => connection.edges.some((edge) => Number(edge.node.id) === draft.id))
    }
    expect(await seen(t.tokens.alice)).toEqual([true, true, true])
    expect(await seen(t.tokens.admin)).toEqual([true, true, true])
    expect(await seen(t.tokens.bob)).toEqual([false, false, false])
    expect(await seen()).toEqual([false, false, false])
  })
})

describe('the cost of connections', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ GRAPHQL_MAX_COST: '1' })
  })
  afterAll(() => t.close())

  const costOf = async (query: string) => {
    const answer = await graphql(t, query)
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', limit: 'cost' })
    return answer.body.errors?.[0]?.extensions?.value as number
  }

  it('counts first and last as page sizes, and totalCount as a count', async () => {
    const list = await costOf('{ users(limit: 100) { posts(limit: 100) { comments(limit: 100) { id } } } }')
    const connection = await costOf(
      '{ usersConnection(first: 100) { edges { node { postsConnection(last: 100) { edges { node { commentsConnection(first: 100) { edges { node { id } } } } } } } } } }',
    )
    // The connection's edges and nodes are fields of their own: it costs more than the list, never less.
    expect(list).toBe(1_010_101)
    expect(connection).toBeGreaterThan(list)
    expect(await costOf('{ usersConnection(first: 5) { totalCount edges { cursor } } }')).toBe(
      (await costOf('{ usersConnection(first: 5) { edges { cursor } } }')) + 1 + 10_000,
    )
    expect(await costOf('{ usersConnection { edges { cursor } } }')).toBe(1 + 1 + 20)
  })

  it('refuses a costly nested connection at the default limit as it refuses the equivalent list', async () => {
    const app = await buildTestApp()
    try {
      for (const query of [
        '{ users(limit: 100) { posts(limit: 100) { comments(limit: 100) { id } } } }',
        '{ usersConnection(first: 100) { edges { node { postsConnection(first: 100) { edges { node { commentsConnection(first: 100) { edges { node { id } } } } } } } } } }',
      ]) {
        const answer = await graphql(app, query)
        expect(answer.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', limit: 'cost', max: 100_000 })
      }
    } finally {
      await app.close()
    }
  })
})
