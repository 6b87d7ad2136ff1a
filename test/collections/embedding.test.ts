// Embedding: `include` puts related resources in each item (posts: author, comments; comments:
// author, post; users: posts, todos), on list and single GET routes, as their own routes show them to
// the caller (drafts and comments on drafts only for their author and admins); embedded lists are the
// newest 20, or `<relation>.limit` up to 100; each relation costs one statement per page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FEATURES } from '../../src/features.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, type Factories, postPath } from '../helpers/factories.js'
import type { Comment } from '../../src/comments/comments.schemas.js'
import type { Post } from '../../src/posts/posts.schemas.js'
import type { User } from '../../src/users/users.schemas.js'

/** What the features offer a user's answers (src/features.ts): posts and todos, and any other's. */
const OFFERED_TO_USERS = FEATURES.flatMap(({ embeds = [] }) => embeds.filter((offered) => offered.in === 'users').map(({ name }) => name))

const ids = (items: { id: number }[]) => items.map((item) => item.id)
const newestFirst = (items: { id: number }[]) => ids(items).sort((a, b) => b - a)

describe('include', () => {
  let t: TestApp
  let make: Factories
  let published: Post
  let draft: Post
  let onPublished: Comment[]
  let onDraft: Comment
  const statements: string[] = []
  let recording = false

  /** GET url as `token`'s owner (anonymous without), answering the parsed body; anything but 200 fails. */
  const get = async (url: string, token?: string) => {
    const res = await t.request({ method: 'GET', url, ...(token === undefined ? {} : { token }) })
    expect(res.statusCode, `${url}: ${res.body}`).toBe(200)
    return res.json()
  }
  const userAsShown = async (user: Pick<User, 'id'>, token?: string) => (await get(`/api/v1/users/${user.id}`, token)).data

  beforeAll(async () => {
    t = await buildTestApp({}, { onQuery: (sql) => recording && statements.push(sql) })
    make = createFactories(t)
    published = await make.post(t.alice, { title: 'Published' })
    draft = await make.draft(t.alice, { title: 'Draft' })
    onPublished = [await make.comment(published, t.bob), await make.comment(published, t.alice)]
    onDraft = await make.comment(draft, t.alice)
    await make.todo(t.alice)
    await make.todo(t.alice)
  })
  afterAll(() => t.close())

  describe('on posts', () => {
    it('embeds the author as GET /users/:id shows them, and the comments newest first, several at once', async () => {
      const { data } = await get(`/api/v1/users/${t.alice.id}/posts?include=author,comments`)
      expect(ids(data)).toEqual([published.id])
      expect(data[0].author).toEqual(await userAsShown(t.alice))
      expect(ids(data[0].comments)).toEqual(newestFirst(onPublished))
      expect(data[0].comments[0]).toEqual(onPublished[1])
      expect(data[0].title).toBe('Published')
    })

    it('takes include on the single route too, and the repeated form', async () => {
      const { data } = await get(`${postPath(published)}?include=author&include=comments`)
      expect(data.author.id).toBe(t.alice.id)
      expect(ids(data.comments)).toEqual(newestFirst(onPublished))
    })

    it('keeps only the selected fields, with the included relations whether selected or not', async () => {
      const { data } = await get(`/api/v1/users/${t.alice.id}/posts?select=title&include=author`)
      expect(Object.keys(data[0])).toEqual(['id', 'title', 'author'])
      const one = await get(`${postPath(published)}?select=status&include=comments,author`)
      expect(Object.keys(one.data)).toEqual(['id', 'status', 'author', 'comments'])
    })

    it('shows a draft and its comments to its author and admins only', async () => {
      for (const token of [t.tokens.alice, t.tokens.admin]) {
        const { data } = await get(`/api/v1/users/${t.alice.id}/posts?include=comments`, token)
        const shownDraft = data.find((post: Post) => post.id === draft.id)
        expect(ids(shownDraft.comments)).toEqual([onDraft.id])
      }
      for (const token of [t.tokens.bob, undefined]) {
        const { data } = await get(`/api/v1/users/${t.alice.id}/posts?include=comments`, token)
        expect(ids(data)).toEqual([published.id])
        const res = await t.request({ method: 'GET', url: `${postPath(draft)}?include=comments`, ...(token === undefined ? {} : { token }) })
        expect(res.statusCode).toBe(404)
      }
    })
  })

  describe('on comments', () => {
    it('replaces the {id, name} author by the whole user, and embeds the post', async () => {
      const { data } = await get(`${postPath(published)}/comments?include=author,post`)
      const bobs = data.find((comment: Comment) => comment.id === onPublished[0]?.id)
      expect(bobs.author).toEqual(await userAsShown(t.bob))
      expect(bobs.post).toEqual((await get(postPath(published))).data)
      const plain = await get(`${postPath(published)}/comments`)
      expect(plain.data[0].author).toEqual({ id: plain.data[0].authorId, name: expect.any(String) })
    })

    it('takes include on the single route, with select', async () => {
      const comment = onPublished[0] as Comment
      const { data } = await get(`${postPath(published)}/comments/${comment.id}?select=content&include=post`)
      expect(data).toEqual({ id: comment.id, content: comment.content, post: expect.objectContaining({ id: published.id, title: 'Published' }) })
    })

    it('embeds a draft as the post of its comments for its author and admins, and answers 404 to others as before', async () => {
      for (const token of [t.tokens.alice, t.tokens.admin]) {
        const { data } = await get(`${postPath(draft)}/comments?include=post`, token)
        expect(data[0].post).toEqual(expect.objectContaining({ id: draft.id, status: 'draft' }))
      }
      const res = await t.request({ method: 'GET', url: `${postPath(draft)}/comments?include=post`, token: t.tokens.bob })
      expect(res.statusCode).toBe(404)
    })
  })

  describe('on users', () => {
    it('embeds their posts (drafts only for their author and admins) and todos, list and single', async () => {
      for (const [token, drafts] of [
        [t.tokens.alice, true],
        [t.tokens.admin, true],
        [t.tokens.bob, false],
        [undefined, false],
      ] as const) {
        const { data } = await get(`/api/v1/users?include=posts,todos`, token)
        const alice = data.find((user: User) => user.id === t.alice.id)
        expect(ids(alice.posts)).toEqual(drafts ? [draft.id, published.id] : [published.id])
        expect(alice.todos).toHaveLength(2)
        expect(ids(alice.todos)).toEqual(newestFirst(alice.todos))
        const bob = data.find((user: User) => user.id === t.bob.id)
        expect(bob.posts).toEqual([])
        const one = await get(`/api/v1/users/${t.alice.id}?include=posts`, token)
        expect(ids(one.data.posts)).toEqual(drafts ? [draft.id, published.id] : [published.id])
      }
    })
  })

  describe('embedded lists', () => {
    let busy: Post
    let commentIds: number[]

    beforeAll(async () => {
      busy = await make.post(t.bob, { title: 'Busy' })
      const now = new Date().toISOString()
      const rows = Array.from({ length: 105 }, (_, n) => ({ post_id: busy.id, author_id: t.alice.id, content: `c${n}`, created_at: now, updated_at: now }))
      await t.database.db.insertInto('comments').values(rows).execute()
      commentIds = (await t.database.db.selectFrom('comments').select('id').where('post_id', '=', busy.id).orderBy('id', 'desc').execute()).map((r) => r.id)
    })

    it('are the newest 20 by default', async () => {
      const { data } = await get(`${postPath(busy)}?include=comments`)
      expect(ids(data.comments)).toEqual(commentIds.slice(0, 20))
    })

    it('are the newest <relation>.limit, capped at 100', async () => {
      const five = await get(`${postPath(busy)}?include=comments&comments.limit=5`)
      expect(ids(five.data.comments)).toEqual(commentIds.slice(0, 5))
      const many = await get(`/api/v1/users/${t.bob.id}/posts?include=comments&comments.limit=500`)
      expect(ids(many.data[0].comments)).toEqual(commentIds.slice(0, 100))
      const users = await get(`/api/v1/users?include=todos&todos.limit=1`)
      const alice = users.data.find((user: User) => user.id === t.alice.id)
      expect(alice.todos).toHaveLength(1)
    })

    it('leave GraphQL nested lists in id order as before', async () => {
      const res = await t.request({
        method: 'POST',
        url: '/graphql',
        json: { query: `{ post(id: "${busy.id}") { comments(limit: 3) { id } } }` },
      })
      expect(res.json().data.post.comments.map((c: { id: string }) => Number(c.id))).toEqual(commentIds.slice(-3).reverse())
    })
  })

  describe('refusals', () => {
    it.each([
      ['posts?include=tags', 'include', 'the relations are author, comments'],
      ['posts?include=author,tags,likes', 'include', '`tags`, `likes` are unknown'],
      ['todos?include=author', 'include', 'embeds nothing'],
      ['posts?include=author&comments.limit=5', 'comments.limit', 'applies only with include=comments'],
      ['posts?comments.limit=5', 'comments.limit', 'applies only with include=comments'],
      ['posts?include=comments&comments.limit=0', 'comments.limit', 'positive integer'],
      ['posts?include=comments&comments.limit=2.5', 'comments.limit', 'positive integer'],
      ['posts?include=comments&comments.limit=5&comments.limit=6', 'comments.limit', 'must be given once'],
      ['posts?include=author&author.limit=5', 'author.limit', 'not a list'],
      ['posts?include=author&tags.limit=5', 'tags.limit', 'not a list'],
      ['posts?include=', 'include', 'none empty'],
    ])('answers 400 to /users/:id/%s, naming %s', async (path, field, message) => {
      const res = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/${path}` })
      expect(res.statusCode, res.body).toBe(400)
      const { error } = res.json()
      expect(error.code).toBe('BAD_REQUEST')
      expect(error.details).toContainEqual({ field, message: expect.stringContaining(message) })
    })

    it('refuses on single routes too', async () => {
      const res = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}?include=comments` })
      expect(res.statusCode).toBe(400)
      expect(res.json().error.details).toEqual([{ field: 'include', message: `\`comments\` is unknown: the relations are ${OFFERED_TO_USERS.join(', ')}` }])
    })
  })

  describe('statements', () => {
    /** The statements GET url runs, anonymously (no token lookup), from the representation cache's reach (a fresh URL each time). */
    const count = async (url: string): Promise<number> => {
      statements.length = 0
      recording = true
      await get(url)
      recording = false
      return statements.length
    }

    it('cost one batched statement per relation per page, whatever the number of items', async () => {
      const author = await make.user()
      const now = new Date().toISOString()
      const posts = Array.from({ length: 20 }, (_, n) => ({
        user_id: author.id,
        title: `p${n}`,
        content: '.',
        status: 'published' as const,
        published_at: now,
        created_at: now,
        updated_at: now,
      }))
      const postIds = (await t.database.db.insertInto('posts').values(posts).returning('id').execute()).map((row) => row.id)
      const comments = postIds.flatMap((postId) =>
        [0, 1, 2].map((n) => ({ post_id: postId, author_id: t.bob.id, content: `c${n}`, created_at: now, updated_at: now })),
      )
      await t.database.db.insertInto('comments').values(comments).execute()

      const url = `/api/v1/users/${author.id}/posts`
      const plain = await count(`${url}?limit=20`)
      expect(await count(`${url}?limit=20&include=author,comments`)).toBe(plain + 2)
      expect(await count(`${url}?limit=20&include=comments&select=title`)).toBe(plain + 1)
      const { data } = await get(`${url}?limit=20&include=author,comments&sort=title`)
      expect(data).toHaveLength(20)
      expect(data.every((post: { comments: unknown[] }) => post.comments.length === 3)).toBe(true)

      const users = await count('/api/v1/users?limit=50')
      expect(await count('/api/v1/users?limit=50&include=posts,todos')).toBe(users + 2)
      const onPost = `/api/v1/users/${author.id}/posts/${postIds[0]}`
      const comment = await count(`${onPost}/comments`)
      expect(await count(`${onPost}/comments?include=author,post`)).toBe(comment + 2)
      const single = await count(onPost)
      expect(await count(`${onPost}?include=author,comments`)).toBe(single + 2)
    })
  })

  describe('the API description', () => {
    it("describes select, include and the lists' limits on the GET routes that take them", async () => {
      const document = (await get('/openapi.json')) as { paths: Record<string, Record<string, { parameters?: { name: string; schema: unknown }[] }>> }
      const parameters = (path: string) => Object.fromEntries((document.paths[path]?.get?.parameters ?? []).map((p) => [p.name, p.schema]))
      const posts = parameters('/api/v1/users/{userId}/posts')
      // A collection's select also names its aggregate's functions (docs/rest.md, Aggregates).
      expect(posts.select).toMatchObject({
        type: 'array',
        items: { anyOf: [{ enum: ['id', 'userId', 'title', 'content', 'status', 'publishedAt', 'createdAt', 'updatedAt'] }, { pattern: expect.any(String) }] },
      })
      const post = parameters('/api/v1/users/{userId}/posts/{postId}')
      expect(post.select).toMatchObject({
        type: 'array',
        items: { enum: ['id', 'userId', 'title', 'content', 'status', 'publishedAt', 'createdAt', 'updatedAt'] },
      })
      expect(posts.include).toMatchObject({ type: 'array', items: { enum: ['author', 'comments'] } })
      // No default: Swagger UI would fill it in, and a limit without its include is a 400.
      expect(posts['comments.limit']).toEqual({ type: 'integer', minimum: 1 })
      expect(OFFERED_TO_USERS).toEqual(expect.arrayContaining(['posts', 'todos']))
      expect(parameters('/api/v2/users/{id}')).toMatchObject({
        include: { items: { enum: OFFERED_TO_USERS } },
        ...Object.fromEntries(OFFERED_TO_USERS.map((name) => [`${name}.limit`, {}])),
      })
      expect(parameters('/api/v1/users/{userId}/posts/{postId}/comments/{commentId}').include).toMatchObject({ items: { enum: ['author', 'post'] } })
      const todo = parameters('/api/v1/users/{userId}/todos/{todoId}')
      expect(todo.select).toBeDefined()
      expect(todo.include).toBeUndefined()
      expect(parameters('/api/v1/users/{userId}/todos').include).toBeUndefined()
    })
  })

  describe('caching', () => {
    it('gives each inclusion its own ETag, answers 304 to it, and sends no Last-Modified with include', async () => {
      const url = postPath(published)
      const plain = await t.request({ method: 'GET', url })
      const withComments = await t.request({ method: 'GET', url: `${url}?include=comments` })
      expect(withComments.headers.etag).not.toBe(plain.headers.etag)
      expect(plain.headers['last-modified']).toBeDefined()
      expect(withComments.headers['last-modified']).toBeUndefined()
      const again = await t.request({ method: 'GET', url: `${url}?include=comments`, headers: { 'if-none-match': String(withComments.headers.etag) } })
      expect(again.statusCode).toBe(304)
      const dated = await t.request({
        method: 'GET',
        url: `${url}?include=comments`,
        headers: { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() },
      })
      expect(dated.statusCode).toBe(200)
    })

    it('does not answer a kept ?include=comments after a comment is added', async () => {
      const url = `${postPath(published)}?include=comments&comments.limit=50`
      const before = await t.request({ method: 'GET', url })
      const kept = await t.request({ method: 'GET', url })
      expect(kept.headers.etag).toBe(before.headers.etag)
      const added = await make.comment(published, t.bob, { content: 'Late' })
      const after = await t.request({ method: 'GET', url })
      expect(after.headers.etag).not.toBe(before.headers.etag)
      expect(after.json().data.comments[0]).toEqual(added)
      const stale = await t.request({ method: 'GET', url, headers: { 'if-none-match': String(before.headers.etag) } })
      expect(stale.statusCode).toBe(200)
    })
  })
})
