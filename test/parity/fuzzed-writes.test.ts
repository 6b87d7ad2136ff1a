// Fuzzed writes, REST and GraphQL, sent to a SQLite and a PostgreSQL instance side by side.
//
// Each case is a short sequence of writes: a route or mutation, a caller, a target among the objects
// that exist, and a body made from the route's own schema (the one it validates with), either as it
// is or broken one way (schema-arbitrary.ts). After every request, on each store:
//   - the status is below 500 and an error is in the spec's envelope (GraphQL: each error has a code);
//   - a success was allowed: the caller is an admin or owns what was written (object level), and a
//     caller who is not an admin never changed a role (property level);
//   - the two stores agree: same status, same error code and details, same data (ids and times aside).
// After every sequence, each database holds exactly what the successful writes answered: the same
// rows, with the same values, and nothing a refused write tried to store.
//
// Runs in the sqlite project only: it builds both stores itself. Without PostgreSQL (outside CI) it
// checks the SQLite side alone and says so.
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import type { TSchema } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CreateCommentBody, UpdateCommentBody } from '../../src/comments/comments.schemas.js'
import { CreatePostBody, UpdatePostBody } from '../../src/posts/posts.schemas.js'
import { CreateTodoBody, UpdateTodoBody } from '../../src/todos/todos.schemas.js'
import { CreateUserBody, UpdateUserBody } from '../../src/users/users.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { fuzzRuns } from '../helpers/fuzz.js'
import { type BodyCase, brokenBodyOf, type JsonSchema } from '../helpers/schema-arbitrary.js'
import { postgresUrl } from '../helpers/services.js'
import type { TestStore } from '../helpers/test-store.js'

type Table = 'users' | 'posts' | 'comments' | 'todos'
type Row = Record<string, unknown> & { id: number }
type Model = Record<Table, Row[]>
type Actor = 'admin' | 'alice' | 'bob' | 'anonymous'

interface Side {
  store: TestStore
  t: TestApp
  /** What the successful writes answered, in the order the rows were made. */
  model: Model
}

/** The columns compared, by their API names. */
const FIELDS: Record<Table, string[]> = {
  users: ['id', 'name', 'email', 'age', 'avatar', 'role', 'createdAt', 'updatedAt'],
  posts: ['id', 'userId', 'title', 'content', 'status', 'publishedAt', 'createdAt', 'updatedAt'],
  comments: ['id', 'postId', 'authorId', 'content', 'createdAt', 'updatedAt'],
  todos: ['id', 'userId', 'text', 'completed', 'createdAt', 'updatedAt'],
}

/** A write: REST by route template, or a GraphQL mutation. */
interface Operation {
  table: Table
  kind: 'create' | 'update' | 'delete'
  /** The schema the body is made from (REST: the route's own, read when it is registered). */
  schema?: JsonSchema
  graphql?: GraphqlWrite
}

const USER = 'id name email avatar age role createdAt updatedAt'
const POST = 'id title content status publishedAt createdAt updatedAt author { id }'
const COMMENT = 'id content createdAt updatedAt author { id } post { id }'
const TODO = 'id text completed createdAt updatedAt user { id }'

/** A GraphQL object as the REST representation names it. */
function fromGraphql(table: Table, object: Record<string, unknown>): Row {
  const { id, author, post, user, ...rest } = object as { id: string; author?: { id: string }; post?: { id: string }; user?: { id: string } }
  const row: Row = { ...rest, id: Number(id) }
  if (table === 'posts') row.userId = Number(author!.id)
  if (table === 'comments') Object.assign(row, { authorId: Number(author!.id), postId: Number(post!.id) })
  if (table === 'todos') row.userId = Number(user!.id)
  return row
}

interface GraphqlWrite {
  query: string
  /** The variables' JSON text around the body's. */
  variables(target: Target, body: string): string
  /** The written row, or the id a delete answers. */
  answer(data: Record<string, unknown>): Row | number
}

function gql(table: Table, field: string, query: string, variables: GraphqlWrite['variables']): GraphqlWrite {
  return {
    query,
    variables,
    answer: (data) => (typeof data[field] === 'string' ? Number(data[field]) : fromGraphql(table, data[field] as Record<string, unknown>)),
  }
}
const idAnd = (name: string) => (target: Target, body: string) => `{"id":${JSON.stringify(target.id)},"${name}":${body}}`
const idOnly = (target: Target) => `{"id":${JSON.stringify(target.id)}}`

