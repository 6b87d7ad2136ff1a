// Albums over GraphQL: one by its id (album) and every album (albums, albumsPage, albumsConnection),
// a user's albums, an album's owner and photos, and the album mutations, with REST's rights: anyone
// reads; the owner or an admin writes. (What every collection's list, page and connection share is
// test/graphql/collection-fields.test.ts's.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Album } from '../../src/albums/albums.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, type Factories } from '../helpers/factories.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'

describe('albums over GraphQL', () => {
  let t: TestApp
  let make: Factories
  const made: Album[] = []

  beforeAll(async () => {
    t = await buildTestApp()
    make = createFactories(t)
    made.push(await make.album(t.alice, { title: 'Gardens' }))
    made.push(await make.album(t.bob, { title: 'Bridges' }))
    made.push(await make.album(t.alice, { title: 'Canals' }))
    await make.photo(made[0]!, { title: 'Roses' })
    await make.photo(made[0]!, { title: 'Tulips' })
  })
  afterAll(() => t.close())

  it('lists every album of every user to anyone: in albums, albumsPage and albumsConnection alike', async () => {
    const query = `{
      albums { title user { name } photos { title } }
      albumsPage { items { title } pageInfo { total } }
      albumsConnection { edges { node { title } } totalCount }
    }`
    const expected = [
      { title: 'Gardens', user: { name: 'Alice' }, photos: [{ title: 'Roses' }, { title: 'Tulips' }] },
      { title: 'Bridges', user: { name: 'Bob' }, photos: [] },
      { title: 'Canals', user: { name: 'Alice' }, photos: [] },
    ]
    for (const token of [undefined, t.tokens.bob, t.tokens.admin]) {
      const answer = await graphql(t, query, { token })
      expect(answer.body.errors).toBeUndefined()
      const data = answer.body.data as {
        albums: unknown[]
        albumsPage: { items: { title: string }[]; pageInfo: { total: number } }
        albumsConnection: { edges: { node: { title: string } }[]; totalCount: number }
      }
      expect(data.albums).toEqual(expected)
      expect(data.albumsPage).toEqual({ items: expected.map(({ title }) => ({ title })), pageInfo: { total: 3 } })
      expect(data.albumsConnection).toEqual({ edges: expected.map(({ title }) => ({ node: { title } })), totalCount: 3 })
    }
  })

  it("narrows to one user's albums by userId, and by title, sort and search", async () => {
    const titles = async (args: string) => {
      const answer = await graphql(t, `{ albums(${args}) { title } }`)
      expect(answer.body.errors).toBeUndefined()
      return (answer.body.data?.albums as { title: string }[]).map((album) => album.title)
    }
    expect(await titles(`where: {userId: {eq: "${t.alice.id}"}}`)).toEqual(['Gardens', 'Canals'])
    expect(await titles(`filter: {userId: ["${t.bob.id}"]}`)).toEqual(['Bridges'])
    expect(await titles('where: {userId: {eq: "999999"}}')).toEqual([])
    expect(await titles('sort: "title"')).toEqual(['Bridges', 'Canals', 'Gardens'])
    expect(await titles('q: "anal"')).toEqual(['Canals'])
  })

  it("reads a user's albums and their connection, batched for every user", async () => {
    const answer = await graphql(
      t,
      '{ users(limit: 5) { name albums(limit: 5) { title } albumsConnection(first: 1) { totalCount edges { node { title } } } } }',
    )
    expect(answer.body.errors).toBeUndefined()
    const users = (answer.body.data as { users: { name: string; albums: unknown[]; albumsConnection: unknown }[] }).users
    expect(users.find((user) => user.name === 'Alice')).toEqual({
      name: 'Alice',
      albums: [{ title: 'Gardens' }, { title: 'Canals' }],
      albumsConnection: { totalCount: 2, edges: [{ node: { title: 'Gardens' } }] },
    })
  })

  it('answers album(id) to anyone, and NOT_FOUND for an id that names no album', async () => {
    const query = 'query($id: ID!) { album(id: $id) { title user { name } photosConnection { totalCount } } }'
    expect((await graphql(t, query, { variables: { id: String(made[0]?.id) } })).body).toEqual({
      data: { album: { title: 'Gardens', user: { name: 'Alice' }, photosConnection: { totalCount: 2 } } },
    })
    for (const id of ['999999', 'nope']) {
      const missing = await graphql(t, query, { variables: { id } })
      expect([missing.body.data, codesOf(missing)]).toEqual([{ album: null }, ['NOT_FOUND']])
    }
  })

  it("creates an album for the caller; the owner or an admin changes and deletes it; others can't", async () => {
    const create = 'mutation($input: CreateAlbumInput!) { createAlbum(input: $input) { id title user { id } } }'
    expect(codesOf(await graphql(t, create, { variables: { input: { title: 'Anonymous' } } }))).toEqual(['UNAUTHENTICATED'])
    expect(codesOf(await graphql(t, create, { token: t.tokens.bob, variables: { input: { title: '' } } }))).toEqual(['VALIDATION_ERROR'])
    const created = await graphql(t, create, { token: t.tokens.bob, variables: { input: { title: 'Rivers' } } })
    const album = (created.body.data as { createAlbum: { id: string; title: string; user: { id: string } } }).createAlbum
    expect(album).toMatchObject({ title: 'Rivers', user: { id: String(t.bob.id) } })

    const update = 'mutation($id: ID!, $input: UpdateAlbumInput!) { updateAlbum(id: $id, input: $input) { title } }'
    expect(codesOf(await graphql(t, update, { token: t.tokens.alice, variables: { id: album.id, input: { title: 'Mine' } } }))).toEqual(['FORBIDDEN'])
    expect((await graphql(t, update, { token: t.tokens.admin, variables: { id: album.id, input: { title: 'Streams' } } })).body.data).toEqual({
      updateAlbum: { title: 'Streams' },
    })
    const remove = 'mutation($id: ID!) { deleteAlbum(id: $id) }'
    expect(codesOf(await graphql(t, remove, { token: t.tokens.alice, variables: { id: album.id } }))).toEqual(['FORBIDDEN'])
    expect((await graphql(t, remove, { token: t.tokens.bob, variables: { id: album.id } })).body.data).toEqual({ deleteAlbum: album.id })
    expect(codesOf(await graphql(t, remove, { token: t.tokens.bob, variables: { id: album.id } }))).toEqual(['NOT_FOUND'])
  })
})
