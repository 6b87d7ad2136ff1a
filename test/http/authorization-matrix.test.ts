// Who may write what: every write operation, REST and GraphQL, tried as each of four callers —
// anonymous, another user, the owner of the object, an admin — from ONE table per API. A write
// route or mutation missing from its table fails the test, so a new one cannot ship without saying
// who may call it. Every try gets a world of its own (a fresh owner with a post, a comment, a
// todo, an album and a photo in it, fresh tokens), so a DELETE in one cell cannot change the next.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, type Factories } from '../helpers/factories.js'

type Actor = 'anonymous' | 'other' | 'owner' | 'admin'
const ACTORS: readonly Actor[] = ['anonymous', 'other', 'owner', 'admin']

interface World {
  ownerId: number
  ownerEmail: string
  postId: number
  commentId: number
  todoId: number
  albumId: number
  photoId: number
}

const OWNER_PASSWORD = 'matrix owner password'
let counter = 0
const unique = (what: string) => `${what}-${process.pid}-${++counter}`

interface RestCase {
  path(w: World): string
  body?(w: World): unknown
  /** The status each caller gets. */
  expect: Record<Actor, number>
  /** The owner needs a password (hashing one costs a tenth of a second: only where it is used). */
  password?: true
}

const PHOTO = { title: 'P', url: 'https://picsum.photos/seed/1/600/600', thumbnailUrl: 'https://picsum.photos/seed/1/150/150' }

const ownerOrAdmin = (ok: number): Record<Actor, number> => ({ anonymous: 401, other: 403, owner: ok, admin: ok })
const anySignedIn = (ok: number): Record<Actor, number> => ({ anonymous: 401, other: ok, owner: ok, admin: ok })