/** The REST write routes this test covers, by template (the /tokens routes write no rows compared here). */
const REST: Record<string, Omit<Operation, 'schema'>> = {
  'POST /users': { table: 'users', kind: 'create' },
  'PUT /users/:id': { table: 'users', kind: 'update' },
  'PATCH /users/:id': { table: 'users', kind: 'update' },
  'DELETE /users/:id': { table: 'users', kind: 'delete' },
  'POST /users/:userId/posts': { table: 'posts', kind: 'create' },
  'PUT /users/:userId/posts/:postId': { table: 'posts', kind: 'update' },
  'PATCH /users/:userId/posts/:postId': { table: 'posts', kind: 'update' },
  'DELETE /users/:userId/posts/:postId': { table: 'posts', kind: 'delete' },
  'POST /users/:userId/posts/:postId/comments': { table: 'comments', kind: 'create' },
  'PATCH /users/:userId/posts/:postId/comments/:commentId': { table: 'comments', kind: 'update' },
  'DELETE /users/:userId/posts/:postId/comments/:commentId': { table: 'comments', kind: 'delete' },
  'POST /users/:userId/todos': { table: 'todos', kind: 'create' },
  'PATCH /users/:userId/todos/:todoId': { table: 'todos', kind: 'update' },
  'DELETE /users/:userId/todos/:todoId': { table: 'todos', kind: 'delete' },
}
const NOT_FUZZED = new Set(['POST /tokens', 'DELETE /tokens/current'])

/** A TypeBox schema read as the JSON schema it is. */
const schemaOf = (schema: TSchema) => schema as unknown as JsonSchema

