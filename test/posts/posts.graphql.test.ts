// Posts over GraphQL: a draft is seen only by its author and admins, as over REST, in a post's own
// field, in its author's list and to addComment. (The rules every mutation shares, and the errors,
// are test/graphql/permissions.test.ts's.)
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
})
