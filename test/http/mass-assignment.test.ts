// Property-level authorization (mass assignment), every way in: each field a caller must never set
// (ids, owners, timestamps, hashes), sent in the body of each write route and in the input of each
// mutation, is refused and changes nothing; the role only an admin sets; and no answer, REST or
// GraphQL, read or write, carries a password or its hash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { graphql } from '../helpers/graphql-client.js'
import { DATA_SECTIONS } from '../../src/cli/data-sections.js'
import type { Tables } from '../../src/db/tables.js'

let t: TestApp
let post: number
let comment: number
let todo: number
beforeAll(async () => {
  t = await buildTestApp()
  const make = createFactories(t)
  const bobs = await make.post(t.bob)
  post = bobs.id
  comment = (await make.comment(bobs, t.bob)).id
  todo = (await make.todo(t.bob)).id
})
afterAll(() => t.close())

/** Fields no body may carry, with a value that would matter if it were taken. */
const PROTECTED: Record<string, unknown> = {
  id: 1,
  userId: 1,
  authorId: 1,
  postId: 1,
  createdAt: '2000-01-01T00:00:00.000Z',
  updatedAt: '2000-01-01T00:00:00.000Z',
  publishedAt: '2000-01-01T00:00:00.000Z',
  passwordHash: 'scrypt$forged',
  password_hash: 'scrypt$forged',
  tokenHash: 'forged',
}

interface Write {
  method: 'POST' | 'PUT' | 'PATCH'
  url(): string
  /** A body the route takes, from bob (an admin for POST /users). */
  body: Record<string, unknown>
  admin?: true
}

const WRITES: Record<string, Write> = {
  'POST /users': { method: 'POST', url: () => '/users', body: { name: 'New', email: 'new-mass@example.com' }, admin: true },
  'PUT /users/:id': { method: 'PUT', url: () => `/users/${t.bob.id}`, body: { name: 'Bob', email: 'bob@example.com' } },
  'PATCH /users/:id': { method: 'PATCH', url: () => `/users/${t.bob.id}`, body: { name: 'Bob' } },
  'POST /users/:userId/posts': { method: 'POST', url: () => `/users/${t.bob.id}/posts`, body: { title: 'T', content: 'C' } },
  'PUT /users/:userId/posts/:postId': { method: 'PUT', url: () => `/users/${t.bob.id}/posts/${post}`, body: { title: 'T', content: 'C' } },
  'PATCH /users/:userId/posts/:postId': { method: 'PATCH', url: () => `/users/${t.bob.id}/posts/${post}`, body: { title: 'T' } },
  'POST /users/:userId/posts/:postId/comments': { method: 'POST', url: () => `/users/${t.bob.id}/posts/${post}/comments`, body: { content: 'C' } },
  'PATCH /users/:userId/posts/:postId/comments/:commentId': {
    method: 'PATCH',
    url: () => `/users/${t.bob.id}/posts/${post}/comments/${comment}`,
    body: { content: 'C' },
  },
  'POST /users/:userId/todos': { method: 'POST', url: () => `/users/${t.bob.id}/todos`, body: { text: 'T' } },
  'PATCH /users/:userId/todos/:todoId': { method: 'PATCH', url: () => `/users/${t.bob.id}/todos/${todo}`, body: { text: 'T' } },
}

/** Every row of every feature's table (the data sections name them), to compare before and after. */
async function everything() {
  const tables = DATA_SECTIONS.map(({ name }) => name as keyof Tables)
  return Promise.all(tables.map((table) => t.database.db.selectFrom(table).selectAll().orderBy('id').execute()))
}

