// No N+1: nested lists and references are read per request in batches, so the number of SQL
// statements a query runs follows the depth of the query, not the number of users, posts and
// comments it returns.
import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers/build-test-app.js'
import { graphql } from '../helpers/graphql-client.js'

const NESTED = '{ users { name posts { title comments { content author { name } } } } }'

/** Builds an app holding `users` users (besides the test app's three), each with posts, each with comments. */
async function statementsFor(sizes: { users: number; postsPerUser: number; commentsPerPost: number }) {
  const statements: string[] = []
  let recording = false
  const t = await buildTestApp({}, { onQuery: (sql) => recording && statements.push(sql) })
  try {
    const { db } = t.database
    const now = new Date().toISOString()
    for (let u = 0; u < sizes.users; u++) {
      const user = await db
        .insertInto('users')
        .values({ name: `User ${u}`, email: `user${u}@example.com`, role: 'user', created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow()
      for (let p = 0; p < sizes.postsPerUser; p++) {
        const post = await db
          .insertInto('posts')
          .values({ user_id: user.id, title: `Post ${u}.${p}`, content: '.', status: 'published', published_at: now, created_at: now, updated_at: now })
          .returning('id')
          .executeTakeFirstOrThrow()
        const comments = Array.from({ length: sizes.commentsPerPost }, (_, c) => ({
          post_id: post.id,
          author_id: t.bob.id,
          content: `Comment ${c}`,
          created_at: now,
          updated_at: now,
        }))
        if (comments.length > 0) await db.insertInto('comments').values(comments).execute()
      }
    }
    recording = true
    const answer = await graphql(t, NESTED)
    recording = false
    expect(answer.body.errors).toBeUndefined()
    const users = answer.body.data?.users as { posts: { comments: { author: { name: string } }[] }[] }[]
    const posts = users.flatMap((user) => user.posts)
    const comments = posts.flatMap((post) => post.comments)
    return {
      statements,
      returned: { users: users.length, posts: posts.length, comments: comments.length },
      authors: new Set(comments.map((c) => c.author.name)),
    }
  } finally {
    await t.close()
  }
}

describe('GraphQL batching', () => {
  it('runs the same few statements for users { posts { comments { author { name } } } } whatever the data', async () => {
    const small = await statementsFor({ users: 1, postsPerUser: 1, commentsPerPost: 1 })
    const large = await statementsFor({ users: 17, postsPerUser: 8, commentsPerPost: 6 })

    // The large answer really is large: 20 users (a page), 136 posts, 816 comments.
    expect(large.returned).toEqual({ users: 20, posts: 17 * 8, comments: 17 * 8 * 6 })
    expect(large.authors).toEqual(new Set(['Bob']))
    expect(small.returned).toEqual({ users: 4, posts: 1, comments: 1 })

    // One statement per level: users, their posts, those posts' comments, the comments' authors.
    expect(large.statements).toHaveLength(small.statements.length)
    expect(large.statements).toHaveLength(4)
  })
})

describe('GraphQL reads after writes', () => {
  it('shows a read after a mutation what the mutation wrote, within one document and within one batch', async () => {
    const t = await buildTestApp()
    try {
      const inOneDocument = await graphql(
        t,
        `
          mutation {
            first: addTodo(text: "one") {
              user {
                todos {
                  text
                }
              }
            }
            second: addTodo(text: "two") {
              user {
                todos {
                  text
                }
              }
            }
          }
        `,
        { token: t.tokens.alice },
      )
      expect(inOneDocument.body.data).toEqual({
        first: { user: { todos: [{ text: 'one' }] } },
        second: { user: { todos: [{ text: 'one' }, { text: 'two' }] } },
      })
      const read = { query: '{ viewer { todos { text } } }' }
      const batch = await t.request({
        method: 'POST',
        url: '/graphql',
        token: t.tokens.alice,
        json: [read, { query: 'mutation { addTodo(text: "three") { id } }' }, read],
      })
      const [before, , after] = batch.json()
      expect(before.data.viewer.todos).toHaveLength(2)
      expect(after.data.viewer.todos).toHaveLength(3)
    } finally {
      await t.close()
    }
  })
})

describe('GraphQL batches of many parents', () => {
  it('reads the comments of 10,000 posts in statements of at most 1,000 ids', async () => {
    const statements: string[] = []
    let recording = false
    const t = await buildTestApp({}, { onQuery: (sql) => recording && statements.push(sql) })
    try {
      const { db } = t.database
      const now = new Date().toISOString()
      const users = Array.from({ length: 97 }, (_, u) => ({
        name: `U${u}`,
        email: `u${u}@example.com`,
        role: 'user' as const,
        created_at: now,
        updated_at: now,
      }))
      await db.insertInto('users').values(users).execute()
      const ids = (await db.selectFrom('users').select('id').execute()).map((row) => row.id)
      for (const userId of ids) {
        const posts = Array.from({ length: 100 }, (_, p) => ({
          user_id: userId,
          title: `P${p}`,
          content: '.',
          status: 'published' as const,
          published_at: now,
          created_at: now,
          updated_at: now,
        }))
        await db.insertInto('posts').values(posts).execute()
      }
      const lastPost = await db.selectFrom('posts').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow()
      await db.insertInto('comments').values({ post_id: lastPost.id, author_id: t.bob.id, content: 'the one', created_at: now, updated_at: now }).execute()

      recording = true
      const answer = await graphql(t, '{ users(limit: 100) { posts(limit: 100) { comments(limit: 1) { content } } } }')
      recording = false
      expect(answer.body.errors).toBeUndefined()
      const posts = (answer.body.data?.users as { posts: { comments: { content: string }[] }[] }[]).flatMap((user) => user.posts)
      expect(posts).toHaveLength(10_000)
      expect(posts.flatMap((post) => post.comments)).toEqual([{ content: 'the one' }])
      // users, posts of 100 users, then comments of 10,000 posts in ten statements.
      expect(statements.filter((sql) => sql.includes('"comments"'))).toHaveLength(10)
      expect(statements).toHaveLength(12)
    } finally {
      await t.close()
    }
  })
})
