// Comments read over GraphQL: one by its id (comment) and every comment (comments, commentsPage,
// commentsConnection), with REST's rights: a comment on a draft is seen only by those who see the
// draft, its author and admins. (What every collection's list, page and connection share is
// test/graphql/collection-fields.test.ts's; the subscription, comments.graphql.test.ts's.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Post } from '../../src/posts/posts.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'

describe('comments over GraphQL', () => {
  let t: TestApp
  let open: Post
  let draft: Post
  let bobs: Post
  let onDraft: string

  beforeAll(async () => {
    t = await buildTestApp()
    const make = createFactories(t)
    open = await make.post(t.alice, { title: 'Open' })
    draft = await make.draft(t.alice, { title: 'Draft' })
    bobs = await make.post(t.bob, { title: "Bob's" })
    await make.comment(open, t.bob, { content: 'bob on open' })
    onDraft = String((await make.comment(draft, t.alice, { content: 'alice on draft' })).id)
    await make.comment(draft, t.admin, { content: 'admin on draft' })
    await make.comment(bobs, t.alice, { content: "alice on bob's" })
  })
  afterAll(() => t.close())

  const callers = () =>
    [
      ['anonymous', undefined, ['bob on open', "alice on bob's"]],
      ['another user (bob)', t.tokens.bob, ['bob on open', "alice on bob's"]],
      ["the draft's author (alice)", t.tokens.alice, ['bob on open', 'alice on draft', 'admin on draft', "alice on bob's"]],
      ['an admin', t.tokens.admin, ['bob on open', 'alice on draft', 'admin on draft', "alice on bob's"]],
    ] as const

  it('lists every comment, on every post, those on a draft only to its author and admins: in comments, commentsPage and commentsConnection alike', async () => {
    const query = `{
      comments { content author { name } post { title } }
      commentsPage { items { content } pageInfo { total } }
      commentsConnection { edges { node { content } } totalCount }
    }`
    for (const [who, token, contents] of callers()) {
      const answer = await graphql(t, query, { token })
      expect(answer.body.errors, who).toBeUndefined()
      const data = answer.body.data as {
        comments: { content: string; author: { name: string }; post: { title: string } }[]
        commentsPage: { items: { content: string }[]; pageInfo: { total: number } }
        commentsConnection: { edges: { node: { content: string } }[]; totalCount: number }
      }
      expect(
        data.comments.map((comment) => comment.content),
        who,
      ).toEqual(contents)
      expect(
        data.commentsPage.items.map((comment) => comment.content),
        who,
      ).toEqual(contents)
      expect(data.commentsPage.pageInfo.total, who).toBe(contents.length)
      expect(
        data.commentsConnection.edges.map((edge) => edge.node.content),
        who,
      ).toEqual(contents)
      expect(data.commentsConnection.totalCount, who).toBe(contents.length)
      expect(data.comments[0], who).toEqual({ content: 'bob on open', author: { name: 'Bob' }, post: { title: 'Open' } })
    }
  })

  it('lists the same comments as the REST lists of every post the caller may see', async () => {
    for (const [who, token] of callers()) {
      const overRest: string[] = []
      for (const post of [open, draft, bobs]) {
        const response = await t.request({ method: 'GET', url: `/api/v1/users/${post.userId}/posts/${post.id}/comments?limit=100`, token })
        expect([200, 404], who).toContain(response.statusCode)
        if (response.statusCode === 200) overRest.push(...(response.json().data as { id: number }[]).map((comment) => String(comment.id)))
      }
      const answer = await graphql(t, '{ comments(limit: 100) { id } }', { token })
      expect(
        (answer.body.data?.comments as { id: string }[]).map((comment) => comment.id),
        who,
      ).toEqual(overRest.sort((a, b) => Number(a) - Number(b)))
    }
  })

  it('answers comment(id) as REST answers the comment: NOT_FOUND on a draft the caller may not see', async () => {
    const query = 'query($id: ID!) { comment(id: $id) { content post { title } } }'
    for (const token of [undefined, t.tokens.bob]) {
      const hidden = await graphql(t, query, { variables: { id: onDraft }, token })
      expect(hidden.body.data).toEqual({ comment: null })
      expect(codesOf(hidden)).toEqual(['NOT_FOUND'])
    }
    for (const token of [t.tokens.alice, t.tokens.admin]) {
      expect((await graphql(t, query, { variables: { id: onDraft }, token })).body).toEqual({
        data: { comment: { content: 'alice on draft', post: { title: 'Draft' } } },
      })
    }
    for (const id of ['999999', 'nope', '-1']) {
      const missing = await graphql(t, query, { variables: { id } })
      expect([missing.body.data, codesOf(missing)]).toEqual([{ comment: null }, ['NOT_FOUND']])
    }
  })

  it("narrows to one post's comments by postId, and to one author's by authorId, as the caller may see them", async () => {
    const contents = async (args: string, token?: string) => {
      const answer = await graphql(t, `{ comments(${args}) { content } }`, { token })
      expect(answer.body.errors).toBeUndefined()
      return (answer.body.data?.comments as { content: string }[]).map((comment) => comment.content)
    }
    expect(await contents(`where: {postId: {eq: "${open.id}"}}`)).toEqual(['bob on open'])
    expect(await contents(`where: {postId: {eq: "${draft.id}"}}`, t.tokens.bob)).toEqual([])
    expect(await contents(`where: {postId: {eq: "${draft.id}"}}`, t.tokens.alice)).toEqual(['alice on draft', 'admin on draft'])
    expect(await contents(`filter: {authorId: ["${t.alice.id}"]}`, t.tokens.bob)).toEqual(["alice on bob's"])
    expect(await contents(`where: {authorId: {eq: "${t.alice.id}"}}`, t.tokens.alice)).toEqual(['alice on draft', "alice on bob's"])
    expect(await contents(`where: {postId: {in: ["${open.id}", "${bobs.id}"]}}, sort: "-id"`)).toEqual(["alice on bob's", 'bob on open'])
  })
})
