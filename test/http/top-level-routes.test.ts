// The top-level addresses (JSONPlaceholder's: /posts/{id}, /comments?postId=, /todos?userId=,
// /albums/{id}, /photos?albumId=, /posts/{id}/comments, /albums/{id}/photos) serve the same items as the nested ones, under the same rules: what an
// item's nested address answers, its top-level one answers too, to every caller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { commentPath, createFactories, type Factories, postPath, todoPath } from '../helpers/factories.js'

let t: TestApp
let make: Factories
beforeAll(async () => {
  t = await buildTestApp()
  make = createFactories(t)
})
afterAll(() => t.close())

const get = async (url: string, token?: string) => {
  const response = await t.request({ method: 'GET', url, ...(token === undefined ? {} : { token }) })
  return { status: response.statusCode, body: response.json() }
}
const idsAt = async (url: string, token?: string): Promise<number[]> => (await get(url, token)).body.data.map(({ id }: { id: number }) => id)

describe('top-level addresses', () => {
  it('an item answers at its top-level address as at its nested one, to every caller, drafts and their comments included', async () => {
    const post = await make.post(t.alice)
    const draft = await make.draft(t.alice)
    const comment = await make.comment(post, t.bob)
    const onDraft = await make.comment(draft, t.alice)
    const todo = await make.todo(t.bob)
    const pairs: [string, string][] = [
      [postPath(post), `/api/v1/posts/${post.id}`],
      [postPath(draft), `/api/v1/posts/${draft.id}`],
      [commentPath(post, comment), `/api/v1/comments/${comment.id}`],
      [commentPath(draft, onDraft), `/api/v1/comments/${onDraft.id}`],
      [todoPath(todo), `/api/v1/todos/${todo.id}`],
    ]
    for (const token of [undefined, t.tokens.alice, t.tokens.bob, t.tokens.admin]) {
      for (const [nested, topLevel] of pairs) {
        const [a, b] = [await get(nested, token), await get(topLevel, token)]
        expect(b.status, `${topLevel} as ${token ?? 'anonymous'}`).toBe(a.status)
        expect(b.body.data ?? b.body.error.code).toEqual(a.body.data ?? a.body.error.code)
      }
    }
    // The draft and its comment are hidden from whoever may not see the draft: 404, as nested.
    expect((await get(`/api/v1/posts/${draft.id}`)).status).toBe(404)
    expect((await get(`/api/v1/comments/${onDraft.id}`, t.tokens.bob)).status).toBe(404)
    // No such item: 404 in the spec's error body; an id that is not one: 404 too, as nested.
    for (const url of ['/api/v1/posts/999999', '/api/v1/comments/999999', '/api/v1/todos/999999', '/api/v1/posts/abc']) {
      const { status, body } = await get(url)
      expect(status).toBe(404)
      expect(body.error.code).toBe('NOT_FOUND')
    }
  })

  it('a list filtered by its parent is the nested list, page for page; unfiltered, every item the caller may see', async () => {
    const owner = await make.user()
    const posts = [await make.post(owner), await make.post(owner), await make.draft(owner)]
    const first = posts[0]!
    for (let n = 0; n < 3; n++) await make.comment(first, t.alice)
    await make.todo(owner)
    await make.todo(owner)
    const ownerToken = await make.token(owner)
    const same: [string, string][] = [
      [`/api/v1/users/${owner.id}/posts?limit=2`, `/api/v1/posts?userId=${owner.id}&limit=2`],
      [`/api/v1/users/${owner.id}/posts?limit=2&page=2`, `/api/v1/posts?userId=${owner.id}&limit=2&page=2`],
      [`/api/v1/users/${owner.id}/posts/${first.id}/comments`, `/api/v1/comments?postId=${first.id}`],
      [`/api/v1/users/${owner.id}/posts/${first.id}/comments`, `/api/v1/posts/${first.id}/comments`],
      [`/api/v1/users/${owner.id}/todos`, `/api/v1/todos?userId=${owner.id}`],
      [`/api/v2/users/${owner.id}/posts?sort=-createdAt`, `/api/v2/posts?userId=${owner.id}&sort=-createdAt`],
    ]
    for (const token of [undefined, ownerToken]) {
      for (const [nested, topLevel] of same) {
        const [a, b] = [await get(nested, token), await get(topLevel, token)]
        expect(b.status, topLevel).toBe(200)
        expect(b.body.data, topLevel).toEqual(a.body.data)
        expect(b.body.meta.pagination?.totalItems).toEqual(a.body.meta.pagination?.totalItems)
      }
    }
    // The draft is listed for its owner only, wherever it is listed.
    const draft = posts[2]!
    expect(await idsAt(`/api/v1/posts?userId=${owner.id}`)).not.toContain(draft.id)
    expect(await idsAt(`/api/v1/posts?userId=${owner.id}`, ownerToken)).toContain(draft.id)
    expect(await idsAt(`/api/v1/posts?userId=${owner.id}`, t.tokens.admin)).toContain(draft.id)
    // Unfiltered: every user's items.
    const everyone = await get('/api/v1/posts?limit=100')
    expect(new Set(everyone.body.data.map(({ userId }: { userId: number }) => userId)).size).toBeGreaterThan(1)
    // A cursor is good for the list it came from only.
    const v2 = await get(`/api/v2/users/${owner.id}/posts?limit=1`)
    const cursor = encodeURIComponent(v2.body.meta.pagination.nextCursor)
    expect((await get(`/api/v2/posts?userId=${owner.id}&limit=1&cursor=${cursor}`)).status).toBe(400)
  })

  it('a create names its parent in the body, with the rights of the nested create; a parent that is not there is a 422 naming the field', async () => {
    const create = (url: string, json: unknown, token?: string) =>
      t.request({ method: 'POST', url, json, ...(token === undefined ? {} : { token }) }).then((response) => ({
        status: response.statusCode,
        body: response.json(),
        location: response.headers.location,
      }))
    const own = await create('/api/v1/posts', { userId: t.alice.id, title: 'Top', content: 'level' }, t.tokens.alice)
    expect(own.status).toBe(201)
    expect(own.body.data).toMatchObject({ userId: t.alice.id, title: 'Top', content: 'level', status: 'published' })
    expect(own.location).toBe(`/api/v1/posts/${own.body.data.id}`)
    expect((await get(own.location as string)).body.data).toEqual(own.body.data)
    // Left out, the author is the caller.
    expect((await create('/api/v1/posts', { title: 'Mine', content: '.' }, t.tokens.bob)).body.data.userId).toBe(t.bob.id)
    // Someone else's: 403; an admin's: that user's post; anonymous: 401.
    expect((await create('/api/v1/posts', { userId: t.alice.id, title: 'x', content: 'y' }, t.tokens.bob)).status).toBe(403)
    expect((await create('/api/v1/posts', { userId: t.alice.id, title: 'x', content: 'y' }, t.tokens.admin)).body.data.userId).toBe(t.alice.id)
    expect((await create('/api/v1/posts', { userId: t.alice.id, title: 'x', content: 'y' })).status).toBe(401)
    // A user who is not there: 422 on the body's field, not 404 on the address.
    const missing = await create('/api/v1/posts', { userId: 999999, title: 'x', content: 'y' }, t.tokens.admin)
    expect(missing.status).toBe(422)
    expect(missing.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'userId' }] })
    // A field the resource does not have is refused, as nested.
    const unknown = await create('/api/v1/posts', { userId: t.alice.id, title: 'x', content: 'y', views: 3 }, t.tokens.alice)
    expect(unknown.status).toBe(422)
    expect(unknown.body.error.details).toEqual([expect.objectContaining({ field: 'views' })])

    const todo = await create('/api/v1/todos', { userId: t.bob.id, text: 'Top-level todo' }, t.tokens.bob)
    expect(todo.status).toBe(201)
    expect(todo.location).toBe(`/api/v1/todos/${todo.body.data.id}`)
    expect((await create('/api/v1/todos', { userId: t.bob.id, text: 'x' }, t.tokens.alice)).status).toBe(403)

    const post = own.body.data
    const comment = await create('/api/v1/comments', { postId: post.id, content: 'On top' }, t.tokens.bob)
    expect(comment.status).toBe(201)
    expect(comment.body.data).toMatchObject({ postId: post.id, authorId: t.bob.id, content: 'On top' })
    expect(comment.location).toBe(`/api/v1/comments/${comment.body.data.id}`)
    // The post is required, and one the caller may not see is not there.
    const where = await create('/api/v1/comments', { content: 'Where?' }, t.tokens.bob)
    expect(where.status).toBe(422)
    expect(where.body.error.details).toEqual([expect.objectContaining({ field: 'postId' })])
    const draft = await make.draft(t.alice)
    const onDraft = await create('/api/v1/comments', { postId: draft.id, content: 'Peek' }, t.tokens.bob)
    expect(onDraft.status).toBe(422)
    expect(onDraft.body.error.details).toEqual([expect.objectContaining({ field: 'postId' })])
    expect((await create('/api/v1/comments', { postId: draft.id, content: 'Mine' }, t.tokens.alice)).status).toBe(201)
  })

  it('changes and deletes at the top level keep the rules: owner or admin, If-Match, 404 for what the caller may not see', async () => {
    const post = await make.post(t.alice)
    const url = `/api/v1/posts/${post.id}`
    const write = (method: 'PUT' | 'PATCH' | 'DELETE', target: string, token?: string, json?: unknown, headers: Record<string, string> = {}) =>
      t.request({ method, url: target, headers, ...(token === undefined ? {} : { token }), ...(json === undefined ? {} : { json }) })
    expect((await write('PATCH', url, t.tokens.bob, { title: 'Not yours' })).statusCode).toBe(403)
    expect((await write('PATCH', url, undefined, { title: 'Nobody' })).statusCode).toBe(401)
    const { etag } = (await t.request({ method: 'GET', url })).headers
    expect((await write('PATCH', url, t.tokens.alice, { title: 'Stale' }, { 'if-match': 'W/"nope"' })).statusCode).toBe(412)
    const patched = await write('PATCH', url, t.tokens.alice, { title: 'Renamed' }, { 'if-match': String(etag) })
    expect(patched.statusCode).toBe(200)
    expect((await get(postPath(post))).body.data.title).toBe('Renamed')
    expect((await write('PUT', url, t.tokens.admin, { title: 'Replaced', content: 'Anew' })).json().data).toMatchObject({ title: 'Replaced', content: 'Anew' })

    const draft = await make.draft(t.alice)
    expect((await write('PATCH', `/api/v1/posts/${draft.id}`, t.tokens.bob, { title: 'x' })).statusCode).toBe(404)

    const comment = await make.comment(post, t.bob)
    expect((await write('PATCH', `/api/v1/comments/${comment.id}`, t.tokens.alice, { content: 'Not yours' })).statusCode).toBe(403)
    expect((await write('PATCH', `/api/v1/comments/${comment.id}`, t.tokens.bob, { content: 'Edited' })).json().data.content).toBe('Edited')
    // The post's owner may delete a comment on it, as nested.
    expect((await write('DELETE', `/api/v1/comments/${comment.id}`, t.tokens.alice)).statusCode).toBe(204)
    expect((await get(commentPath(post, comment))).status).toBe(404)

    const todo = await make.todo(t.bob)
    expect((await write('PATCH', `/api/v1/todos/${todo.id}`, t.tokens.bob, { completed: true })).json().data.completed).toBe(true)
    expect((await write('DELETE', `/api/v1/todos/${todo.id}`, t.tokens.alice)).statusCode).toBe(403)
    expect((await write('DELETE', `/api/v1/todos/${todo.id}`, t.tokens.bob)).statusCode).toBe(204)
    expect((await write('DELETE', url, t.tokens.alice)).statusCode).toBe(204)
    expect((await get(postPath(post))).status).toBe(404)
  })

  it('albums and photos: the same items at both addresses, the parent in the body on a create, the album owner’s rights on its photos', async () => {
    const album = await make.album(t.alice)
    const photo = await make.photo(album)
    for (const [nested, topLevel] of [
      [`/api/v1/users/${t.alice.id}/albums/${album.id}`, `/api/v1/albums/${album.id}`],
      [`/api/v1/users/${t.alice.id}/albums/${album.id}/photos/${photo.id}`, `/api/v1/photos/${photo.id}`],
      [`/api/v1/users/${t.alice.id}/albums`, `/api/v1/albums?userId=${t.alice.id}`],
      [`/api/v1/users/${t.alice.id}/albums/${album.id}/photos`, `/api/v1/photos?albumId=${album.id}`],
      [`/api/v1/users/${t.alice.id}/albums/${album.id}/photos`, `/api/v1/albums/${album.id}/photos`],
    ] as const) {
      const [a, b] = [await get(nested), await get(topLevel)]
      expect(b.status, topLevel).toBe(200)
      expect(b.body.data, topLevel).toEqual(a.body.data)
    }
    const PICTURE = { url: 'https://picsum.photos/seed/7/600/600', thumbnailUrl: 'https://picsum.photos/seed/7/150/150' }
    const add = (json: unknown, token: string) => t.request({ method: 'POST', url: '/api/v1/photos', json, token })
    expect((await add({ albumId: album.id, title: 'Not yours', ...PICTURE }, t.tokens.bob)).statusCode).toBe(403)
    const added = await add({ albumId: album.id, title: 'Mine', ...PICTURE }, t.tokens.alice)
    expect(added.statusCode).toBe(201)
    expect(added.headers.location).toBe(`/api/v1/photos/${added.json().data.id}`)
    const nowhere = await add({ albumId: 999999, title: 'Lost', ...PICTURE }, t.tokens.admin)
    expect(nowhere.statusCode).toBe(422)
    expect(nowhere.json().error.details).toEqual([expect.objectContaining({ field: 'albumId' })])
    const created = await t.request({ method: 'POST', url: '/api/v1/albums', json: { title: 'Holidays' }, token: t.tokens.bob })
    expect(created.json().data).toMatchObject({ userId: t.bob.id, title: 'Holidays' })
    expect((await t.request({ method: 'PATCH', url: `/api/v1/photos/${photo.id}`, json: { title: 'x' }, token: t.tokens.bob })).statusCode).toBe(403)
    expect((await t.request({ method: 'DELETE', url: `/api/v1/albums/${album.id}`, token: t.tokens.alice })).statusCode).toBe(204)
    expect((await get(`/api/v1/photos/${photo.id}`)).status).toBe(404)
  })

  it('the unversioned paths are JSONPlaceholder’s own: only the base URL differs', async () => {
    const post = await make.post(t.alice)
    expect((await get(`/posts/${post.id}`)).body.data).toEqual((await get(`/api/v1/posts/${post.id}`)).body.data)
    expect((await get(`/posts/${post.id}/comments`)).status).toBe(200)
    expect((await get(`/comments?postId=${post.id}`)).status).toBe(200)
    expect((await get(`/todos?userId=${t.alice.id}`)).status).toBe(200)
  })
})
