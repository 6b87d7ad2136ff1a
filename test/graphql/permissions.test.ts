// GraphQL errors and permissions: the services' rules, as GraphQL errors with the REST codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'
import { TEST_STORE } from '../helpers/test-store.js'

describe('GraphQL errors and permissions', () => {
  let t: TestApp
  let alicePost: string
  let aliceTodo: string
  let bobComment: string

  beforeAll(async () => {
    t = await buildTestApp()
    const make = createFactories(t)
    const post = await make.post(t.alice, { title: 'Open' })
    alicePost = String(post.id)
    aliceTodo = String((await make.todo(t.alice)).id)
    bobComment = String((await make.comment(post, t.bob)).id)
  })
  afterAll(() => t.close())

  it('refuses every mutation without a token with UNAUTHENTICATED at its path, before looking at the input', async () => {
    const mutations = [
      'createUser(input: {name: "", email: "x"}) { id }',
      'updateUser(id: "1", input: {name: ""}) { id }',
      'deleteUser(id: "1")',
      'createPost(input: {title: "", content: ""}) { id }',
      'updatePost(id: "1", input: {title: ""}) { id }',
      'deletePost(id: "1")',
      'addComment(input: {postId: "1", content: ""}) { id }',
      'updateComment(id: "1", input: {content: ""}) { id }',
      'deleteComment(id: "1")',
      'addTodo(text: "") { id }',
      'updateTodo(id: "1", input: {text: ""}) { id }',
      'deleteTodo(id: "1")',
    ]
    for (const mutation of mutations) {
      const answer = await graphql(t, `mutation { ${mutation} }`)
      const field = mutation.slice(0, mutation.indexOf('('))
      expect({ field, codes: codesOf(answer), path: answer.body.errors?.[0]?.path }).toEqual({ field, codes: ['UNAUTHENTICATED'], path: [field] })
      expect(answer.body.data).toBeNull()
    }
  })

  it('refuses what the caller may not do with FORBIDDEN, and changes nothing', async () => {
    const forbidden = [
      ['updatePost', `updatePost(id: "${alicePost}", input: {title: "taken"}) { id }`],
      ['deletePost', `deletePost(id: "${alicePost}")`],
      ['updateTodo', `updateTodo(id: "${aliceTodo}", input: {completed: true}) { id }`],
      ['deleteTodo', `deleteTodo(id: "${aliceTodo}")`],
      ['updateUser', `updateUser(id: "${t.alice.id}", input: {name: "Mallory"}) { id }`],
      ['deleteUser', `deleteUser(id: "${t.alice.id}")`],
      ['createUser', 'createUser(input: {name: "Eve", email: "eve@example.com"}) { id }'],
      ['updateUser', `updateUser(id: "${t.bob.id}", input: {role: admin}) { id }`],
    ]
    for (const [field, mutation] of forbidden) {
      const answer = await graphql(t, `mutation { ${mutation} }`, { token: t.tokens.bob })
      expect({ field, codes: codesOf(answer) }).toEqual({ field, codes: ['FORBIDDEN'] })
    }
    const check = await graphql(
      t,
      `
        query ($p: ID!, $u: ID!) {
          post(id: $p) {
            title
          }
          user(id: $u) {
            name
            todos {
              completed
            }
          }
        }
      `,
      {
        variables: { p: alicePost, u: String(t.alice.id) },
      },
    )
    expect(check.body.data).toEqual({ post: { title: 'Open' }, user: { name: 'Alice', todos: [{ completed: false }] } })
    const edit = await graphql(t, `mutation { updateComment(id: "${bobComment}", input: {content: "not mine"}) { id } }`, { token: t.tokens.alice })
    expect(codesOf(edit)).toEqual(['FORBIDDEN'])
  })

  it('lets the owner, the post author and an admin do what the same rules allow', async () => {
    const own = await graphql(t, `mutation { updateTodo(id: "${aliceTodo}", input: {completed: true}) { completed user { name } } }`, { token: t.tokens.alice })
    expect(own.body.data).toEqual({ updateTodo: { completed: true, user: { name: 'Alice' } } })
    const admin = await graphql(t, `mutation { updatePost(id: "${alicePost}", input: {title: "Edited"}) { title author { name } } }`, { token: t.tokens.admin })
    expect(admin.body.data).toEqual({ updatePost: { title: 'Edited', author: { name: 'Alice' } } })
    // The post's author may delete a comment on it.
    const removed = await graphql(t, `mutation { deleteComment(id: "${bobComment}") }`, { token: t.tokens.alice })
    expect(removed.body).toEqual({ data: { deleteComment: bobComment } })
    const gone = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/posts/${alicePost}/comments/${bobComment}` })
    expect(gone.statusCode).toBe(404)
  })

  it('serves partial data: a missing user is null with NOT_FOUND at its path, the rest is answered', async () => {
    const answer = await graphql(t, '{ a: user(id: "424242") { name } b: user(id: "not-an-id") { name } viewer { id } users(limit: 1) { name } }')
    expect(answer.body.data).toEqual({ a: null, b: null, viewer: null, users: [{ name: 'Ada Admin' }] })
    // Errors come in the order they happen; sort them to compare.
    const errors = [...(answer.body.errors ?? [])].sort((x, y) => String(x.path?.[0]).localeCompare(String(y.path?.[0])))
    expect(errors).toEqual([
      { message: 'User not found', locations: [{ line: 1, column: 3 }], path: ['a'], extensions: { code: 'NOT_FOUND' } },
      { message: 'User not found', locations: [{ line: 1, column: 34 }], path: ['b'], extensions: { code: 'NOT_FOUND' } },
    ])
  })

  it('refuses invalid input with VALIDATION_ERROR and one detail per problem, as REST does', async () => {
    const answer = await graphql(t, 'mutation { createUser(input: {name: "", email: "nope", age: 200, avatar: "http://x"}) { id } }', { token: t.tokens.admin })
    expect(codesOf(answer)).toEqual(['VALIDATION_ERROR'])
    expect(answer.body.errors?.[0]).toMatchObject({ path: ['createUser'], locations: [{ line: 1, column: 12 }] })
    const fields = (answer.body.errors?.[0]?.extensions?.details as { field: string }[]).map((d) => d.field).sort()
    expect(fields).toEqual(['age', 'avatar', 'email', 'name'])
    const rest = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      token: t.tokens.admin,
      json: { name: '', email: 'nope', age: 200, avatar: 'http://x' },
    })
    expect(rest.json().error.details).toEqual(answer.body.errors?.[0]?.extensions?.details)

    const blank = await graphql(t, `mutation { addComment(input: {postId: "${alicePost}", content: "   "}) { id } }`, { token: t.tokens.bob })
    expect(codesOf(blank)).toEqual(['VALIDATION_ERROR'])
    const conflict = await graphql(t, 'mutation { createUser(input: {name: "Again", email: "ALICE@example.com"}) { id } }', { token: t.tokens.admin })
    expect(codesOf(conflict)).toEqual(['CONFLICT'])
  })

  // A value the schema cannot represent, written behind the service's back: PostgreSQL's typed
  // columns refuse one, so only SQLite can hold it.
  it.runIf(TEST_STORE === 'sqlite')('masks an unexpected failure as INTERNAL_ERROR quoting the request id, with no internals', async () => {
    const { id } = await t.createUser({ name: 'Odd', email: 'odd@example.com' })
    await t.database.db
      .updateTable('users')
      .set({ age: 'forty' as unknown as number })
      .where('id', '=', id)
      .execute()
    const response = await t.request({ method: 'POST', url: '/graphql', json: { query: `{ user(id: "${id}") { name age } }` } })
    const body = response.json()
    expect(response.statusCode).toBe(200)
    expect(body.data).toEqual({ user: { name: 'Odd', age: null } })
    expect(JSON.stringify(body)).not.toMatch(/forty|Int cannot|stack/i)
    expect(body.errors).toEqual([
      {
        message: `Something went wrong on our side; quote request id ${String(response.headers['x-request-id'])}`,
        locations: [expect.objectContaining({ line: 1 })],
        path: ['user', 'age'],
        extensions: { code: 'INTERNAL_ERROR' },
      },
    ])
  })

  it.runIf(TEST_STORE === 'sqlite')('logs a masked failure in full, with the request id the answer quotes', async () => {
    const lines: string[] = []
    const logged = await buildTestApp({ LOG_LEVEL: 'error' }, { logStream: { write: (line) => lines.push(line) } })
    try {
      const { id } = await logged.createUser({ name: 'Odd', email: 'odd@example.com' })
      await logged.database.db
        .updateTable('users')
        .set({ age: 'forty' as unknown as number })
        .where('id', '=', id)
        .execute()
      const response = await logged.request({ method: 'POST', url: '/graphql', json: { query: `{ user(id: "${id}") { age } }` } })
      const requestId = String(response.headers['x-request-id'])
      const entries = lines.map((line) => JSON.parse(line) as { level: number; reqId?: string; msg: string; err?: { message: string }; path?: unknown })
      expect(entries).toContainEqual(
        expect.objectContaining({
          level: 50,
          reqId: requestId,
          path: ['user', 'age'],
          err: expect.objectContaining({ message: expect.stringContaining('forty') as string }) as object,
        }),
      )
    } finally {
      await logged.close()
    }
  })
})
