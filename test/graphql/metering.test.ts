// GraphQL metered where the work is spent: the rate limit takes a point for each
// operation of a batch, each top-level mutation field, and each 1,000 of cost, all before anything
// runs; the cost model charges searching, counting and deep offsets by the rows they may read.
// On the in-process store and on Redis.
import { buildSchema, parse } from 'graphql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { operationCosts } from '../../src/graphql/document-limits/cost-measure.js'
import { FEATURES, graphqlTypeDefs } from '../../src/features.js'
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../src/collections/pagination.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { uniquePrefix } from '../helpers/private-redis.js'
import { redisUrl } from '../helpers/services.js'

const sharedUrl = await redisUrl()

/** Fifteen aliases of a search that matches nothing, counted: 2.5 s of event loop on 200,000 users before searches and counts were metered. */
const searchAndCount = (aliases: number) =>
  `{ ${Array.from({ length: aliases }, (_, i) => `a${i}: usersPage(q: "zz-nomatch", limit: 1) { pageInfo { total } }`).join(' ')} }`

const stores = [
  { store: 'memory', skip: false, env: (): Record<string, string> => ({}) },
  { store: 'Redis', skip: sharedUrl === undefined, env: (): Record<string, string> => ({ REDIS_URL: sharedUrl as string, REDIS_KEY_PREFIX: uniquePrefix() }) },
]

describe.each(stores)('GraphQL points on the $store store', ({ skip, env }) => {
  let t: TestApp
  beforeAll(async () => {
    if (skip) return
    t = await buildTestApp({ RATE_LIMIT_MAX: '300', RATE_LIMIT_AUTHENTICATED_MAX: '25', RATE_LIMIT_WINDOW_S: '60', ...env() })
  })
  afterAll(() => t?.close())

  let nextAddress = 1
  const anonymous = (payload: unknown) =>
    t.app.inject({ method: 'POST', url: '/graphql', remoteAddress: `10.7.0.${nextAddress++}`, payload: payload as object })
  /** As a fresh signed-in user, so each test has an allowance of its own (25 points). */
  async function signedIn() {
    const user = await t.createUser({ name: 'Metered', email: `metered-${nextAddress++}@example.com` })
    const token = await t.tokenFor(user.id)
    const post = (payload: unknown) =>
      t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${token}` }, payload: payload as object })
    const todos = async () => (await t.database.db.selectFrom('todos').select('id').where('user_id', '=', user.id).execute()).length
    return { post, todos }
  }
  const remaining = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-remaining'])
  const cost = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-cost'])
  const cheap = { query: '{ users(limit: 1) { id } }' }

  it.skipIf(skip)(
    'takes a point for each operation of a batch, and refuses one the allowance cannot pay with 429 and Retry-After, running none of it',
    async () => {
      const { post, todos } = await signedIn()
      const one = await post(cheap)
      expect(one.statusCode).toBe(200)
      expect([remaining(one), cost(one)]).toEqual([24, 1])

      const batch = await post(Array(10).fill(cheap))
      expect(batch.statusCode).toBe(200)
      expect(batch.json<unknown[]>().length).toBe(10)
      expect([remaining(batch), cost(batch)]).toEqual([14, 10])
      expect(remaining(await post(Array(10).fill(cheap)))).toBe(4)

      // 4 left; three mutations need 3 more than the point of their arrival, which leaves 3.
      const addTodo = (text: string) => ({ query: `mutation { addTodo(text: "${text}") { id } }` })
      const refused = await post([addTodo('a'), addTodo('b'), addTodo('c'), addTodo('d'), addTodo('e')])
      expect(refused.statusCode).toBe(429)
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      expect(refused.json()).toEqual({
        errors: [
          {
            message: expect.stringMatching(/^This request costs 5 points; 3 of 25 are left in this 60 s window\. Retry in \d+ s\.$/),
            extensions: { code: 'RATE_LIMITED', retryAfter: Number(refused.headers['retry-after']) },
          },
        ],
      })
      expect([remaining(refused), cost(refused)]).toEqual([3, 1])
      expect(await todos()).toBe(0)

      // The refusal took only its arrival's point: three operations still fit.
      const fits = await post([addTodo('a'), addTodo('b'), addTodo('c')])
      expect(fits.statusCode).toBe(200)
      expect([remaining(fits), cost(fits)]).toEqual([0, 3])
      expect(await todos()).toBe(3)
    },
  )

  it.skipIf(skip)('takes a point for each top-level mutation field, aliases and fragments included', async () => {
    const { post, todos } = await signedIn()
    const five = await post({ query: `mutation { ${['a', 'b', 'c', 'd', 'e'].map((k) => `${k}: addTodo(text: "${k}") { id }`).join(' ')} }` })
    expect(five.statusCode).toBe(200)
    expect([remaining(five), cost(five)]).toEqual([20, 5])
    expect(await todos()).toBe(5)
    const viaFragments = await post({
      query:
        'mutation { ...Two ... on Mutation { c: addTodo(text: "c") { id } } } fragment Two on Mutation { a: addTodo(text: "a") { id } b: addTodo(text: "b") { id } }',
    })
    expect([viaFragments.statusCode, remaining(viaFragments), cost(viaFragments)]).toEqual([200, 17, 3])
  })

  it.skipIf(skip)('refuses 15 aliased searches with their totals by cost, and charges a search with a count 21 points', async () => {
    const refused = await anonymous({ query: searchAndCount(15) })
    expect(refused.statusCode).toBe(200)
    const { errors } = refused.json<{ errors: { message: string; extensions: Record<string, unknown> }[] }>()
    expect(errors.map((e) => e.extensions)).toEqual([{ code: 'BAD_REQUEST', limit: 'cost', value: 15 * 20_003, max: 100_000 }])
    expect(errors[0]?.message).toBe(
      'The query costs 300045 (each field 1, each search, count and page by offset the rows it may read, times the page size of each list it is in); the limit is 100000',
    )
    // Refused before it runs: the point of its arrival, no more.
    expect(cost(refused)).toBe(1)

    const one = await anonymous({ query: searchAndCount(1) })
    expect(one.json()).toEqual({ data: { a0: { pageInfo: { total: 0 } } } })
    expect([cost(one), remaining(one)]).toEqual([21, 279])
  })

  it.skipIf(skip)('refuses a batch of ten such documents, each under the cost limit, with 429: it costs more than the allowance', async () => {
    const batch = await anonymous(Array(10).fill({ query: searchAndCount(4) }))
    expect(batch.statusCode).toBe(429)
    expect(batch.json().errors[0]).toMatchObject({
      message: 'This request costs 810 points, more than the whole allowance of 300 per 60 s: send less in one request.',
      extensions: { code: 'RATE_LIMITED' },
    })
    expect(Number(batch.headers['retry-after'])).toBeGreaterThanOrEqual(1)
  })

  it.skipIf(skip)('charges GET /graphql the same way', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/graphql?query=${encodeURIComponent(searchAndCount(1))}`, remoteAddress: '10.7.1.1' })
    expect(res.statusCode).toBe(200)
    expect([cost(res), remaining(res)]).toEqual([21, 279])
  })
})