/** Every REST write route of /api/v1 (the other mounts run the same handlers), by its template. */
const REST: Record<string, RestCase> = {
  'POST /users': {
    path: () => '/users',
    body: () => ({ name: 'New', email: `${unique('new')}@example.com` }),
    expect: { anonymous: 401, other: 403, owner: 403, admin: 201 },
  },
  'PUT /users/:id': { path: (w) => `/users/${w.ownerId}`, body: (w) => ({ name: 'Replaced', email: w.ownerEmail }), expect: ownerOrAdmin(200) },
  'PATCH /users/:id': { path: (w) => `/users/${w.ownerId}`, body: () => ({ name: 'Renamed' }), expect: ownerOrAdmin(200) },
  'DELETE /users/:id': { path: (w) => `/users/${w.ownerId}`, expect: ownerOrAdmin(204) },
  'POST /users/:userId/posts': { path: (w) => `/users/${w.ownerId}/posts`, body: () => ({ title: 'T', content: 'C' }), expect: ownerOrAdmin(201) },
  'PUT /users/:userId/posts/:postId': {
    path: (w) => `/users/${w.ownerId}/posts/${w.postId}`,
    body: () => ({ title: 'T2', content: 'C2' }),
    expect: ownerOrAdmin(200),
  },
  'PATCH /users/:userId/posts/:postId': { path: (w) => `/users/${w.ownerId}/posts/${w.postId}`, body: () => ({ title: 'T3' }), expect: ownerOrAdmin(200) },
  'DELETE /users/:userId/posts/:postId': { path: (w) => `/users/${w.ownerId}/posts/${w.postId}`, expect: ownerOrAdmin(204) },
  // Anyone signed in may comment on a published post; the comment's author (here the owner) or an admin edits it.
  'POST /users/:userId/posts/:postId/comments': {
    path: (w) => `/users/${w.ownerId}/posts/${w.postId}/comments`,
    body: () => ({ content: 'Hi' }),
    expect: anySignedIn(201),
  },
  'PATCH /users/:userId/posts/:postId/comments/:commentId': {
    path: (w) => `/users/${w.ownerId}/posts/${w.postId}/comments/${w.commentId}`,
    body: () => ({ content: 'Edited' }),
    expect: ownerOrAdmin(200),
  },
  'DELETE /users/:userId/posts/:postId/comments/:commentId': {
    path: (w) => `/users/${w.ownerId}/posts/${w.postId}/comments/${w.commentId}`,
    expect: ownerOrAdmin(204),
  },
  'POST /users/:userId/todos': { path: (w) => `/users/${w.ownerId}/todos`, body: () => ({ text: 'Do' }), expect: ownerOrAdmin(201) },
  'PATCH /users/:userId/todos/:todoId': { path: (w) => `/users/${w.ownerId}/todos/${w.todoId}`, body: () => ({ completed: true }), expect: ownerOrAdmin(200) },
  'DELETE /users/:userId/todos/:todoId': { path: (w) => `/users/${w.ownerId}/todos/${w.todoId}`, expect: ownerOrAdmin(204) },
  // The top-level addresses: the parent named in the body, the same rights.
  'POST /posts': { path: () => '/posts', body: (w) => ({ userId: w.ownerId, title: 'T', content: 'C' }), expect: ownerOrAdmin(201) },
  'PUT /posts/:postId': { path: (w) => `/posts/${w.postId}`, body: () => ({ title: 'T2', content: 'C2' }), expect: ownerOrAdmin(200) },
  'PATCH /posts/:postId': { path: (w) => `/posts/${w.postId}`, body: () => ({ title: 'T3' }), expect: ownerOrAdmin(200) },
  'DELETE /posts/:postId': { path: (w) => `/posts/${w.postId}`, expect: ownerOrAdmin(204) },
  'POST /comments': { path: () => '/comments', body: (w) => ({ postId: w.postId, content: 'Hi' }), expect: anySignedIn(201) },
  'PATCH /comments/:commentId': { path: (w) => `/comments/${w.commentId}`, body: () => ({ content: 'Edited' }), expect: ownerOrAdmin(200) },
  'DELETE /comments/:commentId': { path: (w) => `/comments/${w.commentId}`, expect: ownerOrAdmin(204) },
  'POST /todos': { path: () => '/todos', body: (w) => ({ userId: w.ownerId, text: 'Do' }), expect: ownerOrAdmin(201) },
  'PATCH /todos/:todoId': { path: (w) => `/todos/${w.todoId}`, body: () => ({ completed: true }), expect: ownerOrAdmin(200) },
  'DELETE /todos/:todoId': { path: (w) => `/todos/${w.todoId}`, expect: ownerOrAdmin(204) },
  'POST /users/:userId/albums': { path: (w) => `/users/${w.ownerId}/albums`, body: () => ({ title: 'A' }), expect: ownerOrAdmin(201) },
  'PATCH /users/:userId/albums/:albumId': { path: (w) => `/users/${w.ownerId}/albums/${w.albumId}`, body: () => ({ title: 'A2' }), expect: ownerOrAdmin(200) },
  'DELETE /users/:userId/albums/:albumId': { path: (w) => `/users/${w.ownerId}/albums/${w.albumId}`, expect: ownerOrAdmin(204) },
  // A photo is its album's owner's to write: no one else adds to an album, not even a signed-in user.
  'POST /users/:userId/albums/:albumId/photos': {
    path: (w) => `/users/${w.ownerId}/albums/${w.albumId}/photos`,
    body: () => PHOTO,
    expect: ownerOrAdmin(201),
  },
  'PATCH /users/:userId/albums/:albumId/photos/:photoId': {
    path: (w) => `/users/${w.ownerId}/albums/${w.albumId}/photos/${w.photoId}`,
    body: () => ({ title: 'P2' }),
    expect: ownerOrAdmin(200),
  },
  'DELETE /users/:userId/albums/:albumId/photos/:photoId': {
    path: (w) => `/users/${w.ownerId}/albums/${w.albumId}/photos/${w.photoId}`,
    expect: ownerOrAdmin(204),
  },
  'POST /albums': { path: () => '/albums', body: (w) => ({ userId: w.ownerId, title: 'A' }), expect: ownerOrAdmin(201) },
  'PATCH /albums/:albumId': { path: (w) => `/albums/${w.albumId}`, body: () => ({ title: 'A2' }), expect: ownerOrAdmin(200) },
  'DELETE /albums/:albumId': { path: (w) => `/albums/${w.albumId}`, expect: ownerOrAdmin(204) },
  'POST /photos': { path: () => '/photos', body: (w) => ({ albumId: w.albumId, ...PHOTO }), expect: ownerOrAdmin(201) },
  'PATCH /photos/:photoId': { path: (w) => `/photos/${w.photoId}`, body: () => ({ title: 'P2' }), expect: ownerOrAdmin(200) },
  'DELETE /photos/:photoId': { path: (w) => `/photos/${w.photoId}`, expect: ownerOrAdmin(204) },
  // Signing in needs the credentials, not a token: whoever holds them gets a token.
  'POST /tokens': {
    path: () => '/tokens',
    body: (w) => ({ email: w.ownerEmail, password: OWNER_PASSWORD }),
    expect: { anonymous: 201, other: 201, owner: 201, admin: 201 },
    password: true,
  },
  // Each caller revokes the token it calls with (a fresh one).
  'DELETE /tokens/current': { path: () => '/tokens/current', expect: anySignedIn(204) },
}

