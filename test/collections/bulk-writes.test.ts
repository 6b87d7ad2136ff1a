// Bulk writes (docs/rest.md, Bulk writes): a JSON array posted to a collection creates every item in
// one transaction, all or nothing, charged one point per item, its errors named by the item's index.
// The collections that take one are read from the API's own description: every create whose body
// may be an array.
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BULK_MAX_ITEMS } from '../../src/core/bulk.js'
import { createMemoryEvents } from '../../src/events/memory-events.js'
import type { AppTopics } from '../../src/features.js'
import type { Post } from '../../src/posts/posts.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'

/** Enough for one bulk of BULK_MAX_ITEMS and the small ones, not for a second large one. */
const ALLOWANCE = BULK_MAX_ITEMS + 500

const posts = (count: number, title = (i: number) => `Post ${i}`) => Array.from({ length: count }, (_, i) => ({ title: title(i), content: 'Loaded in bulk.' }))

describe('bulk writes', () => {
  let t: TestApp
  const events = createMemoryEvents<AppTopics>()

  beforeAll(async () => {
    t = await buildTestApp({ RATE_LIMIT_AUTHENTICATED_MAX: String(ALLOWANCE) }, { events })
  })
  afterAll(() => t.close())

  const postCount = async (userId: number) =>
    Number((await sql<{ n: number }>`select count(*) as n from posts where user_id = ${userId}`.execute(t.database.db)).rows[0]?.n)

  it(`creates ${BULK_MAX_ITEMS} posts in one request, in order, readable after; charged one point per post`, async () => {
    const response = await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts`, token: t.tokens.alice, json: posts(BULK_MAX_ITEMS) })
    expect(response.statusCode, response.body).toBe(201)
    expect(response.headers.location).toBeUndefined()
    const body = response.json<{ data: Post[]; meta: { created: number } }>()
    expect(body.meta.created).toBe(BULK_MAX_ITEMS)
    expect(body.data.map((post) => post.title)).toEqual(posts(BULK_MAX_ITEMS).map((post) => post.title))
    expect(new Set(body.data.map((post) => post.userId))).toEqual(new Set([t.alice.id]))
    // One point per item, and the answer's bytes past its first 64 KiB (src/limits/answer-bytes.ts).
    expect(Number(response.headers['x-ratelimit-cost'])).toBeGreaterThanOrEqual(BULK_MAX_ITEMS)
    const last = body.data.at(-1)!
    const read = await t.request({ method: 'GET', url: `/api/v1/posts/${last.id}` })
    expect(read.json().data).toEqual(last)
    expect(await postCount(t.alice.id)).toBe(BULK_MAX_ITEMS)

    // What is left of the allowance cannot pay for another 600: refused before any is written.
    const refused = await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts`, token: t.tokens.alice, json: posts(600) })
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.code).toBe('RATE_LIMITED')
    expect(await postCount(t.alice.id)).toBe(BULK_MAX_ITEMS)
  })

  it('charges a small bulk exactly one point per item', async () => {
    const response = await t.request({ method: 'POST', url: '/api/v1/posts', token: t.tokens.bob, json: posts(7) })
    expect(response.statusCode).toBe(201)
    expect(response.headers['x-ratelimit-cost']).toBe('7')
  })

  it('writes nothing when one item is invalid, and names every invalid item by its index', async () => {
    const { user, token } = await createFactories(t).signedIn()
    const items = posts(20).map((item, i) => (i === 17 ? { ...item, title: '' } : i === 3 ? { ...item, status: 'hidden' } : item))
    const response = await t.request({ method: 'POST', url: `/api/v1/users/${user.id}/posts`, token, json: items })
    expect(response.statusCode).toBe(422)
    const error = response.json().error as { code: string; details: { field: string }[] }
    expect(error.code).toBe('VALIDATION_ERROR')
    expect(error.details.map((detail) => detail.field).sort()).toEqual(['[17].title', '[3].status'])
    expect(await postCount(user.id)).toBe(0)
  })

  it(`refuses more than ${BULK_MAX_ITEMS} items (413) and an empty array (400), writing nothing`, async () => {
    const { user, token } = await createFactories(t).signedIn()
    const tooMany = await t.request({ method: 'POST', url: '/api/v1/posts', token, json: posts(BULK_MAX_ITEMS + 1, () => 'x') })
    expect(tooMany.statusCode).toBe(413)
    expect(tooMany.json().error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining(String(BULK_MAX_ITEMS)) as string })
    const none = await t.request({ method: 'POST', url: '/api/v1/posts', token, json: [] })
    expect(none.statusCode).toBe(400)
    expect(none.json().error.code).toBe('BAD_REQUEST')
    expect(await postCount(user.id)).toBe(0)
  })

  it("refuses whole a bulk with an item in someone else's name, or under a user who does not exist", async () => {
    const { user, token } = await createFactories(t).signedIn()
    const theirs = posts(3).map((item, i) => (i === 2 ? { ...item, userId: t.bob.id } : item))
    const forbidden = await t.request({ method: 'POST', url: '/api/v1/posts', token, json: theirs })
    expect(forbidden.statusCode).toBe(403)
    expect(forbidden.json().error).toMatchObject({ code: 'FORBIDDEN', details: [{ field: '[2]' }] })
    const nobody = await t.request({ method: 'POST', url: '/api/v1/posts', token, json: [...posts(1), { ...posts(1)[0], userId: 999_999 }] })
    expect(nobody.statusCode).toBe(422)
    expect(nobody.json().error.details).toEqual([{ field: '[1].userId', message: expect.any(String) as string }])
    expect(await postCount(user.id)).toBe(0)
    // An admin writes in anyone's name.
    const admin = await t.request({ method: 'POST', url: '/api/v1/posts', token: t.tokens.admin, json: theirs.map((item) => ({ ...item, userId: user.id })) })
    expect(admin.statusCode).toBe(201)
    expect(await postCount(user.id)).toBe(3)
  })

  it('replays the whole answer for a repeated Idempotency-Key, creating nothing more', async () => {
    const { user, token } = await createFactories(t).signedIn()
    const send = () =>
      t.request({ method: 'POST', url: `/api/v1/users/${user.id}/posts`, token, json: posts(5), headers: { 'idempotency-key': `bulk-${user.id}` } })
    const first = await send()
    const again = await send()
    expect(first.statusCode).toBe(201)
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(await postCount(user.id)).toBe(5)
  })

  it('answers Prefer: return=minimal with the 201 alone', async () => {
    const { user, token } = await createFactories(t).signedIn()
    const response = await t.request({ method: 'POST', url: '/api/v1/posts', token, json: posts(4), headers: { prefer: 'return=minimal' } })
    expect(response.statusCode).toBe(201)
    expect(response.body).toBe('')
    expect(response.headers['preference-applied']).toBe('return=minimal')
    expect(await postCount(user.id)).toBe(4)
  })

  it('tells commentAdded once per created comment, in order, after the commit', async () => {
    const make = createFactories(t)
    const post = await make.post(t.bob)
    const heard: string[] = []
    const unsubscribe = events.subscribe('commentAdded', (event) => heard.push(event.comment.content))
    try {
      const contents = ['first', 'second', 'third']
      const response = await t.request({
        method: 'POST',
        url: `/api/v1/users/${t.bob.id}/posts/${post.id}/comments`,
        token: t.tokens.admin,
        json: contents.map((content) => ({ content })),
      })
      expect(response.statusCode).toBe(201)
      expect(heard).toEqual(contents)
    } finally {
      unsubscribe()
    }
  })

  it('takes an array on every collection that creates, at the top level and under the parent', async () => {
    const make = createFactories(t)
    const { user, token } = await make.signedIn()
    const parents: Record<string, number> = { userId: user.id, postId: (await make.post(user)).id, albumId: (await make.album(user)).id }
    const document = (await t.request({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<
        string,
        {
          get?: { responses: Record<string, { content?: Record<string, unknown> }> }
          post?: { requestBody: { content: { 'application/json': { schema: { $ref: string }; example: Record<string, unknown> } } } }
        }
      >
      components: { schemas: Record<string, { anyOf?: { type: string }[] }> }
    }>()
    const v1 = Object.entries(document.paths).filter(([path]) => path.startsWith('/api/v1/'))
    const bulkCreates = v1.flatMap(([path, operations]) => {
      const body = operations.post?.requestBody.content['application/json']
      const schema = body === undefined ? undefined : document.components.schemas[body.schema.$ref.split('/').pop()!]
      return schema?.anyOf?.some((branch) => branch.type === 'array') === true ? [{ path, example: body!.example }] : []
    })
    // The collections that create: a list (it answers CSV too) with a POST. Users are created by an
    // admin, each with a password hash under its allowance: no bulk create (decision 0065).
    const creating = v1.filter(([, operations]) => operations.post !== undefined && operations.get?.responses['200']?.content?.['text/csv'] !== undefined)
    expect(creating.length).toBeGreaterThan(5)
    expect(bulkCreates.map(({ path }) => path).sort()).toEqual(
      creating
        .map(([path]) => path)
        .filter((path) => path !== '/api/v1/users')
        .sort(),
    )
    for (const { path, example } of bulkCreates) {
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => String(parents[name]))
      const item = Object.fromEntries(Object.entries(example).map(([field, value]) => [field, parents[field] ?? value]))
      const response = await t.request({ method: 'POST', url, token, json: [item, item] })
      expect(response.statusCode, `${path}: ${response.body}`).toBe(201)
      expect(response.json().data).toHaveLength(2)
    }
  })

  it('creates posts over GraphQL with createPosts: the same order, bound, errors by index and charge', async () => {
    const { user, token } = await createFactories(t).signedIn()
    const createPosts = 'mutation($input: [CreatePostInput!]!) { createPosts(input: $input) { title author { id } } }'
    const created = await graphql(t, createPosts, { token, variables: { input: posts(3) } })
    expect(created.body.errors).toBeUndefined()
    expect(created.body.data?.createPosts).toEqual(posts(3).map(({ title }) => ({ title, author: { id: String(user.id) } })))
    expect(created.headers['x-ratelimit-cost']).toBe('3')

    const invalid = await graphql(t, createPosts, { token, variables: { input: posts(3).map((item, i) => (i === 1 ? { ...item, title: '' } : item)) } })
    expect(codesOf(invalid)).toEqual(['VALIDATION_ERROR'])
    expect(invalid.body.errors?.[0]?.extensions?.details).toEqual([{ field: '[1].title', message: 'must not be empty' }])
    const tooMany = await graphql(t, createPosts, { token, variables: { input: posts(BULK_MAX_ITEMS + 1, () => 'x') } })
    expect(codesOf(tooMany)).toEqual(['PAYLOAD_TOO_LARGE'])
    expect(await postCount(user.id)).toBe(3)
  })
})
