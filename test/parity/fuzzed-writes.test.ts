// Fuzzed writes, REST and GraphQL, sent to a SQLite and a PostgreSQL instance side by side.
//
// Each case is a short sequence of writes: a route or mutation, a caller, a target among the objects
// that exist, and a body made from the route's own schema (the one it validates with), either as it
// is or broken one way (schema-arbitrary.ts). After every request, on each store:
//   - the status is below 500 and an error is in the service's envelope (GraphQL: each error has a code);
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
import { CreateAlbumBody, UpdateAlbumBody } from '../../src/albums/albums.schemas.js'
import { CreateCommentBody, UpdateCommentBody } from '../../src/comments/comments.schemas.js'
import { CreatePhotoBody, UpdatePhotoBody } from '../../src/photos/photos.schemas.js'
import { CreatePostBody, UpdatePostBody } from '../../src/posts/posts.schemas.js'
import { CreateTodoBody, UpdateTodoBody } from '../../src/todos/todos.schemas.js'
import { CreateUserBody, UpdateUserBody } from '../../src/users/users.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { FUZZ_RUNS_FACTOR, fuzzRuns } from '../helpers/fuzz.js'
import { type BodyCase, brokenBodyOf, type JsonSchema } from '../helpers/schema-arbitrary.js'
import { postgresUrl } from '../helpers/services.js'
import type { TestStore } from '../helpers/test-store.js'
import { DEMO_COUNTS, type SeedCounts } from '../../src/seed/seed-database.js'

/** The resources the seed makes (a new one fails to typecheck here until the model knows its fields). */
type Table = keyof SeedCounts
type Row = Record<string, unknown> & { id: number }
type Model = Record<Table, Row[]>
type Actor = 'admin' | 'alice' | 'bob' | 'anonymous'

interface Side {
  store: TestStore
  t: TestApp
  /** What the successful writes answered, in the order the rows were made. */
  model: Model
  /** The three users' rows as made, to put back before each sequence. */
  baseUsers: Record<string, unknown>[]
}

/** The columns kept as JSON text (a user's address and company), compared as the objects they hold. */
const JSON_COLUMNS = new Set(['address', 'company'])

/** The columns compared, by their API names. */
const FIELDS: Record<Table, string[]> = {
  users: ['id', 'name', 'email', 'age', 'avatar', 'role', 'username', 'phone', 'website', 'address', 'company', 'createdAt', 'updatedAt'],
  posts: ['id', 'userId', 'title', 'content', 'status', 'publishedAt', 'createdAt', 'updatedAt'],
  comments: ['id', 'postId', 'authorId', 'email', 'content', 'createdAt', 'updatedAt'],
  todos: ['id', 'userId', 'text', 'completed', 'createdAt', 'updatedAt'],
  albums: ['id', 'userId', 'title', 'createdAt', 'updatedAt'],
  photos: ['id', 'albumId', 'title', 'url', 'thumbnailUrl', 'createdAt', 'updatedAt'],
}

/** A write: REST by route template, or a GraphQL mutation. */
interface Operation {
  table: Table
  kind: 'create' | 'update' | 'delete'
  /** The schema the body is made from (REST: the route's own, read when it is registered). */
  schema?: JsonSchema
  graphql?: GraphqlWrite
}

const USER =
  'id name email avatar age role username phone website address { street suite city zipcode geo { lat lng } } company { name catchPhrase bs } createdAt updatedAt'
const POST = 'id title content status publishedAt createdAt updatedAt author { id }'
const COMMENT = 'id content email createdAt updatedAt author { id } post { id }'
const TODO = 'id text completed createdAt updatedAt user { id }'
const ALBUM = 'id title createdAt updatedAt user { id }'
const PHOTO = 'id title url thumbnailUrl createdAt updatedAt album { id }'

