// Aggregates over REST (src/collections/aggregation.ts, docs/rest.md Aggregates): PostgREST's
// `select=count()`, `select=field,count()`, `field.avg()` and `alias:` on every collection GET,
// under the list's own filters and rights, bounded in rows and groups, and charged by the rows read.
import type { RouteOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGGREGATED_ROWS_PER_POINT, MAX_AGGREGATE_GROUPS, MAX_AGGREGATED_ROWS } from '../../src/collections/aggregation.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { idsForPath, seedEmptyFeatures } from '../helpers/seeded-rows.js'
import { readCsv } from '../helpers/csv.js'

const ALLOWANCE = 100
let t: TestApp
const captured: (RouteOptions & { prefix: string })[] = []
/** Every collection GET of API v1, its path parameters filled in. */
let collections: string[]

beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_AUTHENTICATED_MAX: String(ALLOWANCE) }, { onRoute: (route) => captured.push(route) })
  const make = createFactories(t)
  const first = await make.post(t.alice, { title: 'First' })
  await make.post(t.alice, { title: 'Second' })
  await make.draft(t.alice, { title: 'Hidden' })
  await make.post(t.bob, { title: 'By Bob' })
  await make.comment(first, t.bob)
  await make.comment(first, t.alice)
  const done = await make.todo(t.alice, { text: 'done' })
  await t.request({ method: 'PATCH', url: `/api/v1/users/${t.alice.id}/todos/${done.id}`, token: t.tokens.alice, json: { completed: true } })
  await make.todo(t.alice, { text: 'open' })
  await make.todo(t.bob, { text: 'open too' })
  await seedEmptyFeatures(t.database.db)
  collections = []
  for (const route of captured.filter((r) => r.prefix === '/api/v1' && r.method === 'GET' && r.config?.collection !== undefined)) {
    const path = route.url.slice(route.prefix.length)
    const ids = await idsForPath(t.database.db, path)
    collections.push(`/api/v1${path.replace(/:(\w+)/g, (_, name: string) => String(ids[name]))}`)
  }
}, 60_000)
afterAll(() => t.close())

const get = async (url: string, token?: string) => {
  const res = await t.request({ method: 'GET', url, ...(token === undefined ? {} : { token }) })
  return { status: res.statusCode, body: res.json(), headers: res.headers }
}

describe('select=count() on every collection', () => {
  it('counts what the list shows, in one group, for every collection GET', async () => {
    expect(collections.length).toBeGreaterThan(6)
    for (const path of collections) {
      const list = await get(`${path}?limit=1`, t.tokens.bob)
      const counted = await get(`${path}?select=count()`, t.tokens.bob)
      expect(counted.status, path).toBe(200)
      expect(counted.body.data, path).toEqual([{ count: list.body.meta.pagination.total }])
      expect(counted.body.meta.aggregate, path).toEqual({ groupedBy: [], groups: 1, rows: list.body.meta.pagination.total })
    }
  })
})

describe('aggregates of posts', () => {
  it('counts a draft only for whom it is visible', async () => {
    expect((await get('/api/v1/posts?select=count()')).body.data).toEqual([{ count: 3 }])
    expect((await get('/api/v1/posts?select=count()', t.tokens.bob)).body.data).toEqual([{ count: 3 }])
    expect((await get('/api/v1/posts?select=count()', t.tokens.alice)).body.data).toEqual([{ count: 4 }])
    expect((await get(`/api/v1/users/${t.alice.id}/posts?select=status,count()`, t.tokens.alice)).body.data).toEqual([
      { status: 'draft', count: 1 },
      { status: 'published', count: 2 },
    ])
  })

  it('groups by the plain fields beside the functions, renamed with alias:, ordered by sort', async () => {
    const { body } = await get('/api/v1/posts?select=author:userId,posts:count()&sort=-posts')
    expect(body.data).toEqual([
      { author: t.alice.id, posts: 2 },
      { author: t.bob.id, posts: 1 },
    ])
    expect(body.meta.aggregate).toEqual({ groupedBy: ['author'], groups: 2, rows: 3 })
  })

  it('answers 304 to If-None-Match, as a list does', async () => {
    const first = await get('/api/v1/posts?select=status,count()')
    expect(first.headers.etag).toBeDefined()
    const again = await t.request({ method: 'GET', url: '/api/v1/posts?select=status,count()', headers: { 'if-none-match': String(first.headers.etag) } })
    expect(again.statusCode).toBe(304)
  })

  it('applies the filters and the search of the list', async () => {
    expect((await get(`/api/v1/posts?select=count()&userId=${t.bob.id}`)).body.data).toEqual([{ count: 1 }])
    expect((await get('/api/v1/posts?select=count()&q=second')).body.data).toEqual([{ count: 1 }])
  })

  it('computes min and max over instants, sum and avg over numbers', async () => {
    const posts = (await get('/api/v1/posts?sort=createdAt&limit=10')).body.data as { createdAt: string }[]
    const { body } = await get('/api/v1/posts?select=first:createdAt.min(),last:createdAt.max(),userId.sum(),userId.avg(),userId.count()')
    const ids = [t.alice.id, t.alice.id, t.bob.id]
    expect(body.data).toEqual([
      {
        first: posts[0]!.createdAt,
        last: posts.at(-1)!.createdAt,
        sum: ids[0]! + ids[1]! + ids[2]!,
        avg: expect.closeTo((ids[0]! + ids[1]! + ids[2]!) / 3, 6),
        count: 3,
      },
    ])
  })
})

