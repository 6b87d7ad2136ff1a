// Creating a comment while its post is being deleted: the comment either lands before the delete
// (and goes with the post) or finds no post (404). Never a foreign-key failure: the service checks
// the post and inserts in one transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import SqliteDatabase from 'better-sqlite3'
import { createCommentsService } from '../../src/comments/comments.service.js'
import { createMemoryEvents } from '../../src/events/memory-events.js'
import type { AppTopics } from '../../src/features.js'
import { isAppError } from '../../src/errors.js'
import { createPostsService } from '../../src/posts/posts.service.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { sqlitePath, TEST_STORE } from '../helpers/test-store.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

describe('comments service', () => {
  it('never fails with a foreign-key error when the post is deleted at the same moment', async () => {
    const { db } = t.database
    const posts = createPostsService({ db })
    const events = createMemoryEvents<AppTopics>()
    const published: number[] = []
    events.subscribe('commentAdded', (event) => published.push(event.comment.id))
    const comments = createCommentsService({ db, events })
    const alice = { userId: t.alice.id, role: 'user' as const, tokenId: 0, scope: 'write' as const }
    const bob = { userId: t.bob.id, role: 'user' as const, tokenId: 0, scope: 'write' as const }
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
      if (created.status === 'fulfilled') {
        outcomes.created++
        expect(published.at(-1)).toBe(created.value.id)
      } else if (isAppError(created.reason) && created.reason.code === 'NOT_FOUND') outcomes.notFound++
      else throw created.reason
    }
    expect(outcomes.created + outcomes.notFound).toBe(40)
    // Only the comments that were created were published, each once.
    expect(published).toHaveLength(outcomes.created)
  })

  // Read synchronously on a second SQLite connection; the order (commit, then publish) is one code path for both stores.
  it.runIf(TEST_STORE === 'sqlite')('publishes commentAdded after the commit, never for a write that failed', async () => {
    const { db } = t.database
    const events = createMemoryEvents<AppTopics>()
    const comments = createCommentsService({ db, events })
    const bob = { userId: t.bob.id, role: 'user' as const, tokenId: 0, scope: 'write' as const }
    const post = await createPostsService({ db }).create(bob, t.bob.id, { title: 'Events', content: 'x' })
    // Another connection, read synchronously while the listener runs: it sees only what is committed.
    const other = new SqliteDatabase(sqlitePath(t.config.database), { readonly: true })
    const seen: { committed: boolean; id: number }[] = []
    events.subscribe('commentAdded', (event) => {
      const row = other.prepare('select id from comments where id = ?').get(event.comment.id)
      seen.push({ committed: row !== undefined, id: event.comment.id })
    })
    try {
      const comment = await comments.create(bob, { postId: post.id }, { content: 'hello' })
      await expect(comments.create(bob, { postId: 999_999 }, { content: 'lost' })).rejects.toMatchObject({ code: 'NOT_FOUND' })
      await expect(comments.create(null, { postId: post.id }, { content: 'anonymous' })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' })
      expect(seen).toEqual([{ committed: true, id: comment.id }])
    } finally {
      other.close()
    }
  })
})