describe('the cost of reads', () => {
  // The service's own schema.
  const schema = buildSchema(graphqlTypeDefs())
  const costOf = (document: string) => operationCosts(parse(document), schema, { defaultLimit: DEFAULT_PAGE_LIMIT, maxLimit: MAX_PAGE_LIMIT })[0]?.[1]

  it('charges a search and a count the rows they may read (10,000 each), once per page', () => {
    expect(costOf('{ usersPage(limit: 1) { pageInfo { limit } } }')).toBe(3)
    expect(costOf('{ usersPage(q: "zz", limit: 1) { pageInfo { limit } } }')).toBe(3 + 10_000)
    expect(costOf('{ usersPage(q: null, limit: 1) { pageInfo { limit } } }')).toBe(3)
    expect(costOf('query($q: String) { usersPage(q: $q, limit: 1) { pageInfo { limit } } }')).toBe(3 + 10_000)
    expect(costOf('{ usersPage(limit: 1) { pageInfo { total } } }')).toBe(3 + 10_000)
    // total, totalCapped and pages come from one count.
    expect(costOf('{ usersPage(limit: 1) { pageInfo { total totalCapped pages } } }')).toBe(5 + 10_000)
    expect(costOf('{ users(q: "zz", limit: 1) { id } }')).toBe(2 + 10_000)
  })

  it('charges a page by offset the page × limit rows it reads, on collections and nested windows, a variable page as the whole window', () => {
    expect(costOf('{ users(limit: 100) { id } }')).toBe(101)
    expect(costOf('{ users(page: 1, limit: 100) { id } }')).toBe(101)
    expect(costOf('{ users(page: 50, limit: 100) { id } }')).toBe(101 + 5_000)
    expect(costOf('query($p: Int) { users(page: $p, limit: 100) { id } }')).toBe(101 + 10_000)
    // A nested window is read once per parent: 10 × (1 + 300 rows + 100 items).
    expect(costOf('{ users(limit: 10) { posts(limit: 100, page: 3) { id } } }')).toBe(1 + 10 * (1 + 300 + 100))
  })

  it('costs every collection on Query as users: its list, page and connection, searched, counted, by offset, and each alias again', () => {
    const queryFields = Object.keys(schema.getQueryType()?.getFields() ?? {})
    const collections = queryFields.filter((name) => queryFields.includes(`${name}Page`) && queryFields.includes(`${name}Connection`))
    // Every resource anyone can list (those the landing page counts) is a collection on Query.
    expect(collections).toEqual(expect.arrayContaining(FEATURES.filter(({ landingCount }) => landingCount !== undefined).map(({ name }) => name)))
    const documents = [
      (name: string) => `{ ${name}(limit: 100) { id } }`,
      (name: string) => `{ ${name} { id } }`,
      (name: string) => `{ ${name}(page: 50, limit: 100) { id } }`,
      (name: string) => `{ ${name}(q: "zz", limit: 1) { id } }`,
      (name: string) => `{ ${name}Page(q: "zz", limit: 1) { items { id } pageInfo { total } } }`,
      (name: string) => `{ ${name}Connection(first: 10) { totalCount edges { cursor node { id } } } }`,
      (name: string) => `{ a: ${name}(limit: 100) { id } b: ${name}(limit: 100) { id } c: ${name}Page { items { id } } }`,
    ]
    for (const name of collections) {
      for (const document of documents) expect(costOf(document(name)), document(name)).toBe(costOf(document('users')))
    }
    expect(costOf('{ posts(limit: 100) { id } comments(limit: 100) { id } todos(limit: 100) { id } }')).toBe(3 * 101)
    expect(costOf('{ postsPage(q: "zz", limit: 1) { pageInfo { total } } }')).toBe(3 + 10_000 + 10_000)
  })

  it('leaves ordinary queries as they were', () => {
    expect(costOf('{ users { id name posts(limit: 5) { title } } }')).toBe(1 + 20 * (2 + 1 + 5))
    expect(costOf('{ usersPage { items { id } pageInfo { nextCursor hasMore } } }')).toBe(1 + 1 + 20 + 3)
  })
})
