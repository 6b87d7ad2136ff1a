// Reads that cost what their page holds, not what the table holds: limits above the
// maximum are capped whatever the integer, offset pages stop at MAX_OFFSET_ITEMS (cursor pages go
// on), a search reads its full-text index, which writes keep in sync, and a term too short for a
// trigram index reads only the newest MAX_SEARCHED_ROWS rows. On both stores, REST and GraphQL.
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_COUNTED_TOTAL, MAX_SEARCHED_ROWS } from '../../src/db/list-page.js'
import { MAX_OFFSET_ITEMS } from '../../src/collections/pagination.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { TEST_STORE } from '../helpers/test-store.js'

let t: TestApp
/** A user with more todos than the offset window and the short-search bound hold. */
let hoarder: { id: number }
const TODOS = Math.max(MAX_OFFSET_ITEMS, MAX_SEARCHED_ROWS) + 50
/** The oldest todos hold this text; the newest MAX_SEARCHED_ROWS do not. */
const OLD_TEXT = 'qx-old'
const OLD_TODOS = 20

beforeAll(async () => {
  t = await buildTestApp()
  hoarder = await t.createUser({ name: 'Hoarder', email: 'hoarder@example.com' })
  const now = new Date().toISOString()
  const rows = Array.from({ length: TODOS }, (_, i) => ({
    user_id: hoarder.id,
    text: i < OLD_TODOS ? `${OLD_TEXT} ${i}` : `todo ${i}`,
    completed: 0,
    created_at: now,
    updated_at: now,
  }))
  // In slices: SQLite binds at most 32,766 parameters per statement.
  for (let i = 0; i < rows.length; i += 2000) {
    await t.database.db
      .insertInto('todos')
      .values(rows.slice(i, i + 2000))
      .execute()
  }
}, 120_000)
afterAll(() => t.close())

const get = async (url: string) => {
  const res = await t.request({ method: 'GET', url })
  return { status: res.statusCode, body: res.json() }
}

describe('limit', () => {
  it.each(['9999999999999999', '99999999999999999999999999', '101', '2147483648'])('caps limit=%s at 100', async (limit) => {
    const { status, body } = await get(`/api/v1/users?limit=${limit}`)
    expect(status).toBe(200)
    expect(body.meta.pagination.limit).toBe(100)
  })

  it.each(['0', '000', '-1', '1.5', '1e3', ''])('still answers 400 to limit=%s', async (limit) => {
    const { status, body } = await get(`/api/v1/users?limit=${limit}`)
    expect(status).toBe(400)
    expect(body.error.details).toEqual([{ field: 'limit', message: 'must be an integer of at least 1' }])
  })

  it('caps the largest GraphQL Int too, at the top level and in a nested list', async () => {
    const answer = await graphql(t, `{ usersPage(limit: 2147483647) { pageInfo { limit } } user(id: ${hoarder.id}) { todos(limit: 2147483647) { id } } }`)
    expect(answer.body.errors).toBeUndefined()
    expect(answer.body.data).toMatchObject({ usersPage: { pageInfo: { limit: 100 } } })
    expect((answer.body.data?.user as { todos: unknown[] }).todos).toHaveLength(100)
  })
})

