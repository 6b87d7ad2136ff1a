// The operators of the collection query language (`field[op]=value`): each on every
// type of field (integer, text, enumeration, e-mail, instant, an instant that may be missing,
// boolean), the refusals naming `field[op]`, cursors bound to the conditions, and keyset pages
// with operators on the sort key, followed to the end and back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCollectionQuery } from '../../src/collections/collection-query.js'
import { UsersCollection } from '../../src/users/users.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, todoPath } from '../helpers/factories.js'

let t: TestApp

/** The users made here besides Ada Admin (no age), Alice (no age) and Bob (41), created now by the test app. */
const PEOPLE = [
  { name: 'Carol', email: 'Carol@Example.com', age: 30, role: 'user', createdAt: '2024-01-01T00:00:00.000Z' },
  { name: 'Dave', email: 'dave@example.com', age: 50, role: 'admin', createdAt: '2024-01-02T00:00:00.000Z' },
  { name: 'erin', email: 'erin@example.com', age: 29, role: 'user', createdAt: '2024-01-03T00:00:00.000Z' },
  { name: 'Smith, Jo', email: 'jo@example.com', age: null, role: 'user', createdAt: '2024-01-04T00:00:00.000Z' },
  { name: 'émile', email: 'emile@example.com', age: 30, role: 'user', createdAt: '2024-01-05T00:00:00.000Z' },
] as const

/** Alice's posts: a draft has no publishedAt; 03-02 three times, so the id breaks ties. */
const POSTS = ['03-01', '03-02', null, '03-02', '03-03', null, '03-04', '03-02', '03-05', null] as const
/** Post number (1-based, as in POSTS) → id. */
const post: Record<number, number> = {}
const userId: Record<string, number> = {}

