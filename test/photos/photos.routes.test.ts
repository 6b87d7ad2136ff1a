// The photos in an album over REST: anyone reads them; only the album's owner or an admin adds,
// changes or deletes them; the collection conventions (filters, sort, pages, select, include) and
// validators as every other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { albumPath, createFactories, type Factories, photoPath } from '../helpers/factories.js'

let t: TestApp
let make: Factories
beforeAll(async () => {
  t = await buildTestApp()
  make = createFactories(t)
})
afterAll(() => t.close())

const idsOf = (body: { data: { id: number }[] }) => body.data.map((item) => item.id)
const image = { url: 'https://picsum.photos/seed/7/600/600', thumbnailUrl: 'https://picsum.photos/seed/7/150/150' }

describe('photos', () => {
  it("the album's owner adds a photo: 201, Location, and the same photo at that address", async () => {
    const album = await make.album(t.bob)
    const res = await t.request({
      method: 'POST',
      url: `/api/v2/users/${t.bob.id}/albums/${album.id}/photos`,
      token: t.tokens.bob,
      json: { title: 'Pier', ...image },
    })
    expect(res.statusCode).toBe(201)
    const { data } = res.json()
    expect(Object.keys(data)).toEqual(['id', 'albumId', 'title', 'url', 'thumbnailUrl', 'createdAt', 'updatedAt'])
    expect(data).toMatchObject({ albumId: album.id, title: 'Pier', ...image })
    expect(res.headers.location).toBe(`/api/v2/users/${t.bob.id}/albums/${album.id}/photos/${data.id}`)
    expect((await t.request({ method: 'GET', url: res.headers.location })).json().data).toEqual(data)
  })

  it('refuses an address that is not https, a missing field and unknown fields (422, one detail each)', async () => {
    const album = await make.album(t.bob)
    const url = `${albumPath(album)}/photos`
    for (const bad of ['javascript:alert(1)', 'http://example.com/a.png', 'not a url']) {
      const res = await t.request({ method: 'POST', url, token: t.tokens.bob, json: { title: 'x', ...image, url: bad } })
      expect(res.statusCode).toBe(422)
      expect(res.json().error.details).toEqual([{ field: 'url', message: expect.any(String) }])
    }
    const missing = await t.request({ method: 'POST', url, token: t.tokens.bob, json: { title: 'x', url: image.url } })
    expect(missing.statusCode).toBe(422)
    expect(missing.json().error.details.map((d: { field: string }) => d.field)).toEqual(['thumbnailUrl'])
    const unknown = await t.request({ method: 'POST', url, token: t.tokens.bob, json: { title: 'x', ...image, albumId: 1 } })
    expect(unknown.statusCode).toBe(422)
    expect(unknown.json().error.details).toEqual([{ field: 'albumId', message: 'is not a known field' }])
  })

  it("everyone reads; only the album's owner or an admin writes", async () => {
    const album = await make.album(t.bob)
    const photo = await make.photo(album)
    const url = photoPath(album, photo)
    const collection = `${albumPath(album)}/photos`
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(200)
    expect((await t.request({ method: 'GET', url: collection })).statusCode).toBe(200)
    expect((await t.request({ method: 'POST', url: collection, json: { title: 'x', ...image } })).statusCode).toBe(401)
    expect((await t.request({ method: 'POST', url: collection, token: t.tokens.alice, json: { title: 'x', ...image } })).statusCode).toBe(403)
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.alice, json: { title: 'Mine' } })).statusCode).toBe(403)
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.alice })).statusCode).toBe(403)
    expect((await t.request({ method: 'DELETE', url })).statusCode).toBe(401)
    const byAdmin = await t.request({ method: 'POST', url: collection, token: t.tokens.admin, json: { title: 'By an admin', ...image } })
    expect(byAdmin.statusCode).toBe(201)
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.admin, json: { title: 'Renamed' } })).json().data.title).toBe('Renamed')
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.bob })).statusCode).toBe(204)
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(404)
  })

  it('a photo under another album, another user, a missing album or by an id that names nothing is 404; PUT is 405', async () => {
    const album = await make.album(t.bob)
    const other = await make.album(t.bob)
    const photo = await make.photo(album)
    expect((await t.request({ method: 'GET', url: `${albumPath(other)}/photos/${photo.id}` })).statusCode).toBe(404)
    expect((await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/albums/${album.id}/photos/${photo.id}` })).statusCode).toBe(404)
    expect((await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/albums/${album.id}/photos` })).statusCode).toBe(404)
    const missing = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.bob.id}/albums/999999/photos`,
      token: t.tokens.admin,
      json: { title: 'x', ...image },
    })
    expect([missing.statusCode, missing.json().error.message]).toEqual([404, 'Album not found'])
    const elsewhere = await t.request({ method: 'PATCH', url: `${albumPath(other)}/photos/${photo.id}`, token: t.tokens.admin, json: { title: 'x' } })
    expect([elsewhere.statusCode, elsewhere.json().error.message]).toEqual([404, 'Photo not found'])
    for (const id of ['999999', 'abc', '-1']) expect((await t.request({ method: 'GET', url: `${albumPath(album)}/photos/${id}` })).statusCode).toBe(404)
    const put = await t.request({ method: 'PUT', url: photoPath(album, photo), token: t.tokens.bob, json: { title: 'x', ...image } })
    expect(put.statusCode).toBe(405)
  })

  it('filters, sorts, searches, pages and selects fields; url and thumbnailUrl neither filter nor sort', async () => {
    const album = await make.album(t.alice)
    const made = []
    for (const title of ['Harbour', 'Gull', 'Lighthouse']) made.push(await make.photo(album, { title }))
    const base = `${albumPath(album)}/photos`
    const get = async (query: string) => (await t.request({ method: 'GET', url: `${base}?${query}` })).json()
    expect(idsOf(await get('sort=-title'))).toEqual([made[2]!.id, made[0]!.id, made[1]!.id])
    expect(idsOf(await get('title=Gull'))).toEqual([made[1]!.id])
    expect(idsOf(await get('q=house'))).toEqual([made[2]!.id])
    const page2 = await get('limit=2&page=2')
    expect([idsOf(page2), page2.meta.pagination]).toMatchObject([[made[2]!.id], { page: 2, limit: 2, total: 3, pages: 2 }])
    expect((await get('select=url&sort=id')).data[0]).toEqual({ id: made[0]!.id, url: made[0]!.url })
    expect((await t.request({ method: 'GET', url: `${base}?url=${encodeURIComponent(made[0]!.url)}` })).statusCode).toBe(400)
    expect((await t.request({ method: 'GET', url: `${base}?sort=thumbnailUrl` })).statusCode).toBe(400)
  })

  it('embeds its album (include=album); json-server words work here too', async () => {
    const album = await make.album(t.alice, { title: 'Coast' })
    const photo = await make.photo(album, { title: 'Dunes' })
    const one = (await t.request({ method: 'GET', url: `${photoPath(album, photo)}?include=album` })).json().data
    expect(one).toEqual({ ...photo, album })
    const words = (await t.request({ method: 'GET', url: `${albumPath(album)}/photos?_expand=album&title=Dunes` })).json().data
    expect(words).toEqual([{ ...photo, album }])
    expect((await t.request({ method: 'GET', url: `${photoPath(album, photo)}?include=user` })).statusCode).toBe(400)
  })

  it('answers 304 to its ETag, and 412 to a write with a stale If-Match', async () => {
    const album = await make.album(t.bob)
    const photo = await make.photo(album, { title: 'Before' })
    const url = photoPath(album, photo)
    const etag = (await t.request({ method: 'GET', url })).headers.etag as string
    expect((await t.request({ method: 'GET', url, headers: { 'if-none-match': etag } })).statusCode).toBe(304)
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.bob, headers: { 'if-match': etag }, json: { title: 'After' } })).statusCode).toBe(200)
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.bob, headers: { 'if-match': etag }, json: { title: 'Again' } })).statusCode).toBe(412)
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.bob, headers: { 'if-match': etag } })).statusCode).toBe(412)
    expect((await t.request({ method: 'GET', url })).json().data.title).toBe('After')
  })
})
