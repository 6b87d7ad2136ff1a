// A user's albums over REST: anyone reads them; the owner or an admin writes; the collection
// conventions (filters, sort, pages and cursors, select, include) and validators as every other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { albumPath, createFactories, type Factories } from '../helpers/factories.js'

let t: TestApp
let make: Factories
beforeAll(async () => {
  t = await buildTestApp()
  make = createFactories(t)
})
afterAll(() => t.close())

const idsOf = (body: { data: { id: number }[] }) => body.data.map((item) => item.id)

describe('albums', () => {
  it('the owner creates an album: 201, Location, and the same album at that address', async () => {
    const res = await t.request({ method: 'POST', url: `/api/v2/users/${t.bob.id}/albums`, token: t.tokens.bob, json: { title: 'Holidays' } })
    expect(res.statusCode).toBe(201)
    const { data } = res.json()
    expect(Object.keys(data)).toEqual(['id', 'userId', 'title', 'createdAt', 'updatedAt'])
    expect(data).toMatchObject({ userId: t.bob.id, title: 'Holidays' })
    expect(res.headers.location).toBe(`/api/v2/users/${t.bob.id}/albums/${data.id}`)
    expect((await t.request({ method: 'GET', url: res.headers.location })).json().data).toEqual(data)
  })

  it('refuses a blank title and unknown fields (422, one detail each)', async () => {
    const url = `/users/${t.bob.id}/albums`
    const blank = await t.request({ method: 'POST', url, token: t.tokens.bob, json: { title: ' \u200b ' } })
    expect(blank.statusCode).toBe(422)
    expect(blank.json().error.details.map((d: { field: string }) => d.field)).toEqual(['title'])
    const unknown = await t.request({ method: 'POST', url, token: t.tokens.bob, json: { title: 'x', userId: t.alice.id } })
    expect(unknown.statusCode).toBe(422)
    expect(unknown.json().error.details).toEqual([{ field: 'userId', message: 'is not a known field' }])
  })

  it('everyone reads; only the owner or an admin writes', async () => {
    const album = await make.album(t.bob)
    const url = `/users/${t.bob.id}/albums/${album.id}`
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(200)
    expect((await t.request({ method: 'POST', url: `/users/${t.bob.id}/albums`, json: { title: 'x' } })).statusCode).toBe(401)
    expect((await t.request({ method: 'POST', url: `/users/${t.bob.id}/albums`, token: t.tokens.alice, json: { title: 'x' } })).statusCode).toBe(403)
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.alice, json: { title: 'Mine now' } })).statusCode).toBe(403)
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.alice })).statusCode).toBe(403)
    expect((await t.request({ method: 'PATCH', url, json: { title: 'x' } })).statusCode).toBe(401)
    const renamed = await t.request({ method: 'PATCH', url, token: t.tokens.admin, json: { title: 'Renamed by an admin' } })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json().data).toMatchObject({ id: album.id, userId: t.bob.id, title: 'Renamed by an admin' })
    const forBob = await t.request({ method: 'POST', url: `/users/${t.bob.id}/albums`, token: t.tokens.admin, json: { title: 'Made by an admin' } })
    expect(forBob.statusCode).toBe(201)
    expect(forBob.json().data.userId).toBe(t.bob.id)
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.bob })).statusCode).toBe(204)
    expect((await t.request({ method: 'GET', url })).statusCode).toBe(404)
  })

  it('an album under another user, under a missing user, or by an id that names nothing is 404; PUT is 405', async () => {
    const album = await make.album(t.bob)
    expect((await t.request({ method: 'GET', url: `/users/${t.alice.id}/albums/${album.id}` })).statusCode).toBe(404)
    const elsewhere = await t.request({ method: 'PATCH', url: `/users/${t.alice.id}/albums/${album.id}`, token: t.tokens.admin, json: { title: 'x' } })
    expect(elsewhere.statusCode).toBe(404)
    expect(elsewhere.json().error.code).toBe('NOT_FOUND')
    expect((await t.request({ method: 'GET', url: '/users/999999/albums' })).statusCode).toBe(404)
    expect((await t.request({ method: 'POST', url: '/users/999999/albums', token: t.tokens.admin, json: { title: 'x' } })).statusCode).toBe(404)
    for (const id of ['999999', 'abc', '0', '1.5']) expect((await t.request({ method: 'GET', url: `/users/${t.bob.id}/albums/${id}` })).statusCode).toBe(404)
    const put = await t.request({ method: 'PUT', url: `/users/${t.bob.id}/albums/${album.id}`, token: t.tokens.bob, json: { title: 'x' } })
    expect(put.statusCode).toBe(405)
  })

  it('filters, sorts, searches, pages by cursor and selects fields', async () => {
    const owner = await make.user()
    const made = []
    for (const title of ['Cats', 'Bridges', 'Autumn', 'Bicycles']) made.push(await make.album(owner, { title }))
    const base = `/api/v1/users/${owner.id}/albums`
    const get = async (query: string) => (await t.request({ method: 'GET', url: `${base}?${query}` })).json()
    expect(idsOf(await get('sort=title'))).toEqual([made[2]!.id, made[3]!.id, made[1]!.id, made[0]!.id])
    expect(idsOf(await get('sort=-id&limit=2'))).toEqual([made[3]!.id, made[2]!.id])
    expect(idsOf(await get('title=Bridges'))).toEqual([made[1]!.id])
    expect(idsOf(await get('q=bi'))).toEqual([made[3]!.id])
    expect((await get('limit=3&sort=title&cursor=nonsense')).error.code).toBe('BAD_REQUEST')
    const page1 = (await t.request({ method: 'GET', url: `/api/v2${base.slice('/api/v1'.length)}?limit=3&sort=title` })).json()
    expect(page1.meta.pagination.hasMore).toBe(true)
    const page2 = (
      await t.request({ method: 'GET', url: `/api/v2${base.slice('/api/v1'.length)}?limit=3&sort=title&cursor=${page1.meta.pagination.nextCursor}` })
    ).json()
    expect([...idsOf(page1), ...idsOf(page2)]).toEqual([made[2]!.id, made[3]!.id, made[1]!.id, made[0]!.id])
    expect((await get('select=title&sort=id')).data[0]).toEqual({ id: made[0]!.id, title: 'Cats' })
    expect((await t.request({ method: 'GET', url: `${base}?sort=userId` })).statusCode).toBe(400)
    expect((await t.request({ method: 'GET', url: `${base}?colour=red` })).statusCode).toBe(400)
  })

  it('embeds its owner (include=user) and its newest photos (include=photos); a user embeds their albums (include=albums)', async () => {
    const owner = await make.user({ name: 'Ada' })
    const album = await make.album(owner, { title: 'Engines' })
    const photos = [await make.photo(album), await make.photo(album), await make.photo(album)]
    const one = (await t.request({ method: 'GET', url: `${albumPath(album)}?include=user,photos&photos.limit=2` })).json().data
    expect(one.user).toMatchObject({ id: owner.id, name: 'Ada' })
    expect(one.photos.map((photo: { id: number }) => photo.id)).toEqual([photos[2]!.id, photos[1]!.id])
    const list = (await t.request({ method: 'GET', url: `/api/v1/users/${owner.id}/albums?include=photos&select=title` })).json().data
    expect(list).toEqual([{ id: album.id, title: 'Engines', photos: [...photos].reverse() }])
    const user = (await t.request({ method: 'GET', url: `/api/v1/users/${owner.id}?include=albums` })).json().data
    expect(user.albums).toEqual([album])
    expect((await t.request({ method: 'GET', url: `${albumPath(album)}?include=comments` })).statusCode).toBe(400)
  })

  it('answers 304 to its ETag, and 412 to a write with a stale If-Match', async () => {
    const album = await make.album(t.bob, { title: 'Before' })
    const url = albumPath(album)
    const first = await t.request({ method: 'GET', url })
    const etag = first.headers.etag as string
    expect(etag).toMatch(/^W\//)
    expect((await t.request({ method: 'GET', url, headers: { 'if-none-match': etag } })).statusCode).toBe(304)
    const changed = await t.request({ method: 'PATCH', url, token: t.tokens.bob, headers: { 'if-match': etag }, json: { title: 'After' } })
    expect(changed.statusCode).toBe(200)
    const stale = await t.request({ method: 'PATCH', url, token: t.tokens.bob, headers: { 'if-match': etag }, json: { title: 'Again' } })
    expect(stale.statusCode).toBe(412)
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.bob, headers: { 'if-match': etag } })).statusCode).toBe(412)
    expect((await t.request({ method: 'GET', url })).json().data.title).toBe('After')
  })

  it("deleting an album deletes its photos; deleting a user deletes their albums and their albums' photos", async () => {
    const { user: owner, token } = await make.signedIn()
    const kept = await make.album(owner)
    const gone = await make.album(owner)
    const photo = await make.photo(gone)
    const other = await make.photo(kept)
    expect((await t.request({ method: 'DELETE', url: albumPath(gone), token })).statusCode).toBe(204)
    expect(await t.database.db.selectFrom('photos').select('id').where('id', '=', photo.id).execute()).toEqual([])
    expect((await t.request({ method: 'GET', url: `${albumPath(gone)}/photos` })).statusCode).toBe(404)
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${owner.id}`, token: t.tokens.admin })).statusCode).toBe(204)
    expect(await t.database.db.selectFrom('albums').select('id').where('id', '=', kept.id).execute()).toEqual([])
    expect(await t.database.db.selectFrom('photos').select('id').where('id', '=', other.id).execute()).toEqual([])
  })
})
