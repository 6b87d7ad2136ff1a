// Photos over GraphQL: one by its id (photo) and every photo (photos, photosPage, photosConnection),
// an album's photos, a photo's album, and the photo mutations, with REST's rights: anyone reads;
// the album's owner or an admin writes. (What every collection's list, page and connection share
// is test/graphql/collection-fields.test.ts's.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Album } from '../../src/albums/albums.schemas.js'
import type { Photo } from '../../src/photos/photos.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'

describe('photos over GraphQL', () => {
  let t: TestApp
  const albums: Album[] = []
  const photos: Photo[] = []

  beforeAll(async () => {
    t = await buildTestApp()
    const make = createFactories(t)
    albums.push(await make.album(t.alice, { title: 'Birds' }), await make.album(t.bob, { title: 'Boats' }))
    photos.push(await make.photo(albums[0]!, { title: 'Heron' }))
    photos.push(await make.photo(albums[1]!, { title: 'Ketch' }))
    photos.push(await make.photo(albums[0]!, { title: 'Avocet' }))
  })
  afterAll(() => t.close())

  it('lists every photo of every album to anyone: in photos, photosPage and photosConnection alike', async () => {
    const query = `{
      photos { title url thumbnailUrl album { title user { name } } }
      photosPage { items { title } pageInfo { total } }
      photosConnection { edges { node { title } } totalCount }
    }`
    const expected = [
      { title: 'Heron', url: photos[0]!.url, thumbnailUrl: photos[0]!.thumbnailUrl, album: { title: 'Birds', user: { name: 'Alice' } } },
      { title: 'Ketch', url: photos[1]!.url, thumbnailUrl: photos[1]!.thumbnailUrl, album: { title: 'Boats', user: { name: 'Bob' } } },
      { title: 'Avocet', url: photos[2]!.url, thumbnailUrl: photos[2]!.thumbnailUrl, album: { title: 'Birds', user: { name: 'Alice' } } },
    ]
    for (const token of [undefined, t.tokens.bob]) {
      const answer = await graphql(t, query, { token })
      expect(answer.body.errors).toBeUndefined()
      const data = answer.body.data as {
        photos: unknown[]
        photosPage: { items: { title: string }[]; pageInfo: { total: number } }
        photosConnection: { edges: { node: { title: string } }[]; totalCount: number }
      }
      expect(data.photos).toEqual(expected)
      expect(data.photosPage).toEqual({ items: expected.map(({ title }) => ({ title })), pageInfo: { total: 3 } })
      expect(data.photosConnection).toEqual({ edges: expected.map(({ title }) => ({ node: { title } })), totalCount: 3 })
    }
  })

  it("narrows to one album's photos by albumId, and by title, sort and search; an album's photos and their connection", async () => {
    const titles = async (args: string) => {
      const answer = await graphql(t, `{ photos(${args}) { title } }`)
      expect(answer.body.errors).toBeUndefined()
      return (answer.body.data?.photos as { title: string }[]).map((photo) => photo.title)
    }
    expect(await titles(`where: {albumId: {eq: "${albums[0]!.id}"}}`)).toEqual(['Heron', 'Avocet'])
    expect(await titles(`filter: {albumId: ["${albums[1]!.id}"]}`)).toEqual(['Ketch'])
    expect(await titles('sort: "title"')).toEqual(['Avocet', 'Heron', 'Ketch'])
    expect(await titles('q: "ero"')).toEqual(['Heron'])
    const nested = await graphql(t, '{ albums { title photos(limit: 1) { title } photosConnection(last: 1) { edges { node { title } } } } }')
    expect(nested.body).toEqual({
      data: {
        albums: [
          { title: 'Birds', photos: [{ title: 'Heron' }], photosConnection: { edges: [{ node: { title: 'Avocet' } }] } },
          { title: 'Boats', photos: [{ title: 'Ketch' }], photosConnection: { edges: [{ node: { title: 'Ketch' } }] } },
        ],
      },
    })
  })

  it('answers photo(id) to anyone, and NOT_FOUND for an id that names no photo', async () => {
    const query = 'query($id: ID!) { photo(id: $id) { title album { id } } }'
    expect((await graphql(t, query, { variables: { id: String(photos[1]!.id) } })).body).toEqual({
      data: { photo: { title: 'Ketch', album: { id: String(albums[1]!.id) } } },
    })
    for (const id of ['999999', 'nope']) {
      const missing = await graphql(t, query, { variables: { id } })
      expect([missing.body.data, codesOf(missing)]).toEqual([{ photo: null }, ['NOT_FOUND']])
    }
  })

  it("adds, changes and deletes a photo as the album's owner or an admin; refuses everyone else", async () => {
    const create = 'mutation($input: CreatePhotoInput!) { createPhoto(input: $input) { id title album { id } } }'
    const input = {
      albumId: String(albums[1]!.id),
      title: 'Yawl',
      url: 'https://picsum.photos/seed/9/600/600',
      thumbnailUrl: 'https://picsum.photos/seed/9/150/150',
    }
    expect(codesOf(await graphql(t, create, { variables: { input } }))).toEqual(['UNAUTHENTICATED'])
    expect(codesOf(await graphql(t, create, { token: t.tokens.alice, variables: { input } }))).toEqual(['FORBIDDEN'])
    expect(codesOf(await graphql(t, create, { token: t.tokens.bob, variables: { input: { ...input, url: 'ftp://example.com/x' } } }))).toEqual([
      'VALIDATION_ERROR',
    ])
    expect(codesOf(await graphql(t, create, { token: t.tokens.bob, variables: { input: { ...input, albumId: '999999' } } }))).toEqual(['NOT_FOUND'])
    const created = await graphql(t, create, { token: t.tokens.bob, variables: { input } })
    const photo = (created.body.data as { createPhoto: { id: string; title: string; album: { id: string } } }).createPhoto
    expect(photo).toMatchObject({ title: 'Yawl', album: { id: input.albumId } })
    const byAdmin = await graphql(t, create, { token: t.tokens.admin, variables: { input: { ...input, title: 'Sloop' } } })
    expect(byAdmin.body.errors).toBeUndefined()

    const update = 'mutation($id: ID!, $input: UpdatePhotoInput!) { updatePhoto(id: $id, input: $input) { title url } }'
    expect(codesOf(await graphql(t, update, { token: t.tokens.alice, variables: { id: photo.id, input: { title: 'Mine' } } }))).toEqual(['FORBIDDEN'])
    expect((await graphql(t, update, { token: t.tokens.admin, variables: { id: photo.id, input: { title: 'Yawl, 1930' } } })).body.data).toEqual({
      updatePhoto: { title: 'Yawl, 1930', url: input.url },
    })
    const remove = 'mutation($id: ID!) { deletePhoto(id: $id) }'
    expect(codesOf(await graphql(t, remove, { token: t.tokens.alice, variables: { id: photo.id } }))).toEqual(['FORBIDDEN'])
    expect((await graphql(t, remove, { token: t.tokens.bob, variables: { id: photo.id } })).body.data).toEqual({ deletePhoto: photo.id })
    expect(codesOf(await graphql(t, remove, { token: t.tokens.bob, variables: { id: photo.id } }))).toEqual(['NOT_FOUND'])
  })
})