/** A GraphQL object as the REST representation names it. */
function fromGraphql(table: Table, object: Record<string, unknown>): Row {
  const { id, author, post, user, album, ...rest } = object as {
    id: string
    author?: { id: string }
    post?: { id: string }
    user?: { id: string }
    album?: { id: string }
  }
  const row: Row = { ...rest, id: Number(id) }
  if (table === 'posts') row.userId = Number(author!.id)
  if (table === 'comments') Object.assign(row, { authorId: Number(author!.id), postId: Number(post!.id) })
  if (table === 'todos' || table === 'albums') row.userId = Number(user!.id)
  if (table === 'photos') row.albumId = Number(album!.id)
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
  'POST /users/:userId/albums': { table: 'albums', kind: 'create' },
  'PATCH /users/:userId/albums/:albumId': { table: 'albums', kind: 'update' },
  'DELETE /users/:userId/albums/:albumId': { table: 'albums', kind: 'delete' },
  'POST /users/:userId/albums/:albumId/photos': { table: 'photos', kind: 'create' },
  'PATCH /users/:userId/albums/:albumId/photos/:photoId': { table: 'photos', kind: 'update' },
  'DELETE /users/:userId/albums/:albumId/photos/:photoId': { table: 'photos', kind: 'delete' },
}
/**
 * Not fuzzed here: the tokens (no rows compared), and the top-level addresses of the items
 * (`/posts/:postId`, a create's parent in its body): they call the service functions their nested
 * twins call, which are fuzzed, and this model addresses every item under its parents
 * (test/http/top-level-routes.test.ts and the authorization matrix try them on both stores).
 */
const NOT_FUZZED = (route: string, routes: readonly string[]) => {
  if (['POST /tokens', 'DELETE /tokens/current'].includes(route)) return true
  // A top-level address: its first segment names a collection some other route reaches under a parent (`/users/:userId/posts`).
  const collection = route.split(' ')[1]?.split('/')[1] ?? ''
  return routes.some((other) => new RegExp(`/:[^/]+/${collection}(/|$)`).test(other))
}

/** A TypeBox schema read as the JSON schema it is. */
const schemaOf = (schema: TSchema) => schema as unknown as JsonSchema