describe('the offset window', () => {
  const todos = (query: string) => `/api/v1/users/${hoarder.id}/todos?${query}`

  it(`serves the last page inside page × limit = ${MAX_OFFSET_ITEMS}`, async () => {
    const { status, body } = await get(todos(`limit=100&page=${MAX_OFFSET_ITEMS / 100}`))
    expect(status).toBe(200)
    expect(body.data).toHaveLength(100)
    // More match than the count's cap: it says the cap, and that it stopped there; pages is the last page reachable.
    expect(body.meta.pagination).toEqual({
      page: MAX_OFFSET_ITEMS / 100,
      limit: 100,
      total: MAX_COUNTED_TOTAL,
      totalCapped: true,
      pages: MAX_OFFSET_ITEMS / 100,
      nextCursor: expect.any(String),
    })
  })

  it('counts exactly below the cap, and says so on GraphQL too', async () => {
    const exact = await get(`/api/v1/users/${hoarder.id}/todos?q=${OLD_TEXT}&limit=1`)
    expect(exact.body.meta.pagination).toEqual({ page: 1, limit: 1, total: OLD_TODOS, pages: OLD_TODOS, nextCursor: expect.any(String) })
    const answer = await graphql(
      t,
      `
        {
          usersPage(limit: 1) {
            pageInfo {
              total
              totalCapped
            }
          }
        }
      `,
    )
    expect(answer.body.data).toEqual({ usersPage: { pageInfo: { total: 4, totalCapped: false } } })
  })

  it.each([
    [`limit=100&page=${MAX_OFFSET_ITEMS / 100 + 1}`, 100],
    [`page=${MAX_OFFSET_ITEMS / 20 + 1}`, 20],
    ['limit=1&page=10000000', 1],
    ['limit=5000&page=101', 100],
  ])('answers 400 past it (%s), naming page and pointing to cursor', async (query, limit) => {
    const { status, body } = await get(todos(query))
    expect(status).toBe(400)
    expect(body.error.code).toBe('BAD_REQUEST')
    expect(body.error.details).toEqual([
      {
        field: 'page',
        message: `must keep page × limit at most ${MAX_OFFSET_ITEMS} (page ${MAX_OFFSET_ITEMS / limit} at limit ${limit}); page further with cursor (the nextCursor of a page), which has no such bound`,
      },
    ])
  })

  it('pages by cursor past it, every row once', async () => {
    const seen: number[] = []
    let url: string | null = `/api/v2/users/${hoarder.id}/todos?limit=100`
    while (url !== null) {
      const { status, body } = await get(url)
      expect(status).toBe(200)
      seen.push(...body.data.map((todo: { id: number }) => todo.id))
      const cursor: string | null = body.meta.pagination.nextCursor
      url = cursor === null ? null : `/api/v2/users/${hoarder.id}/todos?limit=100&cursor=${cursor}`
    }
    expect(seen).toHaveLength(TODOS)
    expect(new Set(seen).size).toBe(TODOS)
  }, 120_000)

  it('refuses the same page on GraphQL, at the top level and in a nested list', async () => {
    const top = await graphql(t, `{ usersPage(limit: 100, page: ${MAX_OFFSET_ITEMS / 100 + 1}) { items { id } } }`)
    expect(codesOf(top)).toEqual(['BAD_REQUEST'])
    expect(top.body.errors?.[0]?.extensions?.details).toEqual([expect.objectContaining({ field: 'page', message: expect.stringContaining('cursor') })])
    const nested = await graphql(t, `{ user(id: ${hoarder.id}) { todos(limit: 100, page: ${MAX_OFFSET_ITEMS / 100 + 1}) { id } } }`)
    expect(codesOf(nested)).toEqual(['BAD_REQUEST'])
    const inside = await graphql(t, `{ user(id: ${hoarder.id}) { todos(limit: 100, page: ${MAX_OFFSET_ITEMS / 100}) { id } } }`)
    expect(inside.body.errors).toBeUndefined()
    expect((inside.body.data?.user as { todos: unknown[] }).todos).toHaveLength(100)
  })
})