/** Every mutation, with its variables made from the schema its resolver validates with. */
const GRAPHQL: Record<string, Operation> = {
  createUser: {
    table: 'users', kind: 'create', schema: schemaOf(CreateUserBody),
    graphql: gql('users', 'createUser', `mutation ($input: CreateUserInput!) { createUser(input: $input) { ${USER} } }`, (_t, body) => `{"input":${body}}`),
  },
  updateUser: {
    table: 'users', kind: 'update', schema: schemaOf(UpdateUserBody),
    graphql: gql('users', 'updateUser', `mutation ($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { ${USER} } }`, idAnd('input')),
  },
  deleteUser: { table: 'users', kind: 'delete', graphql: gql('users', 'deleteUser', 'mutation ($id: ID!) { deleteUser(id: $id) }', idOnly) },
  createPost: {
    table: 'posts', kind: 'create', schema: schemaOf(CreatePostBody),
    graphql: gql('posts', 'createPost', `mutation ($input: CreatePostInput!) { createPost(input: $input) { ${POST} } }`, (_t, body) => `{"input":${body}}`),
  },
  updatePost: {
    table: 'posts', kind: 'update', schema: schemaOf(UpdatePostBody),
    graphql: gql('posts', 'updatePost', `mutation ($id: ID!, $input: UpdatePostInput!) { updatePost(id: $id, input: $input) { ${POST} } }`, idAnd('input')),
  },
  deletePost: { table: 'posts', kind: 'delete', graphql: gql('posts', 'deletePost', 'mutation ($id: ID!) { deletePost(id: $id) }', idOnly) },
  addComment: {
    table: 'comments', kind: 'create', schema: schemaOf(CreateCommentBody),
    graphql: gql('comments', 'addComment', `mutation ($input: AddCommentInput!) { addComment(input: $input) { ${COMMENT} } }`, (target, body) =>
      `{"input":${body.startsWith('{') ? `{"postId":${JSON.stringify(target.id)}${body.length > 2 ? ',' : ''}${body.slice(1)}` : body}}`),
  },
  updateComment: {
    table: 'comments', kind: 'update', schema: schemaOf(UpdateCommentBody),
    graphql: gql('comments', 'updateComment', `mutation ($id: ID!, $input: UpdateCommentInput!) { updateComment(id: $id, input: $input) { ${COMMENT} } }`, idAnd('input')),
  },
  deleteComment: { table: 'comments', kind: 'delete', graphql: gql('comments', 'deleteComment', 'mutation ($id: ID!) { deleteComment(id: $id) }', idOnly) },
  addTodo: { table: 'todos', kind: 'create', schema: schemaOf(CreateTodoBody), graphql: gql('todos', 'addTodo', `mutation ($text: String!) { addTodo(text: $text) { ${TODO} } }`, (_t, body) => body) },
  updateTodo: {
    table: 'todos', kind: 'update', schema: schemaOf(UpdateTodoBody),
    graphql: gql('todos', 'updateTodo', `mutation ($id: ID!, $input: UpdateTodoInput!) { updateTodo(id: $id, input: $input) { ${TODO} } }`, idAnd('input')),
  },
  deleteTodo: { table: 'todos', kind: 'delete', graphql: gql('todos', 'deleteTodo', 'mutation ($id: ID!) { deleteTodo(id: $id) }', idOnly) },
}

/** One write of a sequence, as generated: which object it aims at is an index, resolved per store. */
interface Command {
  op: string
  caller: Actor
  pick: number
  /** Aim the path at another user's collection, or at an id that names nothing. */
  twist: 'none' | 'other-parent' | 'bogus-id'
  bogus: string
  body?: BodyCase
}

/** What a command aims at on one store: the path or the GraphQL id, and who owns it. */
interface Target {
  url: string
  /** The GraphQL id argument (the object's, or for addComment the post's). */
  id: string
  /** The users who may make this write besides an admin (none: admins only). */
  owners: number[]
  /** The row written, when it exists. */
  row?: Row
}

const REST_ROUTES = new Map<string, JsonSchema | undefined>()
const sides: Side[] = []

beforeAll(async () => {
  const withPostgres = (await postgresUrl()) !== undefined
  for (const store of withPostgres ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)) {
    const t = await buildTestApp({}, {
      store,
      onRoute: (route) => {
        // The 405 answers for methods a path lacks are registered as routes too; they are not writes.
        if (store !== 'sqlite' || !route.url.startsWith('/api/v1/') || 'errorBody' in (route.config ?? {})) return
        for (const method of ([] as string[]).concat(route.method)) {
          if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) {
            REST_ROUTES.set(`${method} ${route.url.slice('/api/v1'.length)}`, route.schema?.body as JsonSchema | undefined)
          }
        }
      },
    })
    sides.push({ store, t, model: { users: [t.admin, t.alice, t.bob], posts: [], comments: [], todos: [] } })
  }
})
afterAll(async () => {
  for (const side of sides) await side.t.close()
})

function userIdOf(side: Side, actor: Actor): number | undefined {
  return actor === 'anonymous' ? undefined : side.t[actor].id
}

function tokenOf(side: Side, actor: Actor): string | undefined {
  return actor === 'anonymous' ? undefined : side.t.tokens[actor]
}