/** Every mutation, with its variables made from the schema its resolver validates with. */
const GRAPHQL: Record<string, Operation> = {
  createUser: {
    table: 'users',
    kind: 'create',
    schema: schemaOf(CreateUserBody),
    graphql: gql('users', 'createUser', `mutation ($input: CreateUserInput!) { createUser(input: $input) { ${USER} } }`, (_t, body) => `{"input":${body}}`),
  },
  updateUser: {
    table: 'users',
    kind: 'update',
    schema: schemaOf(UpdateUserBody),
    graphql: gql('users', 'updateUser', `mutation ($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { ${USER} } }`, idAnd('input')),
  },
  deleteUser: { table: 'users', kind: 'delete', graphql: gql('users', 'deleteUser', 'mutation ($id: ID!) { deleteUser(id: $id) }', idOnly) },
  createPost: {
    table: 'posts',
    kind: 'create',
    schema: schemaOf(CreatePostBody),
    graphql: gql('posts', 'createPost', `mutation ($input: CreatePostInput!) { createPost(input: $input) { ${POST} } }`, (_t, body) => `{"input":${body}}`),
  },
  updatePost: {
    table: 'posts',
    kind: 'update',
    schema: schemaOf(UpdatePostBody),
    graphql: gql('posts', 'updatePost', `mutation ($id: ID!, $input: UpdatePostInput!) { updatePost(id: $id, input: $input) { ${POST} } }`, idAnd('input')),
  },
  deletePost: { table: 'posts', kind: 'delete', graphql: gql('posts', 'deletePost', 'mutation ($id: ID!) { deletePost(id: $id) }', idOnly) },
  addComment: {
    table: 'comments',
    kind: 'create',
    schema: schemaOf(CreateCommentBody),
    graphql: gql(
      'comments',
      'addComment',
      `mutation ($input: AddCommentInput!) { addComment(input: $input) { ${COMMENT} } }`,
      (target, body) => `{"input":${body.startsWith('{') ? `{"postId":${JSON.stringify(target.id)}${body.length > 2 ? ',' : ''}${body.slice(1)}` : body}}`,
    ),
  },
  updateComment: {
    table: 'comments',
    kind: 'update',
    schema: schemaOf(UpdateCommentBody),
    graphql: gql(
      'comments',
      'updateComment',
      `mutation ($id: ID!, $input: UpdateCommentInput!) { updateComment(id: $id, input: $input) { ${COMMENT} } }`,
      idAnd('input'),
    ),
  },
  deleteComment: { table: 'comments', kind: 'delete', graphql: gql('comments', 'deleteComment', 'mutation ($id: ID!) { deleteComment(id: $id) }', idOnly) },
  addTodo: {
    table: 'todos',
    kind: 'create',
    schema: schemaOf(CreateTodoBody),
    graphql: gql('todos', 'addTodo', `mutation ($text: String!) { addTodo(text: $text) { ${TODO} } }`, (_t, body) => body),
  },
  updateTodo: {
    table: 'todos',
    kind: 'update',
    schema: schemaOf(UpdateTodoBody),
    graphql: gql('todos', 'updateTodo', `mutation ($id: ID!, $input: UpdateTodoInput!) { updateTodo(id: $id, input: $input) { ${TODO} } }`, idAnd('input')),
  },
  deleteTodo: { table: 'todos', kind: 'delete', graphql: gql('todos', 'deleteTodo', 'mutation ($id: ID!) { deleteTodo(id: $id) }', idOnly) },
  createAlbum: {
    table: 'albums',
    kind: 'create',
    schema: schemaOf(CreateAlbumBody),
    graphql: gql(
      'albums',
      'createAlbum',
      `mutation ($input: CreateAlbumInput!) { createAlbum(input: $input) { ${ALBUM} } }`,
      (_t, body) => `{"input":${body}}`,
    ),
  },
  updateAlbum: {
    table: 'albums',
    kind: 'update',
    schema: schemaOf(UpdateAlbumBody),
    graphql: gql(
      'albums',
      'updateAlbum',
      `mutation ($id: ID!, $input: UpdateAlbumInput!) { updateAlbum(id: $id, input: $input) { ${ALBUM} } }`,
      idAnd('input'),
    ),
  },
  deleteAlbum: { table: 'albums', kind: 'delete', graphql: gql('albums', 'deleteAlbum', 'mutation ($id: ID!) { deleteAlbum(id: $id) }', idOnly) },
  createPhoto: {
    table: 'photos',
    kind: 'create',
    schema: schemaOf(CreatePhotoBody),
    graphql: gql(
      'photos',
      'createPhoto',
      `mutation ($input: CreatePhotoInput!) { createPhoto(input: $input) { ${PHOTO} } }`,
      (target, body) => `{"input":${body.startsWith('{') ? `{"albumId":${JSON.stringify(target.id)}${body.length > 2 ? ',' : ''}${body.slice(1)}` : body}}`,
    ),
  },
  updatePhoto: {
    table: 'photos',
    kind: 'update',
    schema: schemaOf(UpdatePhotoBody),
    graphql: gql(
      'photos',
      'updatePhoto',
      `mutation ($id: ID!, $input: UpdatePhotoInput!) { updatePhoto(id: $id, input: $input) { ${PHOTO} } }`,
      idAnd('input'),
    ),
  },
  deletePhoto: { table: 'photos', kind: 'delete', graphql: gql('photos', 'deletePhoto', 'mutation ($id: ID!) { deletePhoto(id: $id) }', idOnly) },
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
  /** The GraphQL id argument (the object's, or for addComment the post's, for createPhoto the album's). */
  id: string
  /** The users who may make this write besides an admin (none: admins only). */
  owners: number[]
  /** The row written, when it exists. */
  row?: Row
  /** Set when the request cannot reach a row: an id that names nothing, or another user's path to it. */
  wrongWay?: 'bogus-id' | 'other-parent'
}

const REST_ROUTES = new Map<string, JsonSchema | undefined>()

/**
 * A create's body is one item or an array of them (a bulk write): the fuzz sends one item, whose
 * model it keeps; bulk writes have tests of their own (test/collections/bulk-writes.test.ts).
 */
const oneItemOf = (schema: JsonSchema | undefined): JsonSchema | undefined =>
  (schema as { anyOf?: JsonSchema[] } | undefined)?.anyOf?.find((branch) => (branch as { type?: string }).type === 'object') ?? schema
const sides: Side[] = []

beforeAll(async () => {
  const withPostgres = (await postgresUrl()) !== undefined
  for (const store of withPostgres ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)) {
    const t = await buildTestApp(
      {},
      {
        store,
        onRoute: (route) => {
          if (store !== 'sqlite' || !route.url.startsWith('/api/v1/')) return
          for (const method of ([] as string[]).concat(route.method)) {
            if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) {
              REST_ROUTES.set(`${method} ${route.url.slice('/api/v1'.length)}`, oneItemOf(route.schema?.body as JsonSchema | undefined))
            }
          }
        },
      },
    )
    const baseUsers = await t.database.db.selectFrom('users').selectAll().orderBy('id').execute()
    sides.push({ store, t, model: baseModel(t), baseUsers })
  }
})
afterAll(async () => {
  for (const side of sides) await side.t.close()
})