describe('albums and photos over GraphQL, batched', () => {
  it('reads users { albums { photos { album { user } } } } in the same few statements however many there are', async () => {
    const statements: string[] = []
    let recording = false
    const t = await buildTestApp({}, { onQuery: (sql) => recording && statements.push(sql) })
    try {
      const make = createFactories(t)
      const query = '{ users(limit: 50) { name albums(limit: 10) { title photos(limit: 10) { title album { title user { name } } } } } }'
      const count = async () => {
        statements.length = 0
        recording = true
        const answer = await graphql(t, query)
        recording = false
        expect(answer.body.errors).toBeUndefined()
        const photos = (answer.body.data?.users as { albums: { photos: unknown[] }[] }[]).flatMap((user) => user.albums.flatMap((album) => album.photos))
        return { statements: statements.length, photos: photos.length }
      }
      await make.photo(await make.album(t.alice))
      const small = await count()
      for (let u = 0; u < 3; u++) {
        const owner = await make.user()
        for (let a = 0; a < 3; a++) {
          const album = await make.album(owner)
          for (let p = 0; p < 4; p++) await make.photo(album)
        }
      }
      const large = await count()
      expect([small.photos, large.photos]).toEqual([1, 37])
      expect(large.statements).toBe(small.statements)
    } finally {
      await t.close()
    }
  })
})
