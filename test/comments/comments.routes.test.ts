import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Post } from '../../src/posts/posts.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { commentPath, createFactories, type Factories } from '../helpers/factories.js'
import { graphql } from '../helpers/graphql-client.js'

let t: TestApp
let make: Factories
let post: Post
let postUrl: string
beforeAll(async () => {
  t = await buildTestApp()
  make = createFactories(t)
  post = await make.post(t.alice)
  postUrl = `/users/${t.alice.id}/posts/${post.id}`
})
afterAll(() => t.close())

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

  it("lists a post's comments with their authors, filtered and sorted", async () => {
    await make.comment(post, t.admin)
    const { data } = (await t.request({ method: 'GET', url: `${postUrl}/comments?authorId=${t.admin.id}` })).json()
    expect(data).toHaveLength(1)
    expect(data[0].author).toEqual({ id: t.admin.id, name: 'Ada Admin' })
    const sorted = (await t.request({ method: 'GET', url: `${postUrl}/comments?sort=-createdAt` })).json().data
    expect(sorted.map((c: { createdAt: string }) => c.createdAt)).toEqual(
      sorted
        .map((c: { createdAt: string }) => c.createdAt)
        .sort()
        .reverse(),
    )
  })

  it('the author or an admin edits (PATCH); others get 403; PUT is 405', async () => {
    const url = commentPath(post, await make.comment(post, t.bob))
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.alice, json: { content: 'hijack' } })).statusCode).toBe(403)
    const edited = await t.request({ method: 'PATCH', url, token: t.tokens.bob, json: { content: 'second draft' } })
    expect(edited.json().data.content).toBe('second draft')
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.admin, json: { content: 'moderated' } })).json().data.content).toBe('moderated')
    const put = await t.request({ method: 'PUT', url, token: t.tokens.bob, json: { content: 'x' } })
    expect(put.statusCode).toBe(405)
    expect(put.headers.allow).toBe('GET, HEAD, PATCH, DELETE, OPTIONS')
  })

  it("the author, the post's owner or an admin deletes; others get 403", async () => {
    const { token: otherToken } = await make.signedIn()
    const byBob: string[] = []
    for (let i = 0; i < 3; i++) byBob.push(commentPath(post, await make.comment(post, t.bob)))
    expect((await t.request({ method: 'DELETE', url: byBob[0]!, token: otherToken })).statusCode).toBe(403)
    expect((await t.request({ method: 'DELETE', url: byBob[0]!, token: t.tokens.bob })).statusCode).toBe(204)
    expect((await t.request({ method: 'DELETE', url: byBob[1]!, token: t.tokens.alice })).statusCode).toBe(204)
    expect((await t.request({ method: 'DELETE', url: byBob[2]!, token: t.tokens.admin })).statusCode).toBe(204)
    expect((await t.request({ method: 'GET', url: byBob[2]! })).statusCode).toBe(404)
  })

  it('validates the content (422)', async () => {
    for (const content of ['', '   ', 'x'.repeat(5001), 'nul\u0000byte', 'half a pair \ud83d']) {
      const res = await t.request({ method: 'POST', url: `${postUrl}/comments`, token: t.tokens.bob, json: { content } })
      expect(res.statusCode).toBe(422)
      expect(res.json().error.details[0].field).toBe('content')
    }
    expect((await make.comment(post, t.bob, { content: 'multi\nline' })).content).toBe('multi\nline')
    expect((await make.comment(post, t.bob, { content: 'whole pairs are fine 🎉' })).content).toBe('whole pairs are fine 🎉')
  })

  it('a comment that exists but not under the path is 404, and so is a missing parent', async () => {
    const data = await make.comment(post, t.bob)
    const otherPostId = (await make.post(t.bob)).id
    const postId = post.id
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

describe('guest comments (imported: by someone who is no user)', () => {
  /** A guest comment on the post, written to the store as an import writes one. */
  async function guestComment(content = 'From a guest'): Promise<{ id: number; url: string }> {
    const now = new Date().toISOString()
    const { id } = await t.database.db
      .insertInto('comments')
      .values({ post_id: post.id, author_id: null, email: 'Guest@example.biz', content, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow()
    return { id, url: `${postUrl}/comments/${id}` }
  }

  it('shows no author and the commenter’s e-mail, over REST (include=author too) and GraphQL', async () => {
    const { id, url } = await guestComment()
    const shown = (await t.request({ method: 'GET', url })).json().data
    expect(shown).toMatchObject({ id, authorId: null, author: null, email: 'Guest@example.biz', content: 'From a guest' })
    expect((await t.request({ method: 'GET', url: `${url}?include=author` })).json().data).toMatchObject({ author: null, email: 'Guest@example.biz' })
    const listed = (await t.request({ method: 'GET', url: `${postUrl}/comments?include=author,post` })).json().data
    expect(listed.find((c: { id: number }) => c.id === id)).toMatchObject({ author: null, post: { id: post.id } })
    // A user's comment has an author and no e-mail.
    expect(listed.find((c: { authorId: number | null }) => c.authorId !== null)).toMatchObject({ email: null, author: { id: expect.any(Number) } })
    const answer = await graphql(t, `{ comment(id: "${id}") { id email author { id name } post { id } } }`)
    expect(answer.body).toEqual({ data: { comment: { id: String(id), email: 'Guest@example.biz', author: null, post: { id: String(post.id) } } } })
    const all = await graphql(
      t,
      `
        {
          comments(limit: 100) {
            id
            author {
              id
            }
          }
        }
      `,
    )
    expect(all.body.errors).toBeUndefined()
  })

  it("only an admin edits one; the post's owner or an admin deletes one", async () => {
    const { url } = await guestComment('Edit me')
    for (const token of [t.tokens.alice, t.tokens.bob]) {
      expect((await t.request({ method: 'PATCH', url, token, json: { content: 'Mine now' } })).statusCode).toBe(403)
    }
    const edited = await t.request({ method: 'PATCH', url, token: t.tokens.admin, json: { content: 'Moderated' } })
    expect(edited.statusCode, edited.body).toBe(200)
    expect(edited.json().data).toMatchObject({ authorId: null, email: 'Guest@example.biz', content: 'Moderated' })
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.bob })).statusCode).toBe(403)
    // Alice owns the post.
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.alice })).statusCode).toBe(204)
    const other = await guestComment('Delete me')
    expect((await t.request({ method: 'DELETE', url: other.url, token: t.tokens.admin })).statusCode).toBe(204)
  })
})
