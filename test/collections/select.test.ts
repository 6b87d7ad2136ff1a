// Sparse fieldsets: `select` keeps only the named top-level fields of each item (and `id`), on list
// and single GET routes; unknown fields are refused; the ETag follows the selection; a whole item is
// written as before (the ETag a write's If-Match is checked against does not move). Users and posts
// read only the selected fields' columns (and a list's sort keys, for its cursors).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, postPath, todoPath } from '../helpers/factories.js'
import type { Post } from '../../src/posts/posts.schemas.js'

describe('select', () => {
  let t: TestApp
  let post: Post
  const statements: string[] = []

  beforeAll(async () => {
    t = await buildTestApp({}, { onQuery: (sql) => statements.push(sql) })
    const make = createFactories(t)
    post = await make.post(t.alice, { title: 'Hello' })
    await make.post(t.alice, { title: 'Again' })
    await make.draft(t.alice)
    await make.comment(post, t.bob)
    await make.todo(t.alice)
  })
  afterAll(() => t.close())

  it('keeps only the selected fields, and id, in every item of a list', async () => {
    const res = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/posts?select=title,publishedAt` })
    expect(res.statusCode, res.body).toBe(200)
    const { data } = res.json()
    expect(data).toHaveLength(2)
    for (const item of data) expect(Object.keys(item)).toEqual(['id', 'title', 'publishedAt'])
    expect(data.map((item: Post) => item.title).sort()).toEqual(['Again', 'Hello'])
  })

  it('keeps only the selected fields of one resource, given repeated or comma-separated, deduplicated', async () => {
    for (const query of ['select=name&select=email', 'select=email,name', 'select=name,email,name,id']) {
      const res = await t.request({ method: 'GET', url: `/api/v1/users/${t.bob.id}?${query}` })
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().data).toEqual({ id: t.bob.id, name: 'Bob', email: 'bob@example.com' })
    }
  })

  it('applies to every resource: users, posts, comments and todos, list and single', async () => {
    const urls = [
      `/api/v1/users?select=name`,
      `/api/v2/users?select=name`,
      `/api/v1/users/${t.alice.id}?select=name`,
      `${postPath(post)}?select=title`,
      `${postPath(post)}/comments?select=content`,
      `/api/v1/users/${t.alice.id}/todos?select=text`,
    ]
    for (const url of urls) {
      const res = await t.request({ method: 'GET', url })
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200)
      const { data } = res.json()
      for (const item of Array.isArray(data) ? data : [data]) expect(Object.keys(item)).toHaveLength(2)
    }
    const todos = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/todos` })
    const todo = todos.json().data[0]
    const one = await t.request({ method: 'GET', url: `${todoPath(todo)}?select=completed` })
    expect(one.json().data).toEqual({ id: todo.id, completed: false })
  })

  it('sends the whole item without select, with the ETag a write checks If-Match against', async () => {
    const res = await t.request({ method: 'GET', url: postPath(post) })
    expect(Object.keys(res.json().data)).toEqual(['id', 'userId', 'title', 'content', 'status', 'publishedAt', 'createdAt', 'updatedAt'])
    const patched = await t.request({
      method: 'PATCH',
      url: postPath(post),
      token: t.tokens.alice,
      json: { content: 'changed' },
      headers: { 'if-match': String(res.headers.etag) },
    })
    expect(patched.statusCode, patched.body).toBe(200)
    const comment = (await t.request({ method: 'GET', url: `${postPath(post)}/comments` })).json().data[0]
    const todo = (await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/todos` })).json().data[0]
    const writes = [
      { url: `/api/v1/users/${t.bob.id}`, token: t.tokens.bob, json: { age: 42 } },
      { url: `${postPath(post)}/comments/${comment.id}`, token: t.tokens.bob, json: { content: 'changed' } },
      { url: todoPath(todo), token: t.tokens.alice, json: { completed: true } },
    ]
    for (const { url, token, json } of writes) {
      const read = await t.request({ method: 'GET', url })
      const write = await t.request({ method: 'PATCH', url, token, json, headers: { 'if-match': String(read.headers.etag) } })
      expect(write.statusCode, `${url}: ${write.body}`).toBe(200)
    }
  })

  it('reads only the selected columns of users and posts, and pages a list by a sort key it did not select', async () => {
    statements.length = 0
    const one = await t.request({ method: 'GET', url: `/api/v1/users/${t.bob.id}?select=name` })
    expect(one.json().data).toEqual({ id: t.bob.id, name: 'Bob' })
    const titles: string[] = []
    let url: string | undefined = `/api/v2/users/${t.alice.id}/posts?select=title&sort=-createdAt,id&limit=1`
    while (url !== undefined) {
      const page = await t.request({ method: 'GET', url })
      expect(page.statusCode, page.body).toBe(200)
      const body = page.json<{ data: { id: number; title: string }[]; meta: { pagination: { nextCursor: string | null } } }>()
      for (const item of body.data) expect(Object.keys(item)).toEqual(['id', 'title'])
      titles.push(...body.data.map((item) => item.title))
      const next = body.meta.pagination.nextCursor
      url = next === null ? undefined : `/api/v2/users/${t.alice.id}/posts?select=title&sort=-createdAt,id&limit=1&cursor=${encodeURIComponent(next)}`
    }
    expect(titles).toEqual(['Again', 'Hello'])
    const reads = statements.filter((sql) => /^select .* from "(users|posts)"/.test(sql))
    expect(reads.length).toBeGreaterThan(0)
    const [userRead] = reads.filter((sql) => /from "users" where "id" = (\?|\$1)/.test(sql) && !/\*/.test(sql))
    expect(userRead).toMatch(/^select "id", "name" from "users"/)
    for (const sql of reads.filter((sql) => /from "posts"/.test(sql) && !/count/.test(sql))) expect(sql).not.toMatch(/"content"|\*/)
  })

  it('refuses an unknown field, naming the fields', async () => {
    const res = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/posts?select=title,password` })
    expect(res.statusCode).toBe(400)
    const { error } = res.json()
    expect(error.code).toBe('BAD_REQUEST')
    expect(error.details).toEqual([{ field: 'select', message: expect.stringContaining('`password` is unknown') }])
    expect(error.details[0].message).toContain('publishedAt')
    const one = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}?select=password` })
    expect(one.statusCode).toBe(400)
    expect(one.json().error.details[0].field).toBe('select')
  })

  it('refuses an empty select and too many names', async () => {
    for (const query of ['select=', 'select=title,', `select=${Array.from({ length: 21 }, () => 'title').join(',')}`]) {
      const res = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/posts?${query}` })
      expect(res.statusCode, query).toBe(400)
      expect(res.json().error.details[0].field).toBe('select')
    }
  })

  it('gives each selection its own ETag, and 304 only for the ETag of the same selection', async () => {
    const url = `/api/v1/users/${t.alice.id}/posts`
    const title = await t.request({ method: 'GET', url: `${url}?select=title` })
    const content = await t.request({ method: 'GET', url: `${url}?select=content` })
    const whole = await t.request({ method: 'GET', url })
    const tags = [title, content, whole].map((res) => res.headers.etag)
    expect(new Set(tags).size).toBe(3)
    const again = await t.request({ method: 'GET', url: `${url}?select=title`, headers: { 'if-none-match': String(title.headers.etag) } })
    expect(again.statusCode).toBe(304)
    const other = await t.request({ method: 'GET', url: `${url}?select=title`, headers: { 'if-none-match': String(content.headers.etag) } })
    expect(other.statusCode).toBe(200)
  })
})