interface GraphQLCase {
  query(w: World): string
  /** null: allowed (data, no errors); else the error code each caller gets. */
  expect: Record<Actor, null | 'UNAUTHENTICATED' | 'FORBIDDEN'>
}

const gqlOwnerOrAdmin = { anonymous: 'UNAUTHENTICATED', other: 'FORBIDDEN', owner: null, admin: null } as const
const gqlAnySignedIn = { anonymous: 'UNAUTHENTICATED', other: null, owner: null, admin: null } as const

/** Every mutation of the schema. */
const GRAPHQL: Record<string, GraphQLCase> = {
  createUser: {
    query: () => `mutation { createUser(input: { name: "New", email: "${unique('gql')}@example.com" }) { id } }`,
    expect: { anonymous: 'UNAUTHENTICATED', other: 'FORBIDDEN', owner: 'FORBIDDEN', admin: null },
  },
  updateUser: { query: (w) => `mutation { updateUser(id: "${w.ownerId}", input: { name: "Renamed" }) { id } }`, expect: gqlOwnerOrAdmin },
  deleteUser: { query: (w) => `mutation { deleteUser(id: "${w.ownerId}") }`, expect: gqlOwnerOrAdmin },
  // The caller's own post, comment or todo: anyone signed in.
  createPost: { query: () => 'mutation { createPost(input: { title: "T", content: "C" }) { id } }', expect: gqlAnySignedIn },
  createPosts: { query: () => 'mutation { createPosts(input: [{ title: "T", content: "C" }]) { id } }', expect: gqlAnySignedIn },
  updatePost: { query: (w) => `mutation { updatePost(id: "${w.postId}", input: { title: "T2" }) { id } }`, expect: gqlOwnerOrAdmin },
  deletePost: { query: (w) => `mutation { deletePost(id: "${w.postId}") }`, expect: gqlOwnerOrAdmin },
  addComment: { query: (w) => `mutation { addComment(input: { postId: "${w.postId}", content: "Hi" }) { id } }`, expect: gqlAnySignedIn },
  addComments: { query: (w) => `mutation { addComments(input: [{ postId: "${w.postId}", content: "Hi" }]) { id } }`, expect: gqlAnySignedIn },
  updateComment: { query: (w) => `mutation { updateComment(id: "${w.commentId}", input: { content: "Edited" }) { id } }`, expect: gqlOwnerOrAdmin },
  deleteComment: { query: (w) => `mutation { deleteComment(id: "${w.commentId}") }`, expect: gqlOwnerOrAdmin },
  addTodo: { query: () => 'mutation { addTodo(text: "Do") { id } }', expect: gqlAnySignedIn },
  addTodos: { query: () => 'mutation { addTodos(texts: ["Do"]) { id } }', expect: gqlAnySignedIn },
  updateTodo: { query: (w) => `mutation { updateTodo(id: "${w.todoId}", input: { completed: true }) { id } }`, expect: gqlOwnerOrAdmin },
  deleteTodo: { query: (w) => `mutation { deleteTodo(id: "${w.todoId}") }`, expect: gqlOwnerOrAdmin },
  createAlbum: { query: () => 'mutation { createAlbum(input: { title: "A" }) { id } }', expect: gqlAnySignedIn },
  createAlbums: { query: () => 'mutation { createAlbums(input: [{ title: "A" }]) { id } }', expect: gqlAnySignedIn },
  updateAlbum: { query: (w) => `mutation { updateAlbum(id: "${w.albumId}", input: { title: "A2" }) { id } }`, expect: gqlOwnerOrAdmin },
  deleteAlbum: { query: (w) => `mutation { deleteAlbum(id: "${w.albumId}") }`, expect: gqlOwnerOrAdmin },
  // In the owner's album: its owner or an admin.
  createPhoto: {
    query: (w) => `mutation { createPhoto(input: { albumId: "${w.albumId}", title: "P", url: "${PHOTO.url}", thumbnailUrl: "${PHOTO.thumbnailUrl}" }) { id } }`,
    expect: gqlOwnerOrAdmin,
  },
  createPhotos: {
    query: (w) =>
      `mutation { createPhotos(input: [{ albumId: "${w.albumId}", title: "P", url: "${PHOTO.url}", thumbnailUrl: "${PHOTO.thumbnailUrl}" }]) { id } }`,
    expect: gqlOwnerOrAdmin,
  },
  updatePhoto: { query: (w) => `mutation { updatePhoto(id: "${w.photoId}", input: { title: "P2" }) { id } }`, expect: gqlOwnerOrAdmin },
  deletePhoto: { query: (w) => `mutation { deletePhoto(id: "${w.photoId}") }`, expect: gqlOwnerOrAdmin },
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const restRoutes: string[] = []
let t: TestApp
let make: Factories
beforeAll(async () => {
  t = await buildTestApp(
    {},
    {
      onRoute: (route) => {
        // The 405 answers for methods a path lacks are registered as routes too; they are not writes.
        if (!route.url.startsWith('/api/v1/') || 'errorBody' in (route.config ?? {})) return
        for (const method of ([] as string[]).concat(route.method)) {
          if (WRITE_METHODS.has(method)) restRoutes.push(`${method} ${route.url.slice('/api/v1'.length)}`)
        }
      },
    },
  )
  make = createFactories(t)
})
afterAll(() => t.close())

/** A fresh owner (with a password if asked), a published post, a comment of theirs on it, a todo, an album and a photo in it. */
async function newWorld(withPassword = false): Promise<World> {
  const ownerEmail = `${unique('owner')}@example.com`
  const owner = await make.user({ name: 'Owner', email: ownerEmail, ...(withPassword ? { password: OWNER_PASSWORD } : {}) })
  const post = await make.post(owner)
  const comment = await make.comment(post, owner)
  const todo = await make.todo(owner)
  const album = await make.album(owner)
  const photo = await make.photo(album)
  return { ownerId: owner.id, ownerEmail, postId: post.id, commentId: comment.id, todoId: todo.id, albumId: album.id, photoId: photo.id }
}

async function tokenOf(actor: Actor, world: World): Promise<string | undefined> {
  switch (actor) {
    case 'anonymous':
      return undefined
    case 'other':
      return t.tokenFor(t.bob.id)
    case 'owner':
      return t.tokenFor(world.ownerId)
    case 'admin':
      return t.tokenFor(t.admin.id)
  }
}

describe('the authorization matrix', () => {
  it('has an entry for every REST write route, and none for a route that is gone', () => {
    expect(restRoutes.length).toBeGreaterThan(0)
    const routes = new Set(restRoutes)
    expect(
      [...routes].filter((route) => !(route in REST)),
      'write routes without a row in REST: say who may call each (a new feature adds its own)',
    ).toEqual([])
    expect(
      Object.keys(REST).filter((route) => !routes.has(route)),
      'rows of REST for routes that are gone',
    ).toEqual([])
  })

  it('has an entry for every GraphQL mutation, and none for a mutation that is gone', async () => {
    const res = await t.request({ method: 'POST', url: '/graphql', json: { query: '{ __type(name: "Mutation") { fields { name } } }' } })
    const names = (res.json().data.__type.fields as { name: string }[]).map((field) => field.name)
    expect(
      names.filter((name) => !(name in GRAPHQL)),
      'mutations without a row in GRAPHQL: say who may call each (a new feature adds its own)',
    ).toEqual([])
    expect(
      Object.keys(GRAPHQL).filter((name) => !names.includes(name)),
      'rows of GRAPHQL for mutations that are gone',
    ).toEqual([])
  })

  for (const [route, spec] of Object.entries(REST)) {
    it(`REST ${route}: ${ACTORS.map((actor) => `${actor} ${spec.expect[actor]}`).join(', ')}`, async () => {
      const method = route.split(' ')[0] as 'POST' | 'PUT' | 'PATCH' | 'DELETE'
      for (const actor of ACTORS) {
        const world = await newWorld(spec.password)
        const res = await t.request({ method, url: `/api/v1${spec.path(world)}`, token: await tokenOf(actor, world), json: spec.body?.(world) })
        expect(res.statusCode, `${actor}: ${res.body}`).toBe(spec.expect[actor])
        if (res.statusCode >= 400) expect(res.json().error.code).toBe(spec.expect[actor] === 401 ? 'UNAUTHENTICATED' : 'FORBIDDEN')
      }
    })
  }

  for (const [mutation, spec] of Object.entries(GRAPHQL)) {
    it(`GraphQL ${mutation}: ${ACTORS.map((actor) => `${actor} ${spec.expect[actor] ?? 'ok'}`).join(', ')}`, async () => {
      for (const actor of ACTORS) {
        const world = await newWorld()
        const res = await t.request({ method: 'POST', url: '/graphql', token: await tokenOf(actor, world), json: { query: spec.query(world) } })
        const body = res.json()
        const expected = spec.expect[actor]
        if (expected === null) {
          expect(body.errors, `${actor}: ${res.body}`).toBeUndefined()
          expect(body.data[mutation], actor).toBeTruthy()
        } else {
          expect(body.errors?.[0]?.extensions?.code, `${actor}: ${res.body}`).toBe(expected)
          expect(body.data?.[mutation] ?? null, actor).toBeNull()
        }
      }
    })
  }
})
