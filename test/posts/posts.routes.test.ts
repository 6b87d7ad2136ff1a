import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, type Factories } from '../helpers/factories.js'

let t: TestApp
let make: Factories
beforeAll(async () => {
  t = await buildTestApp()
  make = createFactories(t)
})
afterAll(() => t.close())

describe('posts', () => {
  it('the owner creates a post: 201, Location, published by default with publishedAt set', async () => {
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.alice.id}/posts`,
      token: t.tokens.alice,
      json: { title: 'Hello', content: 'First post.\nWith two lines.' },
    })
    expect(res.statusCode).toBe(201)
    const { data } = res.json()
    expect(res.headers.location).toBe(`/api/v1/users/${t.alice.id}/posts/${data.id}`)
    expect(data).toMatchObject({ userId: t.alice.id, title: 'Hello', content: 'First post.\nWith two lines.', status: 'published' })
    expect(data.publishedAt).toBe(data.createdAt)
    expect((await t.request({ method: 'GET', url: res.headers.location })).json().data).toEqual(data)
  })

  it('a draft has no publishedAt until it is published, and loses it when unpublished', async () => {
    const draft = await make.draft(t.alice, { title: 'Draft', content: '' })
    expect(draft.publishedAt).toBeNull()
    const url = `/users/${t.alice.id}/posts/${draft.id}`
    const published = (await t.request({ method: 'PATCH', url, token: t.tokens.alice, json: { status: 'published' } })).json().data
    expect(published.publishedAt).toEqual(expect.any(String))
    const again = (await t.request({ method: 'PATCH', url, token: t.tokens.alice, json: { title: 'Renamed' } })).json().data
    expect(again.publishedAt).toBe(published.publishedAt)
    const unpublished = (await t.request({ method: 'PATCH', url, token: t.tokens.alice, json: { status: 'draft' } })).json().data
    expect(unpublished.publishedAt).toBeNull()
  })

  it('drafts are seen only by their owner and admins; to others they do not exist', async () => {
    const draft = await make.draft(t.alice)
    const url = `/users/${t.alice.id}/posts/${draft.id}`
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(404)
    expect((await t.request({ method: 'GET', url, token: t.tokens.bob })).statusCode).toBe(404)
    expect((await t.request({ method: 'GET', url, token: t.tokens.alice })).statusCode).toBe(200)
    expect((await t.request({ method: 'GET', url, token: t.tokens.admin })).statusCode).toBe(200)

    const listIds = async (token?: string) =>
      (await t.request({ method: 'GET', url: `/users/${t.alice.id}/posts?limit=100`, ...(token ? { token } : {}) }))
        .json()
        .data.map((p: { id: number }) => p.id)
    expect(await listIds()).not.toContain(draft.id)
    expect(await listIds(t.tokens.bob)).not.toContain(draft.id)
    expect(await listIds(t.tokens.alice)).toContain(draft.id)
    expect(await listIds(t.tokens.admin)).toContain(draft.id)
    // Filtering for drafts does not reveal them either.
    expect((await t.request({ method: 'GET', url: `/users/${t.alice.id}/posts?status=draft` })).json().data).toEqual([])
    // Nor can anyone else change or comment on them.
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.bob, json: { title: 'x' } })).statusCode).toBe(404)
    expect((await t.request({ method: 'POST', url: `${url}/comments`, token: t.tokens.bob, json: { content: 'hi' } })).statusCode).toBe(404)
  })

  it('only the owner or an admin writes: others get 403, anonymous callers 401', async () => {
    const post = await make.post(t.alice)
    const url = `/users/${t.alice.id}/posts/${post.id}`
    expect((await t.request({ method: 'POST', url: `/users/${t.alice.id}/posts`, token: t.tokens.bob, json: { title: 'x', content: 'y' } })).statusCode).toBe(
      403,
    )
    expect((await t.request({ method: 'POST', url: `/users/${t.alice.id}/posts`, json: { title: 'x', content: 'y' } })).statusCode).toBe(401)
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.bob, json: { title: 'x' } })).statusCode).toBe(403)
    expect((await t.request({ method: 'PUT', url, token: t.tokens.bob, json: { title: 'x', content: 'y' } })).statusCode).toBe(403)
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.bob })).statusCode).toBe(403)
    expect((await t.request({ method: 'DELETE', url })).statusCode).toBe(401)
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.admin, json: { title: 'Moderated' } })).json().data.title).toBe('Moderated')
    // An admin writing under a user's path writes that user's post.
    const byAdmin = await make.post(t.alice, { token: t.tokens.admin })
    expect((await t.request({ method: 'GET', url: `/users/${t.alice.id}/posts/${byAdmin.id}` })).json().data.userId).toBe(t.alice.id)
  })

  it('PUT replaces the post: status left out becomes published', async () => {
    const draft = await make.draft(t.alice)
    const res = await t.request({
      method: 'PUT',
      url: `/users/${t.alice.id}/posts/${draft.id}`,
      token: t.tokens.alice,
      json: { title: 'Whole', content: 'new' },
    })
    expect(res.json().data).toMatchObject({ title: 'Whole', content: 'new', status: 'published' })
    const missing = await t.request({ method: 'PUT', url: `/users/${t.alice.id}/posts/${draft.id}`, token: t.tokens.alice, json: { title: 'Only' } })
    expect(missing.statusCode).toBe(422)
    expect(missing.json().error.details).toEqual([{ field: 'content', message: 'is required' }])
  })

  it('validates title, content, status and unknown fields (422)', async () => {
    const res = await t.request({
      method: 'POST',
      url: `/users/${t.alice.id}/posts`,
      token: t.tokens.alice,
      json: { title: 'x'.repeat(201), content: 'a'.repeat(100_001), status: 'archived', userId: t.bob.id, publishedAt: '2020-01-01T00:00:00Z' },
    })
    expect(res.statusCode).toBe(422)
    expect(
      res
        .json()
        .error.details.map((d: { field: string }) => d.field)
        .sort(),
    ).toEqual(['content', 'publishedAt', 'status', 'title', 'userId'])
    const ok = await make.post(t.alice, { content: 'a'.repeat(100_000) })
    expect(ok.id).toBeGreaterThan(0)
  })

  it('answers 404 for a post under the wrong user, a missing user or a missing post', async () => {
    const post = await make.post(t.alice)
    for (const url of [
      `/users/${t.bob.id}/posts/${post.id}`,
      `/users/999999/posts/${post.id}`,
      `/users/${t.alice.id}/posts/999999`,
      `/users/${t.alice.id}/posts/abc`,
    ]) {
      const res = await t.request({ method: 'GET', url })
      expect(res.statusCode, url).toBe(404)
      expect(res.json().error.code).toBe('NOT_FOUND')
    }
    expect((await t.request({ method: 'GET', url: '/users/999999/posts' })).statusCode).toBe(404)
    expect((await t.request({ method: 'PATCH', url: `/users/${t.bob.id}/posts/${post.id}`, token: t.tokens.admin, json: { title: 'x' } })).statusCode).toBe(404)
  })

  it('a PATCH that changes nothing keeps updatedAt', async () => {
    const post = await make.post(t.alice, { title: 'Same', content: 'same' })
    const res = await t.request({ method: 'PATCH', url: `/users/${t.alice.id}/posts/${post.id}`, token: t.tokens.alice, json: { title: 'Same' } })
    expect(res.json().data.updatedAt).toBe(post.updatedAt)
  })

  it('deleting a post deletes its comments', async () => {
    const post = await make.post(t.alice)
    const url = `/users/${t.alice.id}/posts/${post.id}`
    await make.comment(post, t.bob)
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.alice })).statusCode).toBe(204)
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(404)
    const left = await t.database.db.selectFrom('comments').select('id').where('post_id', '=', post.id).execute()
    expect(left).toEqual([])
  })

  it("lists a user's posts with filters, sort and search", async () => {
    const { user: owner, token } = await make.signedIn()
    for (const [title, status] of [
      ['alpha', 'published'],
      ['beta 50%', 'draft'],
      ['gamma', 'published'],
    ] as const) {
      await make.post(owner, { title, content: `about ${title}`, status })
    }
    const list = async (query: string, tk?: string) =>
      (await t.request({ method: 'GET', url: `/users/${owner.id}/posts?${query}`, ...(tk ? { token: tk } : {}) }))
        .json()
        .data.map((p: { title: string }) => p.title)
    expect(await list('sort=-title', token)).toEqual(['gamma', 'beta 50%', 'alpha'])
    expect(await list('status=published&sort=-publishedAt', token)).toEqual(['gamma', 'alpha'])
    expect(await list('q=50%25', token)).toEqual(['beta 50%'])
    expect(await list('q=ABOUT&fields=content')).toEqual(['alpha', 'gamma'])
    expect(await list('sort=publishedAt', token)).toEqual(['beta 50%', 'alpha', 'gamma'])
  })
})