/** Resolves the command's aim on one store's model. */
function targetOf(side: Side, op: Operation, command: Command): Target {
  const { model } = side
  const users = op.table === 'users' && op.kind === 'delete' ? model.users.slice(3) : model.users
  const pickFrom = <T>(list: T[], offset = 0): T | undefined => (list.length === 0 ? undefined : list[(command.pick + offset) % list.length])
  const otherUser = (id: number) => model.users.find((user) => user.id !== id && user.id === pickFrom(model.users, 1)?.id) ?? model.users.find((u) => u.id !== id)!
  const bogus = command.twist === 'bogus-id'
  switch (op.table) {
    case 'users': {
      if (op.kind === 'create') return { url: '/users', id: '', owners: [] }
      const user = pickFrom(users)
      const id = bogus || user === undefined ? command.bogus : String(user.id)
      return { url: `/users/${encodeURIComponent(id)}`, id, owners: user === undefined || bogus ? [] : [user.id], row: bogus ? undefined : user }
    }
    case 'posts':
    case 'todos': {
      if (op.kind === 'create') {
        // The caller's own collection, unless twisted to someone else's.
        const own = model.users.find((user) => user.id === userIdOf(side, command.caller))
        const owner = command.twist === 'other-parent' || own === undefined ? pickFrom(model.users)! : own
        return { url: `/users/${owner.id}/${op.table}`, id: '', owners: [owner.id] }
      }
      const row = pickFrom(model[op.table])
      if (row === undefined || bogus) {
        const owner = pickFrom(model.users)!
        return { url: `/users/${owner.id}/${op.table}/${encodeURIComponent(command.bogus)}`, id: command.bogus, owners: [] }
      }
      const owner = row.userId as number
      const parent = command.twist === 'other-parent' ? otherUser(owner).id : owner
      return { url: `/users/${parent}/${op.table}/${row.id}`, id: String(row.id), owners: [owner], row }
    }
    case 'comments': {
      const postOf = (id: unknown) => model.posts.find((post) => post.id === id)
      if (op.kind === 'create') {
        const post = pickFrom(model.posts)
        if (post === undefined || bogus) return { url: `/users/${side.t.alice.id}/posts/${encodeURIComponent(command.bogus)}/comments`, id: command.bogus, owners: [] }
        const parent = command.twist === 'other-parent' ? otherUser(post.userId as number).id : (post.userId as number)
        // Anyone signed in may comment on a post they can see.
        return { url: `/users/${parent}/posts/${post.id}/comments`, id: String(post.id), owners: model.users.map((user) => user.id), row: post }
      }
      const comment = pickFrom(model.comments)
      if (comment === undefined || bogus) {
        const post = pickFrom(model.posts)
        return { url: `/users/${Number(post?.userId ?? 1)}/posts/${post?.id ?? 1}/comments/${encodeURIComponent(command.bogus)}`, id: command.bogus, owners: [] }
      }
      const post = postOf(comment.postId)!
      const parent = command.twist === 'other-parent' ? otherUser(post.userId as number).id : (post.userId as number)
      // The author edits; the author or the post's author deletes.
      const owners = op.kind === 'delete' ? [comment.authorId as number, post.userId as number] : [comment.authorId as number]
      return { url: `/users/${parent}/posts/${post.id}/comments/${comment.id}`, id: String(comment.id), owners, row: comment }
    }
  }
}

/** A success the caller was not allowed, or a role a caller who is not an admin changed. */
function expectAllowed(side: Side, op: Operation, command: Command, target: Target, written: Row | number) {
  const callerId = userIdOf(side, command.caller)
  const caller = side.model.users.find((user) => user.id === callerId)
  const what = `${command.op} as ${command.caller} (${side.store})`
  expect(caller, `${what}: succeeded without a signed-in caller`).toBeDefined()
  if (caller!.role === 'admin') return
  expect(target.owners, `${what}: succeeded on what the caller does not own`).toContain(caller!.id)
  if (op.table === 'users' && typeof written === 'object') {
    expect(written.role, `${what}: changed a role`).toBe(target.row?.role)
  }
  if (op.kind === 'create' && op.table !== 'users' && typeof written === 'object') {
    const owner = op.table === 'comments' ? written.authorId : written.userId
    expect(owner, `${what}: wrote in another user's name`).toBe(caller!.id)
  }
}

/** Applies a successful write to the model, cascades included (the schema deletes them too). */
function apply(model: Model, op: Operation, written: Row | number) {
  if (typeof written === 'object') {
    const row = Object.fromEntries(FIELDS[op.table].map((field) => [field, written[field]])) as Row
    const at = model[op.table].findIndex((existing) => existing.id === row.id)
    if (op.kind === 'create') model[op.table].push(row)
    else model[op.table][at] = row
    return
  }
  const gone = (table: Table, test: (row: Row) => boolean) => {
    const removed = model[table].filter(test)
    model[table] = model[table].filter((row) => !test(row))
    return new Set(removed.map((row) => row.id))
  }
  if (op.table === 'users') {
    const posts = gone('posts', (post) => post.userId === written)
    gone('comments', (comment) => comment.authorId === written || posts.has(comment.postId as number))
    gone('todos', (todo) => todo.userId === written)
  } else if (op.table === 'posts') {
    gone('comments', (comment) => comment.postId === written)
  }
  gone(op.table, (row) => row.id === written)
}

/** The outcome of one write on one store: what is compared between the stores. */
interface Outcome {
  status: number
  error?: { code: string; details?: unknown }
  errors?: string[]
  data?: unknown
}

