// Named example operations as clients write them (GetUser, CreatePost, AddTodo), and GraphQL
// itself (named operations, variables, fragments, inline fragments, aliases, __typename) over the
// same services as REST, with the JIT on (the default: compiled from a document's second use) and
// off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Post } from '../../src/posts/posts.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, type Factories } from '../helpers/factories.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'

describe.each([
  { jit: 'true', label: 'with the JIT' },
  { jit: 'false', label: 'without the JIT' },
])('GraphQL operations $label', ({ jit }) => {
  let t: TestApp
  let make: Factories
  let post: Post
  let postId: string

  beforeAll(async () => {
    t = await buildTestApp({ GRAPHQL_JIT: jit })
    make = createFactories(t)
    post = await make.post(t.alice, { title: 'First light', content: 'Hello from Alice' })
    postId = String(post.id)
  })
  afterAll(() => t.close())

  /** Runs a document twice (the second run is the compiled one when the JIT is on): both answers must agree. */
  async function twice(query: string, options: Parameters<typeof graphql>[2] = {}) {
    const first = await graphql(t, query, options)
    const second = await graphql(t, query, options)
    expect(second.body).toEqual(first.body)
    return first
  }

  it("answers the query GetUser with the selected fields and the user's posts", async () => {
    const answer = await twice('query GetUser($id: ID!) { user(id: $id) { id name email avatar posts { id title content publishedAt } } }', {
      variables: { id: String(t.alice.id) },
    })
    expect(answer.status).toBe(200)
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
    const user = answer.body.data?.user as { id: string; posts: { id: string; publishedAt: string }[] }
    expect(user).toMatchObject({ id: String(t.alice.id), name: 'Alice', email: 'alice@example.com', avatar: null })
    expect(user.posts).toEqual([{ id: postId, title: 'First light', content: 'Hello from Alice', publishedAt: expect.any(String) as string }])
    expect(answer.body.errors).toBeUndefined()
  })

  it('answers the bare query { users { id name } } with the first page', async () => {
    const answer = await twice('{ users { id name } }')
    expect(answer.body).toEqual({
      data: {
        users: [
          { id: String(t.admin.id), name: 'Ada Admin' },
          { id: String(t.alice.id), name: 'Alice' },
          { id: String(t.bob.id), name: 'Bob' },
        ],
      },
    })
  })

  it('spreads named fragments on User', async () => {
    const answer = await twice(
      `query Two($a: ID!, $b: ID!) { first: user(id: $a) { ...UserParts } second: user(id: $b) { ...UserParts email } }
       fragment UserParts on User { id name }`,
      { variables: { a: String(t.alice.id), b: String(t.bob.id) } },
    )
    expect(answer.body.data).toEqual({
      first: { id: String(t.alice.id), name: 'Alice' },
      second: { id: String(t.bob.id), name: 'Bob', email: 'bob@example.com' },
    })
  })

  it('creates a post with the mutation CreatePost, authored by the caller and the same post over REST', async () => {
    const answer = await graphql(t, 'mutation CreatePost($input: CreatePostInput!) { createPost(input: $input) { id title content } }', {
      variables: { input: { title: 'Via GraphQL', content: 'Same core' } },
      token: t.tokens.bob,
    })
    const created = answer.body.data?.createPost as { id: string }
    expect(created).toEqual({ id: expect.any(String) as string, title: 'Via GraphQL', content: 'Same core' })
    const overRest = await t.request({ method: 'GET', url: `/api/v1/users/${t.bob.id}/posts/${created.id}` })
    expect(overRest.statusCode).toBe(200)
    expect(overRest.json().data).toMatchObject({ id: Number(created.id), userId: t.bob.id, title: 'Via GraphQL', status: 'published' })
  })

  it("adds a todo with the mutation AddTodo, open and the caller's", async () => {
    const answer = await graphql(t, 'mutation AddTodo($text: String!) { addTodo(text: $text) { id text completed __typename } }', {
      variables: { text: 'Water the plants' },
      token: t.tokens.alice,
    })
    const todo = answer.body.data?.addTodo as { id: string }
    expect(todo).toEqual({ id: expect.any(String) as string, text: 'Water the plants', completed: false, __typename: 'Todo' })
    const overRest = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/todos/${todo.id}` })
    expect(overRest.json().data).toMatchObject({ text: 'Water the plants', completed: false })
  })

  it('serves inline fragments, aliases, __typename and operationName among several operations', async () => {
    const document = `
      query Names { users { name } }
      query Mixed($id: ID!) {
        someone: user(id: $id) { kind: __typename ... on User { id } ... @include(if: true) { name } }
        nobody: viewer { id }
      }`
    const answer = await twice(document, { operationName: 'Mixed', variables: { id: String(t.bob.id) } })
    expect(answer.body).toEqual({ data: { someone: { kind: 'User', id: String(t.bob.id), name: 'Bob' }, nobody: null } })
  })

  it('runs the operation named, every time, once the document is compiled', async () => {
    const document = 'query Q { viewer { id } } mutation M { addTodo(text: "compiled") { text } }'
    for (let i = 0; i < 3; i++) {
      const mutation = await graphql(t, document, { operationName: 'M', token: t.tokens.bob })
      expect(mutation.body.data).toEqual({ addTodo: { text: 'compiled' } })
    }
    const query = await graphql(t, document, { operationName: 'Q', token: t.tokens.bob })
    expect(query.body.data).toEqual({ viewer: { id: String(t.bob.id) } })
    const get = await t.request({ method: 'GET', url: `/graphql?query=${encodeURIComponent(document)}&operationName=Q`, token: t.tokens.bob })
    expect(get.json()).toEqual({ data: { viewer: { id: String(t.bob.id) } } })
    for (const operationName of ['', 'Nope', 'M N']) {
      const unknown = await graphql(t, document, { operationName, token: t.tokens.bob })
      expect(unknown.body.data).toBeUndefined()
      expect(unknown.body.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST')
    }
    const todos = await graphql(t, '{ viewer { todos(limit: 100) { text } } }', { token: t.tokens.bob })
    const compiled = (todos.body.data?.viewer as { todos: { text: string }[] }).todos.filter((todo) => todo.text === 'compiled')
    expect(compiled).toHaveLength(3)
  })

  it('walks the graph: posts with their author and comments, comments with their post', async () => {
    await make.comment(post, t.bob, { content: 'Nice one' })
    const answer = await twice(`query($id: ID!) { post(id: $id) { title author { name } comments { content author { name } post { id } } } }`, {
      variables: { id: postId },
    })
    expect(answer.body.data).toEqual({
      post: { title: 'First light', author: { name: 'Alice' }, comments: [{ content: 'Nice one', author: { name: 'Bob' }, post: { id: postId } }] },
    })
  })

  it('answers viewer with the signed-in caller', async () => {
    const answer = await graphql(t, '{ viewer { id role } }', { token: t.tokens.admin })
    expect(answer.body.data).toEqual({ viewer: { id: String(t.admin.id), role: 'admin' } })
  })

  it('pages users with the REST query language, and with pageInfo in usersPage', async () => {
    const filtered = await graphql(t, '{ users(filter: {role: [admin]}) { name } }')
    expect(filtered.body.data).toEqual({ users: [{ name: 'Ada Admin' }] })
    const sorted = await graphql(t, '{ users(sort: "-name", limit: 2) { name } }')
    expect(sorted.body.data).toEqual({ users: [{ name: 'Bob' }, { name: 'Alice' }] })
    const searched = await graphql(t, '{ users(q: "ALI", fields: ["name"]) { name } }')
    expect(searched.body.data).toEqual({ users: [{ name: 'Alice' }] })

    const first = await graphql(t, '{ usersPage(limit: 2) { items { name } pageInfo { total pages nextCursor hasMore } } }')
    const page = first.body.data?.usersPage as { pageInfo: { nextCursor: string } }
    expect(page).toEqual({
      items: [{ name: 'Ada Admin' }, { name: 'Alice' }],
      pageInfo: { total: 3, pages: null, nextCursor: expect.any(String) as string, hasMore: true },
    })
    const next = await graphql(t, 'query($c: String) { usersPage(limit: 2, cursor: $c) { items { name } pageInfo { nextCursor hasMore } } }', {
      variables: { c: page.pageInfo.nextCursor },
    })
    expect(next.body.data).toEqual({ usersPage: { items: [{ name: 'Bob' }], pageInfo: { nextCursor: null, hasMore: false } } })
    const byPage = await graphql(t, '{ usersPage(page: 2, limit: 2) { items { name } pageInfo { page pages total } } }')
    expect(byPage.body.data).toEqual({ usersPage: { items: [{ name: 'Bob' }], pageInfo: { page: 2, pages: 2, total: 3 } } })
  })

  it('refuses bad collection arguments as REST refuses the same query string (BAD_REQUEST with details)', async () => {
    const answer = await graphql(t, '{ users(sort: "password", filter: {age: [-1]}, limit: 0) { id } }')
    expect(codesOf(answer)).toEqual(['BAD_REQUEST'])
    expect(answer.body.errors?.[0]?.extensions?.details).toEqual(
      expect.arrayContaining([
        { field: 'sort', message: expect.stringContaining('password') as string },
        { field: 'limit', message: expect.any(String) as string },
      ]),
    )
    const cursor = await graphql(t, '{ users(cursor: "forged") { id } }')
    expect(codesOf(cursor)).toEqual(['BAD_REQUEST'])
  })

  it.each([
    ['an id beyond 32 bits', '{ users(filter: {id: ["99999999999"]}) { id } }', 'id'],
    ['NUL in q', '{ users(q: "a\\u0000") { id } }', 'q'],
    ['NUL in a text filter', '{ users(filter: {name: ["\\u0000"]}) { id } }', 'name'],
  ])('refuses %s in collection arguments with BAD_REQUEST naming the argument', async (_what, query, field) => {
    const answer = await graphql(t, query)
    expect(codesOf(answer)).toEqual(['BAD_REQUEST'])
    expect(answer.body.data).toBeNull()
    const details = answer.body.errors?.[0]?.extensions?.details as { field: string }[]
    expect(details.map((detail) => detail.field)).toEqual([field])
  })

  it("bounds nested lists: limit and page pick a window of each parent's list", async () => {
    for (const title of ['two', 'three', 'four']) await make.post(t.alice, { title })
    const answer = await graphql(
      t,
      `
        query ($id: ID!) {
          user(id: $id) {
            a: posts(limit: 2) {
              title
            }
            b: posts(limit: 2, page: 2) {
              title
            }
            c: posts {
              title
            }
          }
        }
      `,
      {
        variables: { id: String(t.alice.id) },
      },
    )
    expect(answer.body.data).toEqual({
      user: {
        a: [{ title: 'First light' }, { title: 'two' }],
        b: [{ title: 'three' }, { title: 'four' }],
        c: [{ title: 'First light' }, { title: 'two' }, { title: 'three' }, { title: 'four' }],
      },
    })
    const bad = await graphql(
      t,
      `
        {
          users {
            posts(limit: 0) {
              id
            }
          }
        }
      `,
    )
    expect(codesOf(bad)[0]).toBe('BAD_REQUEST')
  })
})