describe('fields no caller sets', () => {
  const cases = Object.entries(WRITES).flatMap(([route, write]) => Object.keys(PROTECTED).map((field) => [route, field, write] as const))

  it.each(cases)('%s refuses %s in the body with 422 naming it, and changes nothing', async (_route, field, write) => {
    const before = await everything()
    const res = await t.request({
      method: write.method,
      url: `/api/v1${write.url()}`,
      token: write.admin ? t.tokens.admin : t.tokens.bob,
      json: { ...write.body, [field]: PROTECTED[field] },
    })
    expect(res.statusCode, res.body).toBe(422)
    expect(res.json().error.code).toBe('VALIDATION_ERROR')
    expect(res.json().error.details.map((detail: { field: string }) => detail.field)).toContain(field)
    expect(await everything()).toEqual(before)
  })

  const inputs: [string, string][] = [
    ['createUser', 'mutation ($i: CreateUserInput!) { createUser(input: $i) { id } }'],
    ['updateUser', 'mutation ($i: UpdateUserInput!) { updateUser(id: "1", input: $i) { id } }'],
    ['createPost', 'mutation ($i: CreatePostInput!) { createPost(input: $i) { id } }'],
    ['updatePost', 'mutation ($i: UpdatePostInput!) { updatePost(id: "1", input: $i) { id } }'],
    ['addComment', 'mutation ($i: AddCommentInput!) { addComment(input: $i) { id } }'],
    ['updateComment', 'mutation ($i: UpdateCommentInput!) { updateComment(id: "1", input: $i) { id } }'],
    ['updateTodo', 'mutation ($i: UpdateTodoInput!) { updateTodo(id: "1", input: $i) { id } }'],
  ]
  const base: Record<string, Record<string, unknown>> = {
    createUser: { name: 'New', email: 'new-gql@example.com' },
    updateUser: { name: 'Bob' },
    createPost: { title: 'T', content: 'C' },
    updatePost: { title: 'T' },
    addComment: { postId: '1', content: 'C' },
    updateComment: { content: 'C' },
    updateTodo: { text: 'T' },
  }
  // postId is addComment's own field: it names the post, and is checked like a path would be.
  const graphqlCases = inputs.flatMap(([name, query]) =>
    Object.keys(PROTECTED)
      .filter((field) => !(name === 'addComment' && field === 'postId'))
      .map((field) => [name, field, query] as const),
  )

  it.each(graphqlCases)('%s refuses %s in its input before running, and changes nothing', async (name, field, query) => {
    const before = await everything()
    const answer = await graphql(t, query, { token: t.tokens.admin, variables: { i: { ...base[name], [field]: PROTECTED[field] } } })
    expect(answer.body.data ?? null).toBeNull()
    expect(answer.body.errors?.map((error) => error.extensions?.code)).toEqual(['BAD_REQUEST'])
    expect(answer.body.errors?.[0]?.message).toContain(`"${field}"`)
    expect(await everything()).toEqual(before)
  })
})

describe('the role', () => {
  it('is refused to a caller who is not an admin, on REST and GraphQL, whoever they name', async () => {
    const before = await everything()
    for (const id of [t.bob.id, t.alice.id]) {
      const rest = await t.request({ method: 'PATCH', url: `/api/v1/users/${id}`, token: t.tokens.bob, json: { role: 'admin' } })
      expect(rest.statusCode).toBe(403)
      const answer = await graphql(t, `mutation { updateUser(id: "${id}", input: {role: admin}) { role } }`, { token: t.tokens.bob })
      expect(answer.body.errors?.map((error) => error.extensions?.code)).toEqual(['FORBIDDEN'])
    }
    const created = await graphql(t, 'mutation { createUser(input: {name: "X", email: "x-role@example.com", role: admin}) { id } }', { token: t.tokens.bob })
    expect(created.body.errors?.map((error) => error.extensions?.code)).toEqual(['FORBIDDEN'])
    expect(await everything()).toEqual(before)
  })
})

describe('passwords and hashes', () => {
  it('appear in no answer, REST or GraphQL, to anyone', async () => {
    const withPassword = await t.request({ method: 'PATCH', url: `/api/v1/users/${t.bob.id}`, token: t.tokens.bob, json: { password: 'a new long password' } })
    expect(withPassword.statusCode).toBe(200)
    const stored = await t.database.db.selectFrom('users').select('password_hash').where('id', '=', t.bob.id).executeTakeFirstOrThrow()
    const hash = stored.password_hash
    expect(typeof hash).toBe('string')
    const answers = [withPassword.body]
    for (const token of [undefined, t.tokens.bob, t.tokens.admin]) {
      for (const url of ['/api/v1/users', `/api/v1/users/${t.bob.id}`, '/api/v2/users?fields=id,name', `/api/v1/users/${t.bob.id}/posts/${post}/comments`]) {
        answers.push((await t.request({ method: 'GET', url, token })).body)
      }
      answers.push(JSON.stringify((await graphql(t, `{ user(id: "${t.bob.id}") { id name email role createdAt } users { id name } }`, { token })).body))
    }
    for (const answer of answers) {
      expect(answer).not.toContain(hash)
      expect(answer).not.toMatch(/"password|"passwordHash|"password_hash/)
    }
    for (const field of ['password', 'passwordHash', 'password_hash']) {
      const answer = await graphql(t, `{ user(id: "${t.bob.id}") { ${field} } }`, { token: t.tokens.admin })
      expect(answer.body.errors?.[0]?.message).toBe(`Cannot query field "${field}" on type "User".`)
    }
    const fields = await t.request({ method: 'GET', url: '/api/v1/users?fields=password', token: t.tokens.admin })
    expect(fields.statusCode).toBe(400)
  })
})
