// Posts over GraphQL: a draft is seen only by its author and admins, as over REST, in a post's own
// field, in its author's list, in the lists of every post (posts, postsPage, postsConnection) and to
// addComment. (The rules every mutation shares, and the errors, are test/graphql/permissions.test.ts's;
// what every collection's list, page and connection share, test/graphql/collection-fields.test.ts's.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'

describe('posts over GraphQL', () => {
  let t: TestApp
  let aliceDraft: string

  beforeAll(async () => {
    t = await buildTestApp()
    const make = createFactories(t)
    await make.post(t.alice, { title: 'Open' })
    aliceDraft = String((await make.draft(t.alice, { title: 'Secret' })).id)
    await make.post(t.bob, { title: "Bob's" })
    await make.draft(t.bob, { title: "Bob's draft" })
  })
  afterAll(() => t.close())

  it('hides drafts from everyone but their author and admins, as REST does', async () => {
    const query = `query($id: ID!, $u: ID!) { post(id: $id) { title } user(id: $u) { posts { title } } }`
    const variables = { id: aliceDraft, u: String(t.alice.id) }
    const anonymous = await graphql(t, query, { variables })
    expect(anonymous.body.data).toEqual({ post: null, user: { posts: [{ title: expect.any(String) as string }] } })
    expect(codesOf(anonymous)).toEqual(['NOT_FOUND'])
    const comment = await graphql(t, `mutation { addComment(input: {postId: "${aliceDraft}", content: "peek"}) { id } }`, { token: t.tokens.bob })
    expect(codesOf(comment)).toEqual(['NOT_FOUND'])
    for (const token of [t.tokens.alice, t.tokens.admin]) {
      const seen = await graphql(t, query, { variables, token })
      expect(seen.body.data?.post).toEqual({ title: 'Secret' })
      expect((seen.body.data?.user as { posts: unknown[] }).posts).toContainEqual({ title: 'Secret' })
    }
  })

  const callers = () =>
    [
      ['anonymous', undefined, ['Open', "Bob's"]],
      ['another user (bob: his draft, not alice’s)', t.tokens.bob, ['Open', "Bob's", "Bob's draft"]],
      ['the author (alice: her draft, not bob’s)', t.tokens.alice, ['Open', 'Secret', "Bob's"]],
      ['an admin', t.tokens.admin, ['Open', 'Secret', "Bob's", "Bob's draft"]],
    ] as const

  it('lists every post, of every user, with the drafts only their author and admins see: in posts, postsPage and postsConnection alike', async () => {
    const query = `{
      posts { title }
      postsPage { items { title } pageInfo { total hasMore } }
      postsConnection { edges { node { title } } totalCount }
    }`
    for (const [who, token, titles] of callers()) {
      const answer = await graphql(t, query, { token })
      expect(answer.body.errors, who).toBeUndefined()
      const data = answer.body.data as {
        posts: { title: string }[]
        postsPage: { items: { title: string }[]; pageInfo: { total: number; hasMore: boolean } }
        postsConnection: { edges: { node: { title: string } }[]; totalCount: number }
      }
      expect(
        data.posts.map((post) => post.title),
        who,
      ).toEqual(titles)
      expect(
        data.postsPage.items.map((post) => post.title),
        who,
      ).toEqual(titles)
      expect(data.postsPage.pageInfo, who).toEqual({ total: titles.length, hasMore: false })
      expect(
        data.postsConnection.edges.map((edge) => edge.node.title),
        who,
      ).toEqual(titles)
      expect(data.postsConnection.totalCount, who).toBe(titles.length)
    }
  })

  it('lists the same posts as the REST lists of each user, for every caller', async () => {
    for (const [who, token] of callers()) {
      const overRest = []
      for (const user of [t.admin, t.alice, t.bob]) {
        const response = await t.request({ method: 'GET', url: `/api/v1/users/${user.id}/posts?limit=100`, token })
        expect(response.statusCode).toBe(200)
        overRest.push(...(response.json().data as { id: number }[]).map((post) => String(post.id)))
      }
      const answer = await graphql(t, '{ posts(limit: 100) { id } }', { token })
      expect(
        (answer.body.data?.posts as { id: string }[]).map((post) => post.id),
        who,
      ).toEqual(overRest.sort((a, b) => Number(a) - Number(b)))
    }
  })

  it("narrows to one user's posts by userId (filter or where), with that user's drafts as the caller may see them", async () => {
    const titles = async (args: string, token?: string) => {
      const answer = await graphql(t, `{ posts(${args}) { title author { name } } }`, { token })
      expect(answer.body.errors).toBeUndefined()
      return (answer.body.data?.posts as { title: string; author: { name: string } }[]).map((post) => `${post.author.name}: ${post.title}`)
    }
    const alice = String(t.alice.id)
    expect(await titles(`where: {userId: {eq: "${alice}"}}`)).toEqual(['Alice: Open'])
    expect(await titles(`where: {userId: {eq: "${alice}"}}`, t.tokens.bob)).toEqual(['Alice: Open'])
    expect(await titles(`where: {userId: {eq: "${alice}"}}`, t.tokens.alice)).toEqual(['Alice: Open', 'Alice: Secret'])
    expect(await titles(`filter: {userId: ["${alice}"]}`, t.tokens.admin)).toEqual(['Alice: Open', 'Alice: Secret'])
    // A user who does not exist has no posts: an empty list, as a filter matching nothing.
    expect(await titles('where: {userId: {eq: "999999"}}')).toEqual([])
  })

  it('finds drafts by status only where the caller may see them', async () => {
    const titles = async (token?: string) => {
      const answer = await graphql(t, '{ posts(where: {status: {eq: draft}}) { title } }', { token })
      expect(answer.body.errors).toBeUndefined()
      return (answer.body.data?.posts as { title: string }[]).map((post) => post.title)
    }
    expect(await titles()).toEqual([])
    expect(await titles(t.tokens.bob)).toEqual(["Bob's draft"])
    expect(await titles(t.tokens.alice)).toEqual(['Secret'])
    expect(await titles(t.tokens.admin)).toEqual(['Secret', "Bob's draft"])
  })

  it('sorts and pages every post as the REST query language says: by a field, by offset and by cursor', async () => {
    const page = async (args: string) => {
      const answer = await graphql(t, `{ postsPage(${args}) { items { title } pageInfo { page nextCursor hasMore } } }`, { token: t.tokens.admin })
      expect(answer.body.errors).toBeUndefined()
      return answer.body.data?.postsPage as { items: { title: string }[]; pageInfo: { page: number | null; nextCursor: string | null; hasMore: boolean } }
    }
    const sorted = ["Bob's", "Bob's draft", 'Open', 'Secret']
    expect((await page('sort: "title"')).items.map((post) => post.title)).toEqual(sorted)
    expect((await page('sort: "-title"')).items.map((post) => post.title)).toEqual([...sorted].reverse())
    const second = await page('sort: "title", limit: 3, page: 2')
    expect([second.items.map((post) => post.title), second.pageInfo.page, second.pageInfo.hasMore]).toEqual([['Secret'], 2, false])
    const first = await page('sort: "title", limit: 3')
    expect(first.pageInfo.hasMore).toBe(true)
    const next = await page(`sort: "title", limit: 3, cursor: "${first.pageInfo.nextCursor}"`)
    expect(next.items.map((post) => post.title)).toEqual(['Secret'])
  })
})
