// The schema's docs list the `extensions.code` values each field can produce (graphql/error-codes.ts),
// and they are true: every root field lists codes of the catalogue, and for each field and code in
// the table below, the error is provoked for real and its code is both the one expected and one
// the field's description lists. A code a resolver produces but its description leaves out fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_CATALOGUE } from '../../src/errors.js'
import { codesInDescription, errorsLine, fieldDescription, GRAPHQL_REQUEST_CODES } from '../../src/graphql/error-codes.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { graphql } from '../helpers/graphql-client.js'

interface IntrospectedType {
  name: string
  description: string | null
  fields: { name: string; description: string | null }[] | null
}

type Caller = 'anonymous' | 'admin' | 'alice' | 'bob'

interface Case {
  /** `Type.field`, whose description must list `code`. */
  field: string
  code: string
  caller: Caller
  operation: string
  /** By name: a fixture's key in `ids`, or the value itself. */
  variables?: Record<string, unknown>
}

describe('the error codes in the GraphQL schema docs', () => {
  let t: TestApp
  const descriptions = new Map<string, string | null>()
  let types: IntrospectedType[] = []
  const ids = { alicePost: '', aliceDraft: '', aliceTodo: '', aliceAlbum: '', alicePhoto: '', bobComment: '', aliceComment: '', alice: '', bob: '', admin: '' }

  beforeAll(async () => {
    // One password set per caller per window: the second is RATE_LIMITED (createUser, updateUser).
    t = await buildTestApp({ PASSWORD_CHANGES_MAX: '1' })
    const make = createFactories(t)
    const post = await make.post(t.alice, { title: 'Open' })
    ids.alicePost = String(post.id)
    ids.aliceDraft = String((await make.draft(t.alice)).id)
    ids.aliceTodo = String((await make.todo(t.alice)).id)
    const album = await make.album(t.alice)
    ids.aliceAlbum = String(album.id)
    ids.alicePhoto = String((await make.photo(album)).id)
    ids.bobComment = String((await make.comment(post, t.bob)).id)
    ids.aliceComment = String((await make.comment(post, t.alice)).id)
    ids.alice = String(t.alice.id)
    ids.bob = String(t.bob.id)
    ids.admin = String(t.admin.id)
    const answer = await graphql(t, '{ __schema { types { name description fields { name description } } } }')
    expect(answer.body.errors).toBeUndefined()
    types = (answer.body.data as { __schema: { types: IntrospectedType[] } }).__schema.types
    for (const type of types) {
      descriptions.set(type.name, type.description)
      for (const field of type.fields ?? []) descriptions.set(`${type.name}.${field.name}`, field.description)
    }
  })
  afterAll(() => t.close())

  const isKnown = (code: string) => Object.hasOwn(ERROR_CATALOGUE, code) || (GRAPHQL_REQUEST_CODES as readonly string[]).includes(code)

  it('lists, on every Query, Mutation and Subscription field, codes of the catalogue', () => {
    const roots = types.filter((type) => ['Query', 'Mutation', 'Subscription'].includes(type.name))
    expect(roots).toHaveLength(3)
    for (const root of roots) {
      for (const field of root.fields ?? []) {
        const codes = codesInDescription(field.description)
        expect(codes, `${root.name}.${field.name}: ${field.description}`).not.toHaveLength(0)
        for (const code of codes) expect(isKnown(code), `${root.name}.${field.name} lists ${code}`).toBe(true)
      }
    }
  })

  it('refuses, when the SDL is built, a code the catalogue lacks: a typo fails the start', () => {
    expect(() => errorsLine({ NOT_FUOND: 'a typo' })).toThrow(/NOT_FUOND/)
    expect(() => errorsLine({})).toThrow()
    // @ts-expect-error -- the codes are typed by the catalogue too
    expect(() => fieldDescription('A field.', { CONFLICTED: 'a typo' })).toThrow(/CONFLICTED/)
    expect(codesInDescription(fieldDescription('A field.', { NOT_FOUND: 'none', CONFLICT: 'taken' }))).toEqual(['NOT_FOUND', 'CONFLICT'])
  })

  it('says the request-level codes once, on each root type, and on no field', () => {
    for (const root of ['Query', 'Mutation', 'Subscription']) {
      const codes = codesInDescription(descriptions.get(root))
      expect(codes).toEqual(expect.arrayContaining(['BAD_REQUEST', 'UNAUTHENTICATED', 'RATE_LIMITED', 'INTERNAL_ERROR', 'PERSISTED_QUERY_NOT_FOUND']))
      for (const code of codes) expect(isKnown(code), `${root} lists ${code}`).toBe(true)
    }
    const onFields = [...descriptions].filter(([name]) => name.includes('.')).flatMap(([, description]) => codesInDescription(description))
    expect(onFields).not.toContain('INTERNAL_ERROR')
    expect(onFields).not.toContain('PERSISTED_QUERY_NOT_FOUND')
  })

  const cases: Case[] = [
    { field: 'Query.user', code: 'NOT_FOUND', caller: 'anonymous', operation: '{ user(id: "999999") { id } }' },
    { field: 'Query.users', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ users(sort: "nope") { id } }' },
    { field: 'Query.usersPage', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ usersPage(limit: 0) { items { id } } }' },
    { field: 'Query.usersConnection', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ usersConnection(first: 1, last: 1) { totalCount } }' },
    { field: 'Query.post', code: 'NOT_FOUND', caller: 'bob', operation: 'query ($id: ID!) { post(id: $id) { id } }', variables: { id: 'aliceDraft' } },
    { field: 'Query.posts', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ posts(where: {userId: {eq: "x"}}) { id } }' },
    { field: 'Query.postsPage', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ postsPage(limit: 0) { items { id } } }' },
    { field: 'Query.postsConnection', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ postsConnection(first: 1, last: 1) { totalCount } }' },
    { field: 'Query.comment', code: 'NOT_FOUND', caller: 'anonymous', operation: '{ comment(id: "999999") { id } }' },
    { field: 'Query.comments', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ comments(sort: "content") { id } }' },
    { field: 'Query.commentsPage', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ commentsPage(page: 0) { items { id } } }' },
    { field: 'Query.commentsConnection', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ commentsConnection(before: "garbage") { totalCount } }' },
    { field: 'Query.todo', code: 'NOT_FOUND', caller: 'anonymous', operation: '{ todo(id: "999999") { id } }' },
    { field: 'Query.todos', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ todos(cursor: "garbage") { id } }' },
    { field: 'Query.todosPage', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ todosPage(fields: ["text"]) { items { id } } }' },
    { field: 'Query.todosConnection', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ todosConnection(last: 0) { totalCount } }' },
    { field: 'Query.album', code: 'NOT_FOUND', caller: 'anonymous', operation: '{ album(id: "999999") { id } }' },
    { field: 'Query.albums', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ albums(sort: "userId") { id } }' },
    { field: 'Query.albumsPage', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ albumsPage(limit: 0) { items { id } } }' },
    { field: 'Query.albumsConnection', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ albumsConnection(first: 1, last: 1) { totalCount } }' },
    { field: 'Query.photo', code: 'NOT_FOUND', caller: 'anonymous', operation: '{ photo(id: "nope") { id } }' },
    { field: 'Query.photos', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ photos(sort: "url") { id } }' },
    { field: 'Query.photosPage', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ photosPage(fields: ["url"]) { items { id } } }' },
    { field: 'Query.photosConnection', code: 'BAD_REQUEST', caller: 'anonymous', operation: '{ photosConnection(after: "garbage") { totalCount } }' },
    {
      field: 'User.albums',
      code: 'BAD_REQUEST',
      caller: 'anonymous',
      operation: 'query ($id: ID!) { user(id: $id) { albums(limit: 0) { id } } }',
      variables: { id: 'alice' },
    },
    {
      field: 'User.albumsConnection',
      code: 'BAD_REQUEST',
      caller: 'anonymous',
      operation: 'query ($id: ID!) { user(id: $id) { albumsConnection(first: 0) { totalCount } } }',
      variables: { id: 'alice' },
    },
    {
      field: 'Album.photos',
      code: 'BAD_REQUEST',
      caller: 'anonymous',
      operation: 'query ($id: ID!) { album(id: $id) { photos(page: 0) { id } } }',
      variables: { id: 'aliceAlbum' },
    },
    {
      field: 'Album.photosConnection',
      code: 'BAD_REQUEST',
      caller: 'anonymous',
      operation: 'query ($id: ID!) { album(id: $id) { photosConnection(before: "garbage") { totalCount } } }',
      variables: { id: 'aliceAlbum' },
    },
    {
      field: 'User.posts',
      code: 'BAD_REQUEST',
      caller: 'anonymous',
      operation: 'query ($id: ID!) { user(id: $id) { posts(limit: 0) { id } } }',
      variables: { id: 'alice' },
    },
    {
      field: 'User.postsConnection',
      code: 'BAD_REQUEST',
      caller: 'anonymous',
      operation: 'query ($id: ID!) { user(id: $id) { postsConnection(after: "garbage") { totalCount } } }',
      variables: { id: 'alice' },
    },
    {
      field: 'User.todos',
      code: 'BAD_REQUEST',
      caller: 'anonymous',
      operation: 'query ($id: ID!) { user(id: $id) { todos(page: 0) { id } } }',
      variables: { id: 'alice' },
    },
    {
      field: 'User.todosConnection',
      code: 'BAD_REQUEST',
      caller: 'anonymous',
      operation: 'query ($id: ID!) { user(id: $id) { todosConnection(first: 0) { totalCount } } }',
      variables: { id: 'alice' },
    },
    {
      field: 'User.comments',
      code: 'BAD_REQUEST',
      caller: 'anonymous',
      operation: 'query ($id: ID!) { user(id: $id) { comments(limit: -1) { id } } }',
      variables: { id: 'bob' },
    },
    {
      field: 'Post.comments',
      code: 'BAD_REQUEST',
      caller: 'anonymous',
      operation: 'query ($id: ID!) { post(id: $id) { comments(limit: 0) { id } } }',
      variables: { id: 'alicePost' },
    },
    {
      field: 'Post.commentsConnection',
      code: 'BAD_REQUEST',
      caller: 'anonymous',
      operation: 'query ($id: ID!) { post(id: $id) { commentsConnection(after: "x", before: "y") { totalCount } } }',
      variables: { id: 'alicePost' },
    },
    // Subscriptions are served on streams; over POST /graphql the field refuses.
    { field: 'Subscription.commentAdded', code: 'BAD_REQUEST', caller: 'alice', operation: 'subscription { commentAdded { id } }' },

    {
      field: 'Mutation.createUser',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation { createUser(input: {name: "N", email: "n@example.com"}) { id } }',
    },
    {
      field: 'Mutation.createUser',
      code: 'FORBIDDEN',
      caller: 'alice',
      operation: 'mutation { createUser(input: {name: "N", email: "n@example.com"}) { id } }',
    },
    {
      field: 'Mutation.createUser',
      code: 'VALIDATION_ERROR',
      caller: 'admin',
      operation: 'mutation { createUser(input: {name: "N", email: "not an address"}) { id } }',
    },
    {
      field: 'Mutation.createUser',
      code: 'CONFLICT',
      caller: 'admin',
      operation: 'mutation { createUser(input: {name: "N", email: "alice@example.com"}) { id } }',
    },
    // The admin's one password of the window goes to the first user; the second is refused.
    {
      field: 'Mutation.createUser',
      code: '',
      caller: 'admin',
      operation: 'mutation { createUser(input: {name: "P1", email: "p1@example.com", password: "a long passphrase"}) { id } }',
    },
    {
      field: 'Mutation.createUser',
      code: 'RATE_LIMITED',
      caller: 'admin',
      operation: 'mutation { createUser(input: {name: "P2", email: "p2@example.com", password: "a long passphrase"}) { id } }',
    },

    {
      field: 'Mutation.updateUser',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { updateUser(id: $id, input: {name: "N"}) { id } }',
      variables: { id: 'alice' },
    },
    { field: 'Mutation.updateUser', code: 'NOT_FOUND', caller: 'admin', operation: 'mutation { updateUser(id: "999999", input: {name: "N"}) { id } }' },
    {
      field: 'Mutation.updateUser',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { updateUser(id: $id, input: {name: "N"}) { id } }',
      variables: { id: 'alice' },
    },
    {
      field: 'Mutation.updateUser',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { updateUser(id: $id, input: {role: admin}) { id } }',
      variables: { id: 'bob' },
    },
    {
      field: 'Mutation.updateUser',
      code: 'VALIDATION_ERROR',
      caller: 'alice',
      operation: 'mutation ($id: ID!) { updateUser(id: $id, input: {name: ""}) { id } }',
      variables: { id: 'alice' },
    },
    {
      field: 'Mutation.updateUser',
      code: 'CONFLICT',
      caller: 'alice',
      operation: 'mutation ($id: ID!) { updateUser(id: $id, input: {email: "bob@example.com"}) { id } }',
      variables: { id: 'alice' },
    },
    {
      field: 'Mutation.updateUser',
      code: 'CONFLICT',
      caller: 'admin',
      operation: 'mutation ($id: ID!) { updateUser(id: $id, input: {role: user}) { id } }',
      variables: { id: 'admin' },
    },
    {
      field: 'Mutation.updateUser',
      code: '',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { updateUser(id: $id, input: {password: "a long passphrase"}) { id } }',
      variables: { id: 'bob' },
    },
    {
      field: 'Mutation.updateUser',
      code: 'RATE_LIMITED',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { updateUser(id: $id, input: {password: "another long passphrase"}) { id } }',
      variables: { id: 'bob' },
    },

    {
      field: 'Mutation.deleteUser',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { deleteUser(id: $id) }',
      variables: { id: 'bob' },
    },
    { field: 'Mutation.deleteUser', code: 'NOT_FOUND', caller: 'admin', operation: 'mutation { deleteUser(id: "999999") }' },
    { field: 'Mutation.deleteUser', code: 'FORBIDDEN', caller: 'bob', operation: 'mutation ($id: ID!) { deleteUser(id: $id) }', variables: { id: 'alice' } },
    { field: 'Mutation.deleteUser', code: 'CONFLICT', caller: 'admin', operation: 'mutation ($id: ID!) { deleteUser(id: $id) }', variables: { id: 'admin' } },

    {
      field: 'Mutation.createPost',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation { createPost(input: {title: "T", content: "C"}) { id } }',
    },
    { field: 'Mutation.createPost', code: 'VALIDATION_ERROR', caller: 'bob', operation: 'mutation { createPost(input: {title: "", content: "C"}) { id } }' },
    {
      field: 'Mutation.updatePost',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { updatePost(id: $id, input: {title: "T"}) { id } }',
      variables: { id: 'alicePost' },
    },
    {
      field: 'Mutation.updatePost',
      code: 'NOT_FOUND',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { updatePost(id: $id, input: {title: "T"}) { id } }',
      variables: { id: 'aliceDraft' },
    },
    {
      field: 'Mutation.updatePost',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { updatePost(id: $id, input: {title: "T"}) { id } }',
      variables: { id: 'alicePost' },
    },
    {
      field: 'Mutation.updatePost',
      code: 'VALIDATION_ERROR',
      caller: 'alice',
      operation: 'mutation ($id: ID!) { updatePost(id: $id, input: {title: ""}) { id } }',
      variables: { id: 'alicePost' },
    },
    {
      field: 'Mutation.deletePost',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { deletePost(id: $id) }',
      variables: { id: 'alicePost' },
    },
    { field: 'Mutation.deletePost', code: 'NOT_FOUND', caller: 'alice', operation: 'mutation { deletePost(id: "999999") }' },
    {
      field: 'Mutation.deletePost',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { deletePost(id: $id) }',
      variables: { id: 'alicePost' },
    },

    {
      field: 'Mutation.addComment',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { addComment(input: {postId: $id, content: "C"}) { id } }',
      variables: { id: 'alicePost' },
    },
    {
      field: 'Mutation.addComment',
      code: 'NOT_FOUND',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { addComment(input: {postId: $id, content: "C"}) { id } }',
      variables: { id: 'aliceDraft' },
    },
    {
      field: 'Mutation.addComment',
      code: 'VALIDATION_ERROR',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { addComment(input: {postId: $id, content: ""}) { id } }',
      variables: { id: 'alicePost' },
    },
    {
      field: 'Mutation.updateComment',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { updateComment(id: $id, input: {content: "C"}) { id } }',
      variables: { id: 'bobComment' },
    },
    { field: 'Mutation.updateComment', code: 'NOT_FOUND', caller: 'bob', operation: 'mutation { updateComment(id: "999999", input: {content: "C"}) { id } }' },
    {
      field: 'Mutation.updateComment',
      code: 'FORBIDDEN',
      caller: 'alice',
      operation: 'mutation ($id: ID!) { updateComment(id: $id, input: {content: "C"}) { id } }',
      variables: { id: 'bobComment' },
    },
    {
      field: 'Mutation.updateComment',
      code: 'VALIDATION_ERROR',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { updateComment(id: $id, input: {content: ""}) { id } }',
      variables: { id: 'bobComment' },
    },
    {
      field: 'Mutation.deleteComment',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { deleteComment(id: $id) }',
      variables: { id: 'bobComment' },
    },
    { field: 'Mutation.deleteComment', code: 'NOT_FOUND', caller: 'bob', operation: 'mutation { deleteComment(id: "999999") }' },
    {
      field: 'Mutation.deleteComment',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { deleteComment(id: $id) }',
      variables: { id: 'aliceComment' },
    },

    { field: 'Mutation.addTodo', code: 'UNAUTHENTICATED', caller: 'anonymous', operation: 'mutation { addTodo(text: "T") { id } }' },
    { field: 'Mutation.addTodo', code: 'VALIDATION_ERROR', caller: 'bob', operation: 'mutation { addTodo(text: "") { id } }' },

    // Bulk writes: the same rules per item, an item's errors named by its index, and the list's bounds.
    {
      field: 'Mutation.createPosts',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation { createPosts(input: [{title: "T", content: "C"}]) { id } }',
    },
    {
      field: 'Mutation.createPosts',
      code: 'VALIDATION_ERROR',
      caller: 'bob',
      operation: 'mutation { createPosts(input: [{title: "T", content: "C"}, {title: "", content: "C"}]) { id } }',
    },
    { field: 'Mutation.createPosts', code: 'BAD_REQUEST', caller: 'bob', operation: 'mutation { createPosts(input: []) { id } }' },
    {
      field: 'Mutation.createPosts',
      code: 'PAYLOAD_TOO_LARGE',
      caller: 'bob',
      operation: 'mutation ($input: [CreatePostInput!]!) { createPosts(input: $input) { id } }',
      variables: { input: Array.from({ length: 1001 }, () => ({ title: 'T', content: 'C' })) },
    },
    { field: 'Mutation.createAlbums', code: 'UNAUTHENTICATED', caller: 'anonymous', operation: 'mutation { createAlbums(input: [{title: "A"}]) { id } }' },
    { field: 'Mutation.createAlbums', code: 'VALIDATION_ERROR', caller: 'bob', operation: 'mutation { createAlbums(input: [{title: ""}]) { id } }' },
    { field: 'Mutation.addTodos', code: 'UNAUTHENTICATED', caller: 'anonymous', operation: 'mutation { addTodos(texts: ["T"]) { id } }' },
    { field: 'Mutation.addTodos', code: 'VALIDATION_ERROR', caller: 'bob', operation: 'mutation { addTodos(texts: ["T", ""]) { id } }' },
    {
      field: 'Mutation.addComments',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { addComments(input: [{postId: $id, content: "C"}]) { id } }',
      variables: { id: 'alicePost' },
    },
    {
      field: 'Mutation.addComments',
      code: 'VALIDATION_ERROR',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { addComments(input: [{postId: $id, content: ""}]) { id } }',
      variables: { id: 'alicePost' },
    },
    {
      field: 'Mutation.addComments',
      code: 'NOT_FOUND',
      caller: 'bob',
      operation: 'mutation { addComments(input: [{postId: "999999", content: "C"}]) { id } }',
    },
    {
      field: 'Mutation.createPhotos',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation:
        'mutation ($id: ID!) { createPhotos(input: [{albumId: $id, title: "P", url: "https://picsum.photos/seed/1/600/600", thumbnailUrl: "https://picsum.photos/seed/1/150/150"}]) { id } }',
      variables: { id: 'aliceAlbum' },
    },
    {
      field: 'Mutation.createPhotos',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation:
        'mutation ($id: ID!) { createPhotos(input: [{albumId: $id, title: "P", url: "https://picsum.photos/seed/1/600/600", thumbnailUrl: "https://picsum.photos/seed/1/150/150"}]) { id } }',
      variables: { id: 'aliceAlbum' },
    },
    {
      field: 'Mutation.createPhotos',
      code: 'NOT_FOUND',
      caller: 'bob',
      operation:
        'mutation { createPhotos(input: [{albumId: "999999", title: "P", url: "https://picsum.photos/seed/1/600/600", thumbnailUrl: "https://picsum.photos/seed/1/150/150"}]) { id } }',
    },
    {
      field: 'Mutation.createPhotos',
      code: 'VALIDATION_ERROR',
      caller: 'alice',
      operation:
        'mutation ($id: ID!) { createPhotos(input: [{albumId: $id, title: "", url: "https://picsum.photos/seed/1/600/600", thumbnailUrl: "https://picsum.photos/seed/1/150/150"}]) { id } }',
      variables: { id: 'aliceAlbum' },
    },
    {
      field: 'Mutation.updateTodo',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { updateTodo(id: $id, input: {text: "T"}) { id } }',
      variables: { id: 'aliceTodo' },
    },
    { field: 'Mutation.updateTodo', code: 'NOT_FOUND', caller: 'bob', operation: 'mutation { updateTodo(id: "999999", input: {text: "T"}) { id } }' },
    {
      field: 'Mutation.updateTodo',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { updateTodo(id: $id, input: {text: "T"}) { id } }',
      variables: { id: 'aliceTodo' },
    },
    {
      field: 'Mutation.updateTodo',
      code: 'VALIDATION_ERROR',
      caller: 'alice',
      operation: 'mutation ($id: ID!) { updateTodo(id: $id, input: {text: ""}) { id } }',
      variables: { id: 'aliceTodo' },
    },
    {
      field: 'Mutation.deleteTodo',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { deleteTodo(id: $id) }',
      variables: { id: 'aliceTodo' },
    },
    { field: 'Mutation.deleteTodo', code: 'NOT_FOUND', caller: 'bob', operation: 'mutation { deleteTodo(id: "999999") }' },
    {
      field: 'Mutation.deleteTodo',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { deleteTodo(id: $id) }',
      variables: { id: 'aliceTodo' },
    },
    { field: 'Mutation.createAlbum', code: 'UNAUTHENTICATED', caller: 'anonymous', operation: 'mutation { createAlbum(input: {title: "A"}) { id } }' },
    { field: 'Mutation.createAlbum', code: 'VALIDATION_ERROR', caller: 'bob', operation: 'mutation { createAlbum(input: {title: ""}) { id } }' },
    {
      field: 'Mutation.updateAlbum',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { updateAlbum(id: $id, input: {title: "A"}) { id } }',
      variables: { id: 'aliceAlbum' },
    },
    { field: 'Mutation.updateAlbum', code: 'NOT_FOUND', caller: 'bob', operation: 'mutation { updateAlbum(id: "999999", input: {title: "A"}) { id } }' },
    {
      field: 'Mutation.updateAlbum',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { updateAlbum(id: $id, input: {title: "A"}) { id } }',
      variables: { id: 'aliceAlbum' },
    },
    {
      field: 'Mutation.updateAlbum',
      code: 'VALIDATION_ERROR',
      caller: 'alice',
      operation: 'mutation ($id: ID!) { updateAlbum(id: $id, input: {title: ""}) { id } }',
      variables: { id: 'aliceAlbum' },
    },
    {
      field: 'Mutation.deleteAlbum',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { deleteAlbum(id: $id) }',
      variables: { id: 'aliceAlbum' },
    },
    { field: 'Mutation.deleteAlbum', code: 'NOT_FOUND', caller: 'bob', operation: 'mutation { deleteAlbum(id: "999999") }' },
    {
      field: 'Mutation.deleteAlbum',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { deleteAlbum(id: $id) }',
      variables: { id: 'aliceAlbum' },
    },
    {
      field: 'Mutation.createPhoto',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation:
        'mutation ($id: ID!) { createPhoto(input: {albumId: $id, title: "P", url: "https://picsum.photos/seed/1/600/600", thumbnailUrl: "https://picsum.photos/seed/1/150/150"}) { id } }',
      variables: { id: 'aliceAlbum' },
    },
    {
      field: 'Mutation.createPhoto',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation:
        'mutation ($id: ID!) { createPhoto(input: {albumId: $id, title: "P", url: "https://picsum.photos/seed/1/600/600", thumbnailUrl: "https://picsum.photos/seed/1/150/150"}) { id } }',
      variables: { id: 'aliceAlbum' },
    },
    {
      field: 'Mutation.createPhoto',
      code: 'NOT_FOUND',
      caller: 'bob',
      operation:
        'mutation { createPhoto(input: {albumId: "999999", title: "P", url: "https://picsum.photos/seed/1/600/600", thumbnailUrl: "https://picsum.photos/seed/1/150/150"}) { id } }',
    },
    {
      field: 'Mutation.createPhoto',
      code: 'VALIDATION_ERROR',
      caller: 'alice',
      operation:
        'mutation ($id: ID!) { createPhoto(input: {albumId: $id, title: "P", url: "javascript:alert(1)", thumbnailUrl: "https://picsum.photos/seed/1/150/150"}) { id } }',
      variables: { id: 'aliceAlbum' },
    },
    {
      field: 'Mutation.updatePhoto',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { updatePhoto(id: $id, input: {title: "P"}) { id } }',
      variables: { id: 'alicePhoto' },
    },
    { field: 'Mutation.updatePhoto', code: 'NOT_FOUND', caller: 'bob', operation: 'mutation { updatePhoto(id: "999999", input: {title: "P"}) { id } }' },
    {
      field: 'Mutation.updatePhoto',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { updatePhoto(id: $id, input: {title: "P"}) { id } }',
      variables: { id: 'alicePhoto' },
    },
    {
      field: 'Mutation.updatePhoto',
      code: 'VALIDATION_ERROR',
      caller: 'alice',
      operation: 'mutation ($id: ID!) { updatePhoto(id: $id, input: {url: "http://example.com/p.png"}) { id } }',
      variables: { id: 'alicePhoto' },
    },
    {
      field: 'Mutation.deletePhoto',
      code: 'UNAUTHENTICATED',
      caller: 'anonymous',
      operation: 'mutation ($id: ID!) { deletePhoto(id: $id) }',
      variables: { id: 'alicePhoto' },
    },
    { field: 'Mutation.deletePhoto', code: 'NOT_FOUND', caller: 'bob', operation: 'mutation { deletePhoto(id: "999999") }' },
    {
      field: 'Mutation.deletePhoto',
      code: 'FORBIDDEN',
      caller: 'bob',
      operation: 'mutation ($id: ID!) { deletePhoto(id: $id) }',
      variables: { id: 'alicePhoto' },
    },
  ]

  it('produces, for each field in the table, the expected code, and the field lists it', async () => {
    for (const { field, code, caller, operation, variables } of cases) {
      const listed = codesInDescription(descriptions.get(field))
      // A variable names a fixture's id, or is the value itself (a bulk write's list).
      const resolved = Object.fromEntries(
        Object.entries(variables ?? {}).map(([name, key]) => [name, typeof key === 'string' && key in ids ? ids[key as keyof typeof ids] : key]),
      )
      const token = caller === 'anonymous' ? undefined : t.tokens[caller]
      const answer = await graphql(t, operation, { variables: resolved, token })
      const produced = (answer.body.errors ?? []).map((error) => ({ code: error.extensions?.code, path: error.path?.join('.') }))
      if (code === '') {
        // A step that sets up the next case: it must succeed.
        expect(produced, `${field}: ${operation}`).toEqual([])
        continue
      }
      expect(produced, `${field}: ${operation}`).toHaveLength(1)
      expect(produced[0]?.code, `${field}: ${operation}`).toBe(code)
      expect(listed, `${field} does not list ${code}: ${descriptions.get(field)}`).toContain(code)
    }
  })

  it('covers every mutation and every code a field lists', () => {
    const mutations = types.find((type) => type.name === 'Mutation')?.fields?.map((field) => `Mutation.${field.name}`) ?? []
    const tried = new Set(cases.map((entry) => entry.field))
    for (const mutation of mutations) expect(tried, mutation).toContain(mutation)
    const listedAnywhere = new Set([...descriptions].filter(([name]) => name.includes('.')).flatMap(([, description]) => codesInDescription(description)))
    const provoked = new Set(cases.map((entry) => entry.code))
    // Not provoked here: SERVICE_UNAVAILABLE in a subscription's results (test/graphql/subscriptions.test.ts and fan-out.test.ts do).
    for (const code of listedAnywhere) if (code !== 'SERVICE_UNAVAILABLE') expect(provoked, code).toContain(code)
  })

  it('answers the request-level codes the root types list: a document that does not parse, a bad token, a mutation over GET, an unknown persisted query', async () => {
    const listed = codesInDescription(descriptions.get('Query'))
    const parse = await graphql(t, '{ user(id: ')
    const badToken = await graphql(t, '{ viewer { id } }', { token: 'not-a-token' })
    const overGet = await t.request({ method: 'GET', url: `/graphql?query=${encodeURIComponent('mutation { deleteTodo(id: "1") }')}` })
    const unknownHash = await t.request({
      method: 'POST',
      url: '/graphql',
      json: { extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } },
    })
    const codes = [parse.body, badToken.body, overGet.json(), unknownHash.json()].map(
      (body: { errors?: { extensions?: { code?: string } }[] }) => body.errors?.[0]?.extensions?.code,
    )
    expect(codes).toEqual(['BAD_REQUEST', 'UNAUTHENTICATED', 'METHOD_NOT_ALLOWED', 'PERSISTED_QUERY_NOT_FOUND'])
    for (const code of codes) expect(listed).toContain(code)
  })
})