const baseModel = (t: TestApp): Model => ({
  ...(Object.fromEntries(Object.keys(DEMO_COUNTS).map((table) => [table, []])) as unknown as Model),
  users: [t.admin, t.alice, t.bob],
})

/**
 * Puts the world back as it was made, so each sequence starts alike and a failing one replays and
 * shrinks from the same state: the three users, then through the API a fourth user, a published
 * post of alice's with a comment of bob's, a draft of bob's, a todo of alice's and an album of
 * hers with a photo in it.
 */
async function reset(side: Side) {
  const { db } = side.t.database
  for (const table of ['comments', 'posts', 'todos', 'photos', 'albums'] as const) await db.deleteFrom(table).execute()
  await db
    .deleteFrom('users')
    .where(
      'id',
      'not in',
      side.baseUsers.map((user) => user.id as number),
    )
    .execute()
  for (const { id, ...row } of side.baseUsers)
    await db
      .updateTable('users')
      .set(row)
      .where('id', '=', id as number)
      .execute()
  side.model = baseModel(side.t)
  const { t, model } = side
  const made = async (table: Table, url: string, token: string, json: unknown) => {
    const res = await t.request({ method: 'POST', url: `/api/v1${url}`, token, json })
    expect(res.statusCode, res.body).toBe(201)
    const row = res.json().data as Row
    apply(model, { table, kind: 'create' }, row)
    return row
  }
  await made('users', '/users', t.tokens.admin, { name: 'Dora', email: 'dora@example.com' })
  const published = await made('posts', `/users/${t.alice.id}/posts`, t.tokens.alice, { title: 'Out', content: 'There' })
  await made('comments', `/users/${t.alice.id}/posts/${published.id}/comments`, t.tokens.bob, { content: 'Nice' })
  await made('posts', `/users/${t.bob.id}/posts`, t.tokens.bob, { title: 'Not yet', content: 'Soon', status: 'draft' })
  await made('todos', `/users/${t.alice.id}/todos`, t.tokens.alice, { text: 'Write' })
  const album = await made('albums', `/users/${t.alice.id}/albums`, t.tokens.alice, { title: 'Trips' })
  await made('photos', `/users/${t.alice.id}/albums/${album.id}/photos`, t.tokens.alice, {
    title: 'Quay',
    url: 'https://picsum.photos/seed/1/600/600',
    thumbnailUrl: 'https://picsum.photos/seed/1/150/150',
  })
}

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
  const otherUser = (id: number) =>
    model.users.find((user) => user.id !== id && user.id === pickFrom(model.users, 1)?.id) ?? model.users.find((u) => u.id !== id)!
  const bogus = command.twist === 'bogus-id'
  const nothing = { id: command.bogus, owners: [], wrongWay: 'bogus-id' as const }
  const otherParent = command.twist === 'other-parent' ? { wrongWay: 'other-parent' as const } : {}
  switch (op.table) {
    case 'users': {
      if (op.kind === 'create') return { url: '/users', id: '', owners: [] }
      const user = pickFrom(users)
      if (user === undefined || bogus) return { ...nothing, url: `/users/${encodeURIComponent(command.bogus)}` }
      return { url: `/users/${user.id}`, id: String(user.id), owners: [user.id], row: user }
    }
    case 'posts':
    case 'todos':
    case 'albums': {
      if (op.kind === 'create') {
        // The caller's own collection, unless twisted to someone else's (an admin may write there).
        const own = model.users.find((user) => user.id === userIdOf(side, command.caller))
        const owner = command.twist === 'other-parent' || own === undefined ? pickFrom(model.users)! : own
        return { url: `/users/${owner.id}/${op.table}`, id: '', owners: [owner.id] }
      }
      const row = pickFrom(model[op.table])
      if (row === undefined || bogus) return { ...nothing, url: `/users/${pickFrom(model.users)!.id}/${op.table}/${encodeURIComponent(command.bogus)}` }
      const owner = row.userId as number
      const parent = command.twist === 'other-parent' ? otherUser(owner).id : owner
      return { url: `/users/${parent}/${op.table}/${row.id}`, id: String(row.id), owners: [owner], row, ...otherParent }
    }
    case 'comments': {
      const postOf = (id: unknown) => model.posts.find((post) => post.id === id)
      if (op.kind === 'create') {
        const post = pickFrom(model.posts)
        if (post === undefined || bogus) return { ...nothing, url: `/users/${side.t.alice.id}/posts/${encodeURIComponent(command.bogus)}/comments` }
        const parent = command.twist === 'other-parent' ? otherUser(post.userId as number).id : (post.userId as number)
        // Anyone signed in may comment on a post they can see: a draft only its author (and admins).
        const owners = model.users.map((user) => user.id).filter((id) => canSee(post, id))
        return { url: `/users/${parent}/posts/${post.id}/comments`, id: String(post.id), owners, row: post, ...otherParent }
      }
      const comment = pickFrom(model.comments)
      if (comment === undefined || bogus) {
        const post = pickFrom(model.posts)
        return { ...nothing, url: `/users/${Number(post?.userId ?? 1)}/posts/${Number(post?.id ?? 1)}/comments/${encodeURIComponent(command.bogus)}` }
      }
      const post = postOf(comment.postId)!
      const parent = command.twist === 'other-parent' ? otherUser(post.userId as number).id : (post.userId as number)
      // The author edits; the author or the post's author deletes; nobody but admins touches what they cannot see.
      const owners = (op.kind === 'delete' ? [comment.authorId as number, post.userId as number] : [comment.authorId as number]).filter((id) =>
        canSee(post, id),
      )
      return { url: `/users/${parent}/posts/${post.id}/comments/${comment.id}`, id: String(comment.id), owners, row: comment, ...otherParent }
    }
    case 'photos': {
      // The album's owner writes its photos (admins too): a photo has no owner of its own.
      if (op.kind === 'create') {
        const album = pickFrom(model.albums)
        if (album === undefined || bogus) return { ...nothing, url: `/users/${side.t.alice.id}/albums/${encodeURIComponent(command.bogus)}/photos` }
        const owner = album.userId as number
        const parent = command.twist === 'other-parent' ? otherUser(owner).id : owner
        return { url: `/users/${parent}/albums/${album.id}/photos`, id: String(album.id), owners: [owner], row: album, ...otherParent }
      }
      const photo = pickFrom(model.photos)
      if (photo === undefined || bogus) {
        const album = pickFrom(model.albums)
        return { ...nothing, url: `/users/${Number(album?.userId ?? 1)}/albums/${Number(album?.id ?? 1)}/photos/${encodeURIComponent(command.bogus)}` }
      }
      const owner = model.albums.find((album) => album.id === photo.albumId)!.userId as number
      const parent = command.twist === 'other-parent' ? otherUser(owner).id : owner
      return { url: `/users/${parent}/albums/${photo.albumId as number}/photos/${photo.id}`, id: String(photo.id), owners: [owner], row: photo, ...otherParent }
    }
  }
}