/** Ids and instants differ between the stores (sequences, clocks); their presence does not. */
function comparable(row: Row): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => [key, /^(id|userId|postId|authorId)$|At$/.test(key) ? value !== null : value]),
  )
}

function expectEnvelope(res: LightMyRequestResponse, what: string): { code: string; details?: unknown } {
  const body = res.json()
  expect(typeof body.error?.code, `${what}: ${res.body.slice(0, 300)}`).toBe('string')
  expect(typeof body.error.message, what).toBe('string')
  return { code: body.error.code, details: body.error.details }
}

/** No answer shows a password or a hash: no key names one (an error may name the field it refuses). */
function expectNoSecrets(res: LightMyRequestResponse, what: string) {
  const keys: string[] = []
  JSON.parse(res.body || 'null', (key: string, value: unknown) => (keys.push(key), value))
  expect(keys.filter((key) => /password|hash|secret/i.test(key)), what).toEqual([])
}

async function runRest(side: Side, op: Operation, command: Command): Promise<Outcome> {
  const method = command.op.split(' ')[0] as 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  const target = targetOf(side, op, command)
  const token = tokenOf(side, command.caller)
  const what = `${command.op} ${target.url} as ${command.caller}, body ${command.body?.breakage ?? 'none'} (${side.store})`
  const res = await side.t.app.inject({
    method,
    url: `/api/v1${target.url}`,
    headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...(command.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(command.body === undefined ? {} : { payload: command.body.payload }),
  })
  expect(res.statusCode, `${what}: ${res.body.slice(0, 300)}`).toBeLessThan(500)
  expectNoSecrets(res, what)
  if (res.statusCode >= 400) return { status: res.statusCode, error: expectEnvelope(res, what) }
  // A path with a trailing slash (an empty bogus id) is redirected to its collection: nothing written.
  if (res.statusCode >= 300) return { status: res.statusCode }
  const written = op.kind === 'delete' ? Number(target.id) : (res.json().data as Row)
  expect(res.statusCode, what).toBe({ create: 201, update: 200, delete: 204 }[op.kind])
  expectAllowed(side, op, command, target, written)
  apply(side.model, op, written)
  return { status: res.statusCode, data: typeof written === 'object' ? comparable(written) : undefined }
}

async function runGraphql(side: Side, op: Operation, command: Command): Promise<Outcome> {
  const target = targetOf(side, op, command)
  // createPost and addTodo write for the caller: there is no owner to name.
  if (op.kind === 'create' && (op.table === 'posts' || op.table === 'todos')) target.owners = [userIdOf(side, command.caller) ?? 0]
  const token = tokenOf(side, command.caller)
  const what = `${command.op} id ${target.id} as ${command.caller}, variables ${command.body?.breakage ?? 'none'} (${side.store})`
  const graphqlWrite = op.graphql!
  const body = command.body?.payload ?? ''
  // Bytes that are not UTF-8 go into the variables as they are.
  const [before = '', after = ''] = graphqlWrite.variables(target, '"@@"').split('"@@"')
  const vars = Buffer.isBuffer(body) ? Buffer.concat([Buffer.from(before), body, Buffer.from(after)]) : graphqlWrite.variables(target, body)
  const payload = Buffer.concat([Buffer.from(`{"query":${JSON.stringify(graphqlWrite.query)},"variables":`), Buffer.from(vars), Buffer.from('}')])
  const res = await side.t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), 'content-type': 'application/json' },
    payload,
  })
  expect(res.statusCode, `${what}: ${res.body.slice(0, 300)}`).toBeLessThan(500)
  expectNoSecrets(res, what)
  const json = res.json()
  if (json.error !== undefined) return { status: res.statusCode, error: expectEnvelope(res, what) }
  const errors = (json.errors ?? []) as { extensions?: { code?: unknown } }[]
  for (const error of errors) {
    expect(typeof error.extensions?.code, `${what}: ${res.body.slice(0, 300)}`).toBe('string')
    expect(error.extensions?.code, what).not.toBe('INTERNAL_ERROR')
  }
  if (errors.length > 0 || json.data == null) return { status: res.statusCode, errors: errors.map((error) => String(error.extensions?.code)).sort() }
  const written = graphqlWrite.answer(json.data)
  expectAllowed(side, op, command, target, written)
  apply(side.model, op, written)
  return { status: res.statusCode, data: typeof written === 'object' ? comparable(written) : undefined }
}