beforeAll(async () => {
  t = await buildTestApp()
  for (const person of PEOPLE) {
    const { createdAt, age, ...input } = person
    const user = await t.createUser({ ...input, ...(age === null ? {} : { age }) })
    await t.database.db.updateTable('users').set({ created_at: createdAt }).where('id', '=', user.id).execute()
    userId[person.name] = user.id
  }
  for (const [i, day] of POSTS.entries()) {
    const at = day === null ? null : `2024-${day}T00:00:00.000Z`
    const row = await t.database.db
      .insertInto('posts')
      .values({
        user_id: t.alice.id,
        title: `Post ${i + 1}`,
        content: '.',
        status: at === null ? 'draft' : 'published',
        published_at: at,
        created_at: '2024-02-01T00:00:00.000Z',
        updated_at: '2024-02-01T00:00:00.000Z',
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    post[i + 1] = row.id
  }
})
afterAll(() => t.close())

const get = async (url: string, token?: string) => {
  const res = await t.request({ method: 'GET', url, ...(token === undefined ? {} : { token }) })
  return { status: res.statusCode, body: res.json(), link: (res.headers.link as string | undefined) ?? '' }
}
/** The names /users answers to the query, in id order (one page holds them all). */
const names = async (query: string): Promise<string[]> => {
  const { status, body } = await get(`/api/v1/users?limit=100&${query}`)
  expect(status, JSON.stringify(body)).toBe(200)
  return body.data.map((user: { name: string }) => user.name)
}
/** The numbers (as in POSTS) of Alice's posts the query selects, as her own list answers them. */
const posts = async (query: string): Promise<number[]> => {
  const { status, body } = await get(`/api/v1/users/${t.alice.id}/posts?limit=100&${query}`, t.tokens.alice)
  expect(status, JSON.stringify(body)).toBe(200)
  return body.data.map((item: { id: number }) => numberOf(item.id))
}
const numberOf = (id: number) => Number(Object.entries(post).find(([, known]) => known === id)?.[0])
const everyone = ['Ada Admin', 'Alice', 'Bob', 'Carol', 'Dave', 'erin', 'Smith, Jo', 'émile']
const except = (...left: string[]) => everyone.filter((name) => !left.includes(name))

describe('operators on each type of field', () => {
  it.each([
    ['age[gt]=30', ['Bob', 'Dave']],
    ['age[gte]=30&age[lt]=50', ['Bob', 'Carol', 'émile']],
    ['age[lte]=29', ['erin']],
    ['age[lt]=-5', []],
    ['age[eq]=30', ['Carol', 'émile']],
    ['age[eq]=30&age[eq]=29', ['Carol', 'erin', 'émile']],
    ['age[ne]=30', except('Carol', 'émile')],
    ['age[ne]=30&age[ne]=null', ['Bob', 'Dave', 'erin']],
    ['age[ne]=null', ['Bob', 'Carol', 'Dave', 'erin', 'émile']],
    ['age[in]=29,50', ['Dave', 'erin']],
    ['age[in]=29,null', ['Ada Admin', 'Alice', 'erin', 'Smith, Jo']],
    ['age[null]=true', ['Ada Admin', 'Alice', 'Smith, Jo']],
    ['age[null]=false', ['Bob', 'Carol', 'Dave', 'erin', 'émile']],
    ['age=30&age[ne]=30', []],
    ['age=30&age=41&age[gt]=30', ['Bob']],
  ])('compares a nullable integer: %s', async (query, expected) => {
    expect(await names(query)).toEqual(expected)
  })

  it('compares ids as integers', async () => {
    expect(await names(`id[gt]=${userId.Carol}&id[lte]=${userId.erin}`)).toEqual(['Dave', 'erin'])
    expect(await names(`id[in]=${userId.Carol},${userId.Dave}&id[ne]=${userId.Dave}`)).toEqual(['Carol'])
  })

  it.each([
    ['name[gte]=B&name[lt]=D', ['Bob', 'Carol']],
    // Code-point order: capitals, then small letters, then é.
    ['name[gt]=Z', ['erin', 'émile']],
    ['name[gt]=z', ['émile']],
    ['name[lte]=Alice', ['Ada Admin', 'Alice']],
    ['name[ne]=Alice', except('Alice')],
    ['name[in]=Bob,erin', ['Bob', 'erin']],
    // A comma splits an `in` list; the value holding one takes the repeated form.
    ['name[in]=Smith,%20Jo', []],
    ['name=Smith,%20Jo', ['Smith, Jo']],
    ['name[eq]=Smith,%20Jo&name[eq]=Bob', ['Bob', 'Smith, Jo']],
  ])('compares text exactly, in code-point order: %s', async (query, expected) => {
    expect(await names(query)).toEqual(expected)
  })

  it.each([
    ['role[eq]=admin', ['Ada Admin', 'Dave']],
    ['role[ne]=admin', except('Ada Admin', 'Dave')],
    ['role[in]=admin,user', everyone],
    ['role[in]=user&role[ne]=user', []],
  ])('compares an enumeration with eq, ne and in: %s', async (query, expected) => {
    expect(await names(query)).toEqual(expected)
  })

  it.each([
    ['email[eq]=CAROL@EXAMPLE.COM', ['Carol']],
    ['email[lt]=C', ['Ada Admin', 'Alice', 'Bob']],
    ['email[gte]=CAROL@example.com&email[lt]=E', ['Carol', 'Dave']],
    ['email[ne]=ALICE@example.com', except('Alice')],
    ['email[in]=BOB@example.com,carol@EXAMPLE.com', ['Bob', 'Carol']],
  ])('compares e-mail addresses without regard to case, ranges too: %s', async (query, expected) => {
    expect(await names(query)).toEqual(expected)
  })

  it.each([
    ['createdAt[lt]=2024-01-03T00:00:00Z', ['Carol', 'Dave']],
    ['createdAt[gte]=2024-01-02T01:00:00%2B01:00&createdAt[lte]=2024-01-03T00:00Z', ['Dave', 'erin']],
    ['createdAt[gt]=2024-01-04T01:00:00%2B01:00', ['Ada Admin', 'Alice', 'Bob', 'émile']],
    ['createdAt[gt]=2024-01-03T23:00:00-01:00', ['Ada Admin', 'Alice', 'Bob', 'émile']],
    ['createdAt[gte]=2024-01-04T00:00:00.001Z&createdAt[lt]=2025-01-01T00:00Z', ['émile']],
    ['createdAt[ne]=2024-01-01T05:30:00%2B05:30&createdAt[lt]=2024-01-03T00:00Z', ['Dave']],
    ['createdAt[in]=2024-01-01T00:00:00.000Z,2024-01-04T00:00:00Z', ['Carol', 'Smith, Jo']],
  ])('compares instants, whatever offset they are written with: %s', async (query, expected) => {
    expect(await names(query)).toEqual(expected)
  })

  it.each([
    ['publishedAt[null]=true', [3, 6, 10]],
    ['publishedAt=null', [3, 6, 10]],
    ['publishedAt[null]=false', [1, 2, 4, 5, 7, 8, 9]],
    ['publishedAt[ne]=null', [1, 2, 4, 5, 7, 8, 9]],
    // A missing value is never in a range, and differs from every value.
    ['publishedAt[lt]=2024-03-03T00:00Z', [1, 2, 4, 8]],
    ['publishedAt[ne]=2024-03-02T00:00Z', [1, 3, 5, 6, 7, 9, 10]],
    ['publishedAt[gte]=2024-03-02T01:00%2B01:00&publishedAt[lte]=2024-03-03T00:00Z', [2, 4, 5, 8]],
    ['publishedAt[in]=2024-03-01T00:00Z,null', [1, 3, 6, 10]],
    ['publishedAt[null]=false&publishedAt[gt]=2024-03-03T00:00Z', [7, 9]],
    ['status[ne]=draft&publishedAt[lt]=2024-03-02T00:00Z', [1]],
  ])('compares an instant that may be missing: %s', async (query, expected) => {
    expect(await posts(query)).toEqual(expected)
  })

  it('compares booleans with eq, ne and in', async () => {
    const make = createFactories(t)
    const todos = [await make.todo(t.bob), await make.todo(t.bob), await make.todo(t.bob)]
    const done = await t.request({ method: 'PATCH', url: todoPath(todos[1]!), token: t.tokens.bob, json: { completed: true } })
    expect(done.statusCode).toBe(200)
    const ids = async (query: string) => {
      const { status, body } = await get(`/api/v1/users/${t.bob.id}/todos?${query}`, t.tokens.bob)
      expect(status, JSON.stringify(body)).toBe(200)
      return body.data.map((todo: { id: number }) => todo.id)
    }
    const [open1, closed, open2] = todos.map((todo) => todo.id)
    expect(await ids('completed[eq]=true')).toEqual([closed])
    expect(await ids('completed[ne]=true')).toEqual([open1, open2])
    expect(await ids('completed[ne]=false')).toEqual([closed])
    expect(await ids('completed[in]=true,false')).toEqual([open1, closed, open2])
    expect(await ids('completed=false&completed[in]=true')).toEqual([])
  })
})

describe('refusals', () => {
  it.each([
    ['age[foo]=1', 'age[foo]', 'is not an operator; these fit age: eq, ne, gt, gte, lt, lte, in, null'],
    ['age[]=1', 'age[]', 'is not an operator; these fit age: eq, ne, gt, gte, lt, lte, in, null'],
    ['age[GTE]=1', 'age[GTE]', 'is not an operator; these fit age: eq, ne, gt, gte, lt, lte, in, null'],
    ['role[gt]=admin', 'role[gt]', 'does not fit an enumeration; these fit role: eq, ne, in'],
    ['name[null]=true', 'name[null]', 'does not fit a field that is never missing; these fit name: eq, ne, gt, gte, lt, lte, in'],
    ['createdAt[null]=false', 'createdAt[null]', 'does not fit a field that is never missing; these fit createdAt: eq, ne, gt, gte, lt, lte, in'],
    ['nope[gte]=1', 'nope[gte]', 'is not a field of this collection'],
    ['age[gte][x]=1', 'age[gte][x]', 'is not a field of this collection'],
    ['avatar[eq]=x', 'avatar[eq]', 'cannot be filtered on; search it with q'],
    ['age[gte]=thirty', 'age[gte]', 'must be an integer from -2147483648 to 2147483647'],
    ['age[gte]=2147483648', 'age[gte]', 'must be an integer from -2147483648 to 2147483647'],
    ['age[gt]=null', 'age[gt]', 'cannot be compared with null; use age[null]'],
    ['age[ne]=x', 'age[ne]', 'must be an integer from -2147483648 to 2147483647 (or null)'],
    ['age[in]=1,x', 'age[in]', 'must be an integer from -2147483648 to 2147483647 (or null)'],
    ['age[in]=', 'age[in]', 'must be an integer from -2147483648 to 2147483647 (or null)'],
    [`age[in]=${Array.from({ length: 101 }, (_, i) => i).join(',')}`, 'age[in]', 'may name at most 100 values'],
    [Array.from({ length: 101 }, (_, i) => `age[ne]=${i}`).join('&'), 'age[ne]', 'may be given at most 100 times'],
    ['age[gte]=1&age[gte]=2', 'age[gte]', 'may be given only once'],
    ['age[null]=true&age[null]=true', 'age[null]', 'may be given only once'],
    ['age[null]=yes', 'age[null]', 'must be true or false'],
    ['createdAt[lt]=yesterday', 'createdAt[lt]', 'must be an ISO 8601 date-time in the years 0001 to 9999'],
    ['createdAt[gt]=0000-12-31T23:00Z', 'createdAt[gt]', 'must be an ISO 8601 date-time in the years 0001 to 9999'],
    ['role[in]=admin,root', 'role[in]', 'must be one of: user, admin'],
    ['name[lt]=a%00', 'name[lt]', 'must be text without NUL characters'],
  ])('answers %s with 400 and one detail naming field[op]', async (query, field, message) => {
    const { status, body } = await get(`/api/v1/users?${query}`)
    expect(status).toBe(400)
    expect(body.error.code).toBe('BAD_REQUEST')
    expect(body.error.details).toEqual([{ field, message }])
  })

  it('refuses operators that do not fit a boolean, or a field never missing', async () => {
    for (const [query, field, message] of [
      ['completed[gt]=true', 'completed[gt]', 'does not fit a boolean field; these fit completed: eq, ne, in'],
      ['completed[null]=true', 'completed[null]', 'does not fit a field that is never missing; these fit completed: eq, ne, in'],
      ['completed[in]=true,maybe', 'completed[in]', 'must be true or false'],
    ]) {
      const { status, body } = await get(`/api/v1/users/${t.bob.id}/todos?${query}`, t.tokens.bob)
      expect(status, query).toBe(400)
      expect(body.error.details).toEqual([{ field, message }])
    }
    const { body } = await get(`/api/v1/users/${t.alice.id}/posts?status[lte]=draft&publishedAt[gt]=soon`, t.tokens.alice)
    expect(body.error.details).toEqual([
      { field: 'status[lte]', message: 'does not fit an enumeration; these fit status: eq, ne, in' },
      { field: 'publishedAt[gt]', message: 'must be an ISO 8601 date-time in the years 0001 to 9999' },
    ])
  })
})

describe('cursors and pages with operators', () => {
  it('binds a cursor to the conditions, not to how the query spells them', async () => {
    const first = await get('/api/v2/users?limit=2&age[gte]=3&age[lt]=99')
    const cursor = first.body.meta.pagination.nextCursor as string
    expect(cursor).toEqual(expect.any(String))
    // The same conditions in another order, or spelled another way, take the cursor.
    const swapped = await get(`/api/v2/users?age[lt]=99&limit=2&age[gte]=3&cursor=${cursor}`)
    expect(swapped.status).toBe(200)
    expect(swapped.body.data.map((user: { name: string }) => user.name)).toEqual(['Dave', 'erin'])
    // Another value, another operator, or one condition more or less refuse it.
    for (const other of ['age[gte]=4&age[lt]=99', 'age[gt]=3&age[lt]=99', 'age[gte]=3', 'age[gte]=3&age[lt]=99&age[ne]=null', 'age=3&age[lt]=99']) {
      const refused = await get(`/api/v2/users?limit=2&${other}&cursor=${cursor}`)
      expect(refused.status, other).toBe(400)
      expect(refused.body.error.details, other).toEqual([{ field: 'cursor', message: 'is not valid for this query' }])
    }
  })

  it('reads null=true as eq=null, and the in list as a set, for the fingerprint too', () => {
    const fingerprint = (raw: Record<string, unknown>) =>
      parseCollectionQuery(UsersCollection, raw, { defaultMode: 'cursor', withTotal: false, scope: '' }).fingerprint
    expect(fingerprint({ 'age[null]': 'true' })).toBe(fingerprint({ age: 'null' }))
    expect(fingerprint({ 'age[null]': 'false' })).toBe(fingerprint({ 'age[ne]': 'null' }))
    expect(fingerprint({ 'age[in]': '1,2' })).toBe(fingerprint({ 'age[in]': '2,1,2' }))
    expect(fingerprint({ 'age[in]': '1,2' })).not.toBe(fingerprint({ 'age[ne]': ['1', '2'] }))
    expect(fingerprint({ 'age[gte]': '1' })).not.toBe(fingerprint({ 'age[gt]': '1' }))
  })

  it('takes a list for in, each item one value (GraphQL hands its lists over so)', () => {
    const { filters } = parseCollectionQuery(UsersCollection, { 'name[in]': ['Smith, Jo', 'Bob'] }, { defaultMode: 'cursor', withTotal: false, scope: '' })
    expect(filters.map(({ field, operator, values }) => ({ field: field.name, operator, values }))).toEqual([
      { field: 'name', operator: 'in', values: ['Smith, Jo', 'Bob'] },
    ])
  })

  /** Follows rel="next" from the first page to the last, then rel="prev" back to the first: both walks must give `expected`. */
  async function walk(first: string, expected: number[]) {
    const pages: number[][] = []
    let url: string | undefined = first
    let last = { body: undefined as unknown, link: '' }
    while (url !== undefined) {
      const page = await get(url, t.tokens.alice)
      expect(page.status, JSON.stringify(page.body)).toBe(200)
      pages.push(page.body.data.map((item: { id: number }) => numberOf(item.id)))
      last = page
      url = /<([^>]+)>; rel="next"/.exec(page.link)?.[1]
      expect(pages.length).toBeLessThanOrEqual(expected.length + 1)
    }
    expect(pages.flat()).toEqual(expected)
    const back: number[][] = [pages.at(-1) as number[]]
    url = /<([^>]+)>; rel="prev"/.exec(last.link)?.[1]
    while (url !== undefined) {
      const page = await get(url, t.tokens.alice)
      expect(page.status, JSON.stringify(page.body)).toBe(200)
      back.unshift(page.body.data.map((item: { id: number }) => numberOf(item.id)))
      url = /<([^>]+)>; rel="prev"/.exec(page.link)?.[1]
      expect(back.length).toBeLessThanOrEqual(expected.length + 1)
    }
    expect(back.flat()).toEqual(expected)
  }

  it('pages by cursor with a range on the sort key, missing and repeating nothing, forward and back', async () => {
    const base = `/api/v2/users/${t.alice.id}/posts`
    // Descending, ties by id descending; the drafts (no publishedAt) are outside any range.
    await walk(`${base}?sort=-publishedAt&publishedAt[lt]=2024-03-05T00:00Z&limit=2`, [7, 5, 8, 4, 2, 1])
    await walk(`${base}?sort=-publishedAt&publishedAt[gt]=2024-03-01T00:00Z&publishedAt[lte]=2024-03-04T00:00Z&limit=1`, [7, 5, 8, 4, 2])
    // Ascending, missing values first: ne keeps them.
    await walk(`${base}?sort=publishedAt&publishedAt[ne]=2024-03-04T00:00Z&limit=3`, [3, 6, 10, 1, 2, 4, 8, 5, 9])
    await walk(`${base}?sort=publishedAt,-title&publishedAt[gte]=2024-03-02T00:00Z&title[ne]=Post%204&limit=2`, [8, 2, 5, 7, 9])
  })

  it('pages by offset with the same conditions, and v1 counts them', async () => {
    const base = `/api/v1/users/${t.alice.id}/posts?sort=-publishedAt&publishedAt[lt]=2024-03-05T00:00Z&limit=4`
    const first = await get(base, t.tokens.alice)
    expect(first.body.meta.pagination).toMatchObject({ page: 1, total: 6, pages: 2 })
    expect(first.body.data.map((item: { id: number }) => numberOf(item.id))).toEqual([7, 5, 8, 4])
    const second = await get(`${base}&page=2`, t.tokens.alice)
    expect(second.body.data.map((item: { id: number }) => numberOf(item.id))).toEqual([2, 1])
    // Page mode hands out a cursor too: it continues under the same conditions.
    const next = await get(`${base.replace('/v1/', '/v2/')}&cursor=${first.body.meta.pagination.nextCursor}`, t.tokens.alice)
    expect(next.body.data.map((item: { id: number }) => numberOf(item.id))).toEqual([2, 1])
  })
})