/** Drafts are seen by their author only (and admins). */
const canSee = (post: Row, userId: number) => post.status === 'published' || post.userId === userId

/** A success the caller was not allowed, or a role a caller who is not an admin changed. */
function expectAllowed(side: Side, op: Operation, command: Command, target: Target, written: Row | number) {
  const callerId = userIdOf(side, command.caller)
  const caller = side.model.users.find((user) => user.id === callerId)
  const what = `${command.op} as ${command.caller} (${side.store})`
  expect(caller, `${what}: succeeded without a signed-in caller`).toBeDefined()
  // Another user's path to the object, or an id that names nothing, never reaches it, whoever asks.
  expect(target.wrongWay, `${what}: succeeded through ${target.wrongWay}`).toBeUndefined()
  if (op.kind === 'create' && (op.table === 'posts' || op.table === 'todos' || op.table === 'albums') && typeof written === 'object') {
    expect(written.userId, `${what}: created elsewhere than the path (or the caller) says`).toBe(target.owners[0])
  }
  if (caller!.role === 'admin') return
  expect(target.owners, `${what}: succeeded on what the caller does not own`).toContain(caller!.id)
  if (op.table === 'users' && typeof written === 'object') {
    expect(written.role, `${what}: changed a role`).toBe(target.row?.role)
  }
  if (op.kind === 'create' && op.table !== 'users' && typeof written === 'object') {
    const owner =
      op.table === 'comments'
        ? written.authorId
        : op.table === 'photos'
          ? side.model.albums.find((album) => album.id === written.albumId)?.userId
          : written.userId
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
    const albums = gone('albums', (album) => album.userId === written)
    gone('photos', (photo) => albums.has(photo.albumId as number))
  } else if (op.table === 'posts') {
    gone('comments', (comment) => comment.postId === written)
  } else if (op.table === 'albums') {
    gone('photos', (photo) => photo.albumId === written)
  }
  gone(op.table, (row) => row.id === written)
}

