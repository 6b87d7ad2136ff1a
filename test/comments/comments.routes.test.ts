import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
let postUrl: string
beforeAll(async () => {
  t = await buildTestApp()
  const post = await t.request({ method: 'POST', url: `/users/${t.alice.id}/posts`, token: t.tokens.alice, json: { title: 'Discuss', content: 'x' } })
  postUrl = `/users/${t.alice.id}/posts/${post.json().data.id as number}`
})
afterAll(() => t.close())

const comment = async (token: string, content: string) => {
  const res = await t.request({ method: 'POST', url: `${postUrl}/comments`, token, json: { content } })
  expect(res.statusCode, res.body).toBe(201)
  return { url: res.headers.location as string, data: res.json().data }
}

describe('comments', () => {
  it('any signed-in user comments, as themself: the author is never taken from the body', async () => {
    const res = await t.request({ method: 'POST', url: `/api/v1${postUrl}/comments`, token: t.tokens.bob, json: { content: 'Great post' } })
    expect(res.statusCode).toBe(201)
    const { data } = res.json()
    expect(data).toMatchObject({ postId: Number(postUrl.split('/').at(-1)), authorId: t.bob.id, author: { id: t.bob.id, name: 'Bob' }, content: 'Great post' })
    expect(res.headers.location).toBe(`/api/v1${postUrl}/comments/${data.id}`)
    const spoof = await t.request({ method: 'POST', url: `${postUrl}/comments`, token: t.tokens.bob, json: { content: 'x', authorId: t.admin.id } })
    expect(spoof.statusCode).toBe(422)
    expect(spoof.json().error.details).toEqual([{ field: 'authorId', message: 'is not a known field' }])
  })

  it('anonymous callers read but do not comment (401)', async () => {
    expect((await t.request({ method: 'GET', url: `${postUrl}/comments` })).statusCode).toBe(200)
    expect((await t.request({ method: 'POST', url: `${postUrl}/comments`, json: { content: 'x' } })).statusCode).toBe(401)
  })

  it('lists a post\'s comments with their authors, filtered and sorted', async () => {
    await comment(t.tokens.admin, 'from the admin')
    const { data } = (await t.request({ method: 'GET', url: `${postUrl}/comments?authorId=${t.admin.id}` })).json()
    expect(data).toHaveLength(1)
    expect(data[0].author).toEqual({ id: t.admin.id, name: 'Ada Admin' })
    const sorted = (await t.request({ method: 'GET', url: `${postUrl}/comments?sort=-createdAt` })).json().data
    expect(sorted.map((c: { createdAt: string }) => c.createdAt)).toEqual(sorted.map((c: { createdAt: string }) => c.createdAt).sort().reverse())
  })

  it('the author or an admin edits (PATCH); others get 403; PUT is 405', async () => {
    const { url } = await comment(t.tokens.bob, 'first draft')
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.alice, json: { content: 'hijack' } })).statusCode).toBe(403)
    const edited = await t.request({ method: 'PATCH', url, token: t.tokens.bob, json: { content: 'second draft' } })
    expect(edited.json().data.content).toBe('second draft')
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.admin, json: { content: 'moderated' } })).json().data.content).toBe('moderated')
    const put = await t.request({ method: 'PUT', url, token: t.tokens.bob, json: { content: 'x' } })
    expect(put.statusCode).toBe(405)
    expect(put.headers.allow).toBe('GET, HEAD, PATCH, DELETE, OPTIONS')
  })

  it("the author, the post's owner or an admin deletes; others get 403", async () => {
    const other = await t.createUser({ name: 'Other', email: 'other@example.com' })
    const otherToken = await t.tokenFor(other.id)
    const byBob = [await comment(t.tokens.bob, 'a'), await comment(t.tokens.bob, 'b'), await comment(t.tokens.bob, 'c')]
    expect((await t.request({ method: 'DELETE', url: byBob[0]!.url, token: otherToken })).statusCode).toBe(403)
    expect((await t.request({ method: 'DELETE', url: byBob[0]!.url, token: t.tokens.bob })).statusCode).toBe(204)
    expect((await t.request({ method: 'DELETE', url: byBob[1]!.url, token: t.tokens.alice })).statusCode).toBe(204)
    expect((await t.request({ method: 'DELETE', url: byBob[2]!.url, token: t.tokens.admin })).statusCode).toBe(204)
    expect((await t.request({ method: 'GET', url: byBob[2]!.url })).statusCode).toBe(404)
  })

  it('validates the content (422)', async () => {
    for (const content of ['', '   ', 'x'.repeat(5001), 'nul\u0000byte', 'half a pair \ud83d']) {
      const res = await t.request({ method: 'POST', url: `${postUrl}/comments`, token: t.tokens.bob, json: { content } })
      expect(res.statusCode).toBe(422)
      expect(res.json().error.details[0].field).toBe('content')
    }
    expect((await comment(t.tokens.bob, 'multi\nline')).data.content).toBe('multi\nline')
    expect((await comment(t.tokens.bob, 'whole pairs are fine 🎉')).data.content).toBe('whole pairs are fine 🎉')
  })

  it('a comment that exists but not under the path is 404, and so is a missing parent', async () => {
    const { data } = await comment(t.tokens.bob, 'here')
    const otherPost = await t.request({ method: 'POST', url: `/users/${t.bob.id}/posts`, token: t.tokens.bob, json: { title: 'Other', content: 'y' } })
    const otherPostId = otherPost.json().data.id as number
    const postId = postUrl.split('/').at(-1)
    for (const url of [
      `/users/${t.bob.id}/posts/${otherPostId}/comments/${data.id}`,
      `/users/${t.bob.id}/posts/${postId}/comments/${data.id}`,
      `/users/999999/posts/${postId}/comments/${data.id}`,
      `/users/${t.alice.id}/posts/999999/comments/${data.id}`,
      `${postUrl}/comments/999999`,
    ]) {
      expect((await t.request({ method: 'GET', url })).statusCode, url).toBe(404)
      expect((await t.request({ method: 'DELETE', url, token: t.tokens.admin })).statusCode, url).toBe(404)
    }
    expect((await t.request({ method: 'GET', url: `/users/${t.bob.id}/posts/${postId}/comments` })).statusCode).toBe(404)
  })
})