describe('aggregates of todos and comments', () => {
  it('counts todos done and not per user', async () => {
    const { body } = await get('/api/v1/todos?select=userId,completed,count()')
    expect(body.data).toEqual([
      { userId: t.alice.id, completed: false, count: 1 },
      { userId: t.alice.id, completed: true, count: 1 },
      { userId: t.bob.id, completed: false, count: 1 },
    ])
  })

  it('counts comments per post', async () => {
    const { body } = await get(`/api/v1/comments?select=postId,count()&authorId=${t.bob.id}`)
    expect(body.data).toHaveLength(1)
    expect(body.data[0].count).toBe(1)
  })
})

describe('aggregates as files', () => {
  const groupsAs = async (accept: string) => {
    const res = await t.request({ method: 'GET', url: '/api/v1/todos?select=user:userId,completed,count()', headers: { accept } })
    expect(res.statusCode).toBe(200)
    return { type: res.headers['content-type'], body: res.body }
  }

  it('answers the groups as CSV, a header record of their names first, or as NDJSON, when Accept asks', async () => {
    const json = (await get('/api/v1/todos?select=user:userId,completed,count()')).body.data as Record<string, unknown>[]
    const csv = await groupsAs('text/csv')
    expect(csv.type).toBe('text/csv; charset=utf-8; header=present')
    expect(readCsv(csv.body)).toEqual([['user', 'completed', 'count'], ...json.map((group) => [group.user, group.completed, group.count].map(String))])
    const ndjson = await groupsAs('application/x-ndjson')
    expect(ndjson.type).toBe('application/x-ndjson; charset=utf-8')
    expect(
      ndjson.body
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual(json)
    expect((await groupsAs('application/json')).type).toBe('application/json; charset=utf-8')
  })
})

describe('refusals', () => {
  it.each([
    ['title.sum()', 'select', /sum takes a number/],
    ['userId.median()', 'select', /not an aggregate function/],
    ['nothing.max()', 'select', /`nothing` is not a field/],
    ['content,count()', 'select', /cannot be grouped by/],
    ['createdAt.max(),updatedAt.max()', 'select', /names `max` twice/],
    ['count()&sort=title', 'sort', /not a name of this aggregate's answer/],
    ['count()&page=2', 'page', /does not apply to an aggregate/],
    ['count()&nope=1', 'nope', /not a field/],
  ])('refuses select=%s with 400 naming %s', async (query, field, message) => {
    const { status, body } = await get(`/api/v1/posts?select=${query}`)
    expect(status).toBe(400)
    expect(body.error.code).toBe('BAD_REQUEST')
    expect(body.error.details).toContainEqual({ field, message: expect.stringMatching(message) })
  })

  it(`refuses more than ${MAX_AGGREGATE_GROUPS} groups, and more than ${MAX_AGGREGATED_ROWS} rows`, async () => {
    const now = new Date().toISOString()
    const row = { user_id: t.bob.id, completed: 0, created_at: now, updated_at: now }
    const many = Array.from({ length: MAX_AGGREGATED_ROWS + 1 }, (_, n) => ({ ...row, text: `t${n}` }))
    for (let at = 0; at < many.length; at += 1000) {
      await t.database.db
        .insertInto('todos')
        .values(many.slice(at, at + 1000))
        .execute()
    }
    const groups = await get(`/api/v1/todos?select=id,count()&id[lte]=${MAX_AGGREGATED_ROWS}`)
    expect(groups.status).toBe(400)
    expect(groups.body.error.details).toEqual([{ field: 'select', message: expect.stringMatching(/at most 1000 groups/) }])
    const rows = await get('/api/v1/todos?select=count()')
    expect(rows.status).toBe(400)
    expect(rows.body.error.details).toEqual([{ field: 'select', message: expect.stringMatching(/at most 10000 rows/) }])
  })
})

describe('metering', () => {
  it(`takes a point per ${AGGREGATED_ROWS_PER_POINT} rows read past the request's own`, async () => {
    const token = await t.tokenFor((await t.createUser({ name: 'Counter', email: 'counter@example.com' })).id)
    const small = await get('/api/v1/posts?select=count()', token)
    expect(small.headers['x-ratelimit-cost'] ?? '1').toBe('1')
    const large = await get(`/api/v1/todos?select=completed,count()&userId=${t.bob.id}&id[lte]=${MAX_AGGREGATED_ROWS - 1}`, token)
    expect(large.status).toBe(200)
    const rows = large.body.meta.aggregate.rows as number
    expect(rows).toBeGreaterThan(3 * AGGREGATED_ROWS_PER_POINT)
    expect(Number(large.headers['x-ratelimit-cost'])).toBe(1 + Math.floor(rows / AGGREGATED_ROWS_PER_POINT))
    expect(Number(large.headers['x-ratelimit-remaining'])).toBe(ALLOWANCE - 2 - Math.floor(rows / AGGREGATED_ROWS_PER_POINT))
  })
})