/** The outcome of one write on one store: what is compared between the stores. */
interface Outcome {
  status: number
  /** The write was made. */
  ok?: true
  error?: { code: string; details?: unknown }
  errors?: string[]
  data?: unknown
}

/**
 * Ids differ between the stores (PostgreSQL's sequences move on a failed insert): each is compared
 * as the place of its row in that store's model. Instants differ too (clocks): only their presence.
 */
function comparable(side: Side, table: Table, row: Row): Record<string, unknown> {
  const place = (of: Table, id: unknown) => side.model[of].findIndex((existing) => existing.id === id)
  const tableOf: Record<string, Table> = { id: table, userId: 'users', authorId: 'users', postId: 'posts', albumId: 'albums' }
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => {
      const of = tableOf[key]
      return [key, of !== undefined ? place(of, value) : /At$/.test(key) ? value !== null : value]
    }),
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
  expect(
    keys.filter((key) => /password|hash|secret/i.test(key)),
    what,
  ).toEqual([])
}

async function runRest(side: Side, op: Operation, command: Command, target: Target): Promise<Outcome> {
  const method = command.op.split(' ')[0] as 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  const token = tokenOf(side, command.caller)
  const what = `${command.op} ${target.url} as ${command.caller}, body ${command.body?.breakage ?? 'none'} (${side.store})`
  const res = await side.t.app.inject({
    method,
    url: `/api/v1${target.url}`,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(command.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
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
  return { status: res.statusCode, ok: true, data: typeof written === 'object' ? comparable(side, op.table, written) : undefined }
}

async function runGraphql(side: Side, op: Operation, command: Command, target: Target): Promise<Outcome> {
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
  return { status: res.statusCode, ok: true, data: typeof written === 'object' ? comparable(side, op.table, written) : undefined }
}

/** What no write's answer shows and the model cannot hold: password hashes, and the tokens. */
async function secretsOf(side: Side) {
  const { db } = side.t.database
  const hashes = await db.selectFrom('users').select(['id', 'password_hash']).orderBy('id').execute()
  const tokens = await db.selectFrom('tokens').selectAll().orderBy('id').execute()
  return { hashes: new Map(hashes.map((row) => [row.id, row.password_hash])), tokens }
}

/** Whether the body (or the variables' input) names a password. */
function sendsPassword(command: Command): boolean {
  const payload = command.body?.payload
  if (typeof payload !== 'string') return false
  try {
    const body = JSON.parse(payload) as unknown
    return typeof body === 'object' && body !== null && Object.hasOwn(body, 'password')
  } catch {
    return false
  }
}

/**
 * Runs one command on one store, and checks around it what the model cannot: a refused write
 * changed no hash and no token; a successful one changed a hash only where it set a password, and
 * took tokens only with their deleted user; and a write that must succeed (an admin, a real target,
 * the path right, the body as its schema makes it) did, or met a conflict.
 */
async function runCommand(side: Side, op: Operation, command: Command): Promise<Outcome> {
  const target = targetOf(side, op, command)
  if (op.graphql !== undefined) {
    // GraphQL names objects by id alone: there is no path to twist.
    if (target.wrongWay === 'other-parent') delete target.wrongWay
    // createPost, addTodo and createAlbum write for the caller: there is no owner to name.
    if (op.kind === 'create' && (op.table === 'posts' || op.table === 'todos' || op.table === 'albums')) target.owners = [userIdOf(side, command.caller) ?? 0]
  }
  const callerIsAdmin = side.model.users.find((user) => user.id === userIdOf(side, command.caller))?.role === 'admin'
  const before = await secretsOf(side)
  const outcome = await (op.graphql === undefined ? runRest(side, op, command, target) : runGraphql(side, op, command, target))
  const after = await secretsOf(side)
  const what = `${command.op} as ${command.caller}, body ${command.body?.breakage ?? 'none'} (${side.store})`

  const users = new Set(side.model.users.map((user) => user.id))
  expect(after.tokens, `${what}: tokens`).toEqual(outcome.ok ? before.tokens.filter((token) => users.has(token.user_id)) : before.tokens)
  const changedHash = outcome.ok && op.table === 'users' && sendsPassword(command)
  for (const [id, hash] of after.hashes) {
    if (before.hashes.has(id) && !(changedHash && String(id) === target.id))
      expect(hash, `${what}: the password hash of user ${id}`).toBe(before.hashes.get(id))
    if (!before.hashes.has(id)) expect(hash !== null, `${what}: a new user's password hash`).toBe(changedHash)
  }

  const mustSucceed =
    callerIsAdmin && target.wrongWay === undefined && (op.kind === 'create' || target.row !== undefined) && (command.body?.breakage ?? 'none') === 'none'
  if (mustSucceed && !outcome.ok) {
    const conflict = outcome.status === 409 || (outcome.errors ?? []).includes('CONFLICT')
    expect(conflict, `${what}: a write that must succeed answered ${JSON.stringify(outcome)}`).toBe(true)
  }
  return outcome
}

/** Each store's rows, as the API names them, next to what the successful writes answered. */
async function expectStoredAsAnswered(side: Side) {
  for (const table of Object.keys(FIELDS) as Table[]) {
    const rows = await side.t.database.db.selectFrom(table).selectAll().orderBy('id').execute()
    const stored = rows.map((row) =>
      Object.fromEntries(
        FIELDS[table].map((field) => {
          const value = (row as Record<string, unknown>)[field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]
          if (JSON_COLUMNS.has(field) && typeof value === 'string') return [field, JSON.parse(value) as unknown]
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
    const routes = [...REST_ROUTES.keys()]
    expect(routes.filter((route) => !NOT_FUZZED(route, routes)).sort()).toEqual(Object.keys(REST).sort())
    const res = await sides[0]!.t.request({
      method: 'POST',
      url: '/graphql',
      json: { query: '{ __type(name: "Mutation") { fields { name args { type { kind ofType { kind } } } } } }' },
    })
    type Field = { name: string; args: { type: { kind: string; ofType: { kind: string } | null } }[] }
    // A mutation that takes a list is a bulk write, as REST's arrays: tested on its own.
    const takesList = (field: Field) => field.args.some(({ type }) => type.kind === 'LIST' || type.ofType?.kind === 'LIST')
    const mutations = (res.json().data.__type.fields as Field[]).filter((field) => !takesList(field))
    expect(mutations.map((field) => field.name).sort()).toEqual(Object.keys(GRAPHQL).sort())
  })

  it(
    'answers each write alike on both stores, never 5xx, and stores exactly what the successes answered',
    async () => {
      const restOps = Object.entries(REST).map(([route, op]): [string, Operation] => {
        const schema = REST_ROUTES.get(route)
        return [route, schema === undefined ? op : { ...op, schema }]
      })
      const ops = new Map<string, Operation>([...restOps, ...Object.entries(GRAPHQL)])
      let requests = 0
      const outcomesSeen = new Map<string, number>()
      const succeeded = new Set<string>()
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(commandsFor(restOps), commandsFor(Object.entries(GRAPHQL))), { minLength: 1, maxLength: 10 }), async (commands) => {
          for (const side of sides) await reset(side)
          for (const command of commands) {
            const op = ops.get(command.op)!
            const outcomes: Outcome[] = []
            for (const side of sides) {
              outcomes.push(await runCommand(side, op, command))
              requests++
            }
            if (outcomes[0]!.ok) succeeded.add(command.op)
            const seen =
              op.graphql === undefined ? String(outcomes[0]!.status) : `GraphQL ${outcomes[0]!.errors?.join('+') ?? outcomes[0]!.error?.code ?? 'ok'}`
            outcomesSeen.set(seen, (outcomesSeen.get(seen) ?? 0) + 1)
            for (const outcome of outcomes.slice(1))
              expect(outcome, `${command.op} (${command.body?.breakage ?? 'no body'}): postgres vs sqlite`).toEqual(outcomes[0])
          }
          for (const side of sides) await expectStoredAsAnswered(side)
        }),
        fuzzRuns(150),
      )
      // Refusing everything would pass the rest: every write went through at least once.
      expect([...ops.keys()].filter((name) => !succeeded.has(name))).toEqual([])
      const mix = [...outcomesSeen]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([outcome, n]) => `${outcome}: ${n}`)
        .join(', ')
      console.info(`fuzzed writes: ${requests} requests on ${sides.map((side) => side.store).join(' and ')}, none 5xx (per store: ${mix})`)
    },
    60_000 * FUZZ_RUNS_FACTOR,
  )
})