describe('search', () => {
  const search = async (url: string) => (await get(url)).body.data.map((item: { id: number }) => item.id) as number[]

  it(`reads only the newest ${MAX_SEARCHED_ROWS} rows for a term shorter than 3 characters, every row for a longer one`, async () => {
    expect(await search(`/api/v1/users/${hoarder.id}/todos?q=qx&limit=100`)).toEqual([])
    expect(await search(`/api/v1/users/${hoarder.id}/todos?q=${OLD_TEXT}&limit=100`)).toHaveLength(OLD_TODOS)
    // Inside the bound, a short term finds what it finds today: every one of the newest rows says "todo".
    const short = await get(`/api/v1/users/${hoarder.id}/todos?q=do&limit=1`)
    expect(short.body.meta.pagination.total).toBe(MAX_SEARCHED_ROWS)
    expect(short.body.data.map((todo: { text: string }) => todo.text)).toEqual([`todo ${TODOS - MAX_SEARCHED_ROWS}`])
  })

  it.each([
    ['quotes', 'say "hi" now', '"hi"'],
    ['FTS syntax', 'NEAR(a b) OR x*', 'NEAR(a b) OR x*'],
    ['spaces', 'wide   gap', '   '],
    ['emoji', 'party 🎉🎉🎉 time', '🎉🎉🎉'],
    ['accents, ASCII case folded only', 'Ångström Über', 'ngstr'],
  ])('finds text with %s by a term of 3 or more characters as a substring', async (_, name, term) => {
    const user = await t.createUser({ name, email: `${name.length}-${Date.now()}@example.net` })
    const res = await get(`/api/v1/users?q=${encodeURIComponent(term)}&fields=name`)
    expect(res.status).toBe(200)
    expect(res.body.data.map((u: { id: number }) => u.id)).toEqual([user.id])
    await t.request({ method: 'DELETE', url: `/users/${user.id}`, token: t.tokens.admin })
  })

  it('keeps ASCII-only case folding: the SQLite index proposes Ü for ü, LIKE refuses it as before', async () => {
    const user = await t.createUser({ name: 'Ümit Özdemir', email: 'umit@example.net' })
    expect(await search(`/api/v1/users?q=${encodeURIComponent('Ümit')}`)).toEqual([user.id])
    // As on PostgreSQL, whose ILIKE under collate "C" folds ASCII letters only.
    expect(await search(`/api/v1/users?q=${encodeURIComponent('ümit')}`)).toEqual([])
    await t.request({ method: 'DELETE', url: `/users/${user.id}`, token: t.tokens.admin })
  })

  it('finds what REST writes and stops finding what they change or delete, on every searched table', async () => {
    const { admin } = t.tokens
    const write = async (method: 'POST' | 'PATCH' | 'DELETE', url: string, json?: unknown) => {
      const res = await t.request({ method, url, token: admin, ...(json === undefined ? {} : { json }) })
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300)
      return res.statusCode === 204 ? undefined : res.json().data
    }
    const found = async (url: string, term: string) => search(`${url}${url.includes('?') ? '&' : '?'}q=${encodeURIComponent(term)}`)

    const user = await write('POST', '/api/v1/users', { name: 'Quintessa Xylo', email: 'quintessa@example.net' })
    expect(await found('/api/v1/users', 'quintessa')).toEqual([user.id])
    expect(await found('/api/v1/users', 'XYLO')).toEqual([user.id])
    await write('PATCH', `/api/v1/users/${user.id}`, { name: 'Renamed Zyzzyva' })
    expect(await found('/api/v1/users', 'Xylo')).toEqual([])
    expect(await found('/api/v1/users', 'zyzzyva')).toEqual([user.id])
    expect(await found('/api/v1/users?fields=email', 'quintessa@')).toEqual([user.id])

    const posts = `/api/v1/users/${user.id}/posts`
    const post = await write('POST', posts, { title: 'Ptarmigan notes', content: 'About the wryneck.' })
    expect(await found(posts, 'ptarmigan')).toEqual([post.id])
    expect(await found(posts, 'WRYNECK')).toEqual([post.id])
    await write('PATCH', `${posts}/${post.id}`, { content: 'About the hoopoe.' })
    expect(await found(posts, 'wryneck')).toEqual([])
    expect(await found(posts, 'hoopoe')).toEqual([post.id])

    const comments = `${posts}/${post.id}/comments`
    const comment = await write('POST', comments, { content: 'Quokka sighted' })
    expect(await found(comments, 'quokka')).toEqual([comment.id])
    await write('PATCH', `${comments}/${comment.id}`, { content: 'Numbat sighted' })
    expect(await found(comments, 'quokka')).toEqual([])
    expect(await found(comments, 'numbat')).toEqual([comment.id])
    await write('DELETE', `${comments}/${comment.id}`)
    expect(await found(comments, 'numbat')).toEqual([])

    const todos = `/api/v1/users/${user.id}/todos`
    const todo = await write('POST', todos, { text: 'Feed the axolotl' })
    expect(await found(todos, 'axolotl')).toEqual([todo.id])
    await write('PATCH', `${todos}/${todo.id}`, { text: 'Feed the capybara' })
    expect(await found(todos, 'axolotl')).toEqual([])
    expect(await found(todos, 'capybara')).toEqual([todo.id])
    await write('DELETE', `${todos}/${todo.id}`)
    expect(await found(todos, 'capybara')).toEqual([])

    await write('POST', comments, { content: 'Left behind when the user goes' })
    await write('POST', todos, { text: 'Left behind too' })
    await write('DELETE', `${posts}/${post.id}`)
    await write('DELETE', `/api/v1/users/${user.id}`)
    expect(await found('/api/v1/users', 'zyzzyva')).toEqual([])
    await expectIndexInSync()
  })
})

/** SQLite's FTS5 compares its index with the table it indexes (cascaded deletes included). */
async function expectIndexInSync(): Promise<void> {
  if (TEST_STORE !== 'sqlite') return
  for (const table of ['users', 'posts', 'comments', 'todos']) {
    const index = sql.table(`${table}_search`)
    await sql`insert into ${index} (${index}, rank) values ('integrity-check', 1)`.execute(t.database.db)
  }
}
