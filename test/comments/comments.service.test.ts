// Creating a comment while its post is being deleted: the comment either lands before the delete
// (and goes with the post) or finds no post (404). Never a foreign-key failure: the service checks
// the post and inserts in one transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCommentsService } from '../../src/comments/comments.service.js'
import { isAppError } from '../../src/errors.js'
import { createPostsService } from '../../src/posts/posts.service.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

describe('comments service', () => {
  it('never fails with a foreign-key error when the post is deleted at the same moment', async () => {
    const { db } = t.database
    const posts = createPostsService({ db })
    const comments = createCommentsService({ db })
    const alice = { userId: t.alice.id, role: 'user' as const, tokenId: 0 }
    const bob = { userId: t.bob.id, role: 'user' as const, tokenId: 0 }
    const outcomes = { created: 0, notFound: 0 }
    for (let i = 0; i < 40; i++) {
      const post = await posts.create(alice, t.alice.id, { title: `race ${i}`, content: 'x' })
      const path = { userId: t.alice.id, postId: post.id }
      // Spread the two over a few microtasks so their statements interleave.
      const [created] = await Promise.allSettled([
        (async () => {
          for (let k = 0; k < i % 4; k++) await Promise.resolve()
          return comments.create(bob, path, { content: 'first!' })
        })(),
        posts.remove(alice, t.alice.id, post.id),
      ])
      if (created.status === 'fulfilled') outcomes.created++
      else if (isAppError(created.reason) && created.reason.code === 'NOT_FOUND') outcomes.notFound++
      else throw created.reason
    }
    expect(outcomes.created + outcomes.notFound).toBe(40)
  })
})
