// What embedding costs the caller: the rows an `include` may read, one rate-limit point per 1,000
// past the request's own, taken before the relations run (GraphQL charges a nested list the same
// way). A request the allowance cannot pay for is 429 and reads nothing it would have embedded. An
// answer served again from the representation cache reads nothing and takes only its 1 point.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EMBEDDED_ROWS_PER_POINT } from '../../src/collections/embedding.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'

const ALLOWANCE = 30
let t: TestApp
let author: { id: number }
const statements: string[] = []

beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_AUTHENTICATED_MAX: String(ALLOWANCE) }, { onQuery: (sql) => statements.push(sql) })
  const make = createFactories(t)
  author = await make.user()
  const now = new Date().toISOString()
  const post = { user_id: author.id, content: '.', status: 'published' as const, published_at: now, created_at: now, updated_at: now }
  await t.database.db
    .insertInto('posts')
    .values(Array.from({ length: 20 }, (_, n) => ({ ...post, title: `p${n}` })))
    .execute()
  for (let n = 0; n < 100; n++) await t.createUser({ name: `Reader ${n}`, email: `reader${n}@example.com` })
}, 60_000)
afterAll(() => t.close())

/** GET url with a fresh caller's token (a full allowance), answering the status, the cost header and the statements run. */
async function measured(url: string) {
  const token = await t.tokenFor((await t.createUser({ name: 'Caller', email: `caller-${statements.length}-${Math.random()}@example.com` })).id)
  statements.length = 0
  const res = await t.request({ method: 'GET', url, token })
  return { status: res.statusCode, cost: Number(res.headers['x-ratelimit-cost'] ?? 1), statements: [...statements], body: res.json() }
}

describe('embedding and the rate limit', () => {
  const posts = () => `/api/v1/users/${author.id}/posts?limit=20`

  it('takes nothing more for the usual page (20 items, lists of 20)', async () => {
    expect((await measured(`${posts()}&include=author,comments`)).cost).toBe(1)
  })

  it(`takes a point per ${EMBEDDED_ROWS_PER_POINT} rows the relations may read`, async () => {
    // 20 posts × 100 comments = 2,000 rows: 2 points more; the author adds 20 rows.
    expect((await measured(`${posts()}&include=comments&comments.limit=100`)).cost).toBe(3)
    expect((await measured(`${posts()}&include=author,comments&comments.limit=100`)).cost).toBe(3)
  })

  it('refuses what the allowance cannot pay for with 429, before any relation is read', async () => {
    // 100 users × (100 posts + 100 todos) = 20,000 rows: 20 points more, 21 in all; asked twice.
    const url = '/api/v1/users?limit=100&include=posts,todos&posts.limit=100&todos.limit=100'
    const first = await measured(url)
    expect(first.status).toBe(200)
    expect(first.cost).toBe(21)
    expect(first.body.data).toHaveLength(100)

    const token = await t.tokenFor((await t.createUser({ name: 'Greedy', email: 'greedy@example.com' })).id)
    expect((await t.request({ method: 'GET', url, token })).statusCode).toBe(200)
    // Another URL: the same one again is answered from the representation cache (on SQLite), reading nothing.
    statements.length = 0
    const refused = await t.request({ method: 'GET', url: url.replace('posts.limit=100', 'posts.limit=99'), token })
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.code).toBe('RATE_LIMITED')
    expect(statements.some((sql) => /from "todos"/i.test(sql))).toBe(false)
  })
})