/** Each store's rows, as the API names them, next to what the successful writes answered. */
async function expectStoredAsAnswered(side: Side) {
  for (const table of Object.keys(FIELDS) as Table[]) {
    const rows = await side.t.database.db.selectFrom(table).selectAll().orderBy('id').execute()
    const stored = rows.map((row) =>
      Object.fromEntries(
        FIELDS[table].map((field) => {
          const value = (row as Record<string, unknown>)[field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]
          return [field, value instanceof Date ? value.toISOString() : field === 'completed' ? Boolean(value) : value]
        }),
      ),
    )
    const answered = [...side.model[table]].sort((a, b) => a.id - b.id)
    expect(stored, `${table} on ${side.store}`).toEqual(answered)
  }
}

const callers = fc.constantFrom<Actor>('admin', 'alice', 'alice', 'bob', 'bob', 'anonymous')
const twists = fc.constantFrom<Command['twist']>('none', 'none', 'none', 'none', 'none', 'none', 'other-parent', 'bogus-id')
const bogusIds = fc.constantFrom('0', '-1', '999999', 'abc', '1.5', '2147483648', ' 1', '1e2', '0x10', '')

function commandsFor(ops: [string, Operation][]): fc.Arbitrary<Command> {
  return fc.oneof(
    ...ops.map(([name, op]) =>
      fc.record({
        op: fc.constant(name),
        caller: callers,
        pick: fc.nat({ max: 1000 }),
        twist: twists,
        bogus: bogusIds,
        body: op.schema === undefined ? fc.constant(undefined) : brokenBodyOf(op.schema, ['password']),
      }),
    ),
  )
}

describe('fuzzed writes, REST and GraphQL, on both stores', () => {
  it('covers every REST write route and every mutation', async () => {
    expect([...REST_ROUTES.keys()].filter((route) => !NOT_FUZZED.has(route)).sort()).toEqual(Object.keys(REST).sort())
    const res = await sides[0]!.t.request({ method: 'POST', url: '/graphql', json: { query: '{ __type(name: "Mutation") { fields { name } } }' } })
    expect(res.json().data.__type.fields.map((field: { name: string }) => field.name).sort()).toEqual(Object.keys(GRAPHQL).sort())
  })

  it('answers each write alike on both stores, never 5xx, and stores exactly what the successes answered', async () => {
    const restOps = Object.entries(REST).map(([route, op]): [string, Operation] => {
      const schema = REST_ROUTES.get(route)
      return [route, schema === undefined ? op : { ...op, schema }]
    })
    const ops = new Map<string, Operation>([...restOps, ...Object.entries(GRAPHQL)])
    let requests = 0
    const outcomesSeen = new Map<string, number>()
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(commandsFor(restOps), commandsFor(Object.entries(GRAPHQL))), { minLength: 1, maxLength: 10 }), async (commands) => {
        for (const command of commands) {
          const op = ops.get(command.op)!
          const outcomes: Outcome[] = []
          for (const side of sides) {
            outcomes.push(await (op.graphql === undefined ? runRest(side, op, command) : runGraphql(side, op, command)))
            requests++
          }
          const seen = op.graphql === undefined ? String(outcomes[0]!.status) : `GraphQL ${outcomes[0]!.errors?.join('+') ?? outcomes[0]!.error?.code ?? 'ok'}`
          outcomesSeen.set(seen, (outcomesSeen.get(seen) ?? 0) + 1)
          for (const outcome of outcomes.slice(1)) expect(outcome, `${command.op} (${command.body?.breakage ?? 'no body'}): postgres vs sqlite`).toEqual(outcomes[0])
        }
        for (const side of sides) await expectStoredAsAnswered(side)
      }),
      fuzzRuns(150),
    )
    const mix = [...outcomesSeen].sort(([a], [b]) => a.localeCompare(b)).map(([outcome, n]) => `${outcome}: ${n}`).join(', ')
    console.info(`fuzzed writes: ${requests} requests on ${sides.map((side) => side.store).join(' and ')}, none 5xx (per store: ${mix})`)
  })
})
