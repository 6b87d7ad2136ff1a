import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, type Factories } from '../helpers/factories.js'

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let t: TestApp
let make: Factories
beforeAll(async () => {
  t = await buildTestApp()
  make = createFactories(t)
})
afterAll(() => t.close())

describe('reading users', () => {
  it('lists users in the collection envelope with page, limit, total and pages', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/users?limit=2' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    const body = res.json()
    expect(body.data.map((u: { id: number }) => u.id)).toEqual([t.admin.id, t.alice.id])
    expect(body.meta.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2, nextCursor: expect.any(String) })
    expect(body.meta.timestamp).toMatch(ISO_UTC)
  })

  it('serves the next page and an empty page past the end', async () => {
    const second = (await t.request({ method: 'GET', url: '/api/v1/users?limit=2&page=2' })).json()
    expect(second.data.map((u: { id: number }) => u.id)).toEqual([t.bob.id])
    const past = (await t.request({ method: 'GET', url: '/api/v1/users?limit=2&page=9' })).json()
    expect(past.data).toEqual([])
    expect(past.meta.pagination).toEqual({ page: 9, limit: 2, total: 3, pages: 2, nextCursor: null })
  })

  it('defaults to page 1 of 20 and caps the limit at 100', async () => {
    expect((await t.request({ method: 'GET', url: '/users' })).json().meta.pagination).toMatchObject({ page: 1, limit: 20 })
    expect((await t.request({ method: 'GET', url: '/users?limit=1000' })).json().meta.pagination.limit).toBe(100)
  })

  it.each(['page=0', 'page=-1', 'page=abc', 'limit=0', 'limit=2.5', 'page=1&page=2', 'colour=blue', 'age=old', 'sort=height'])(
    'answers 400 with details for the query %s',
    async (query) => {
      const res = await t.request({ method: 'GET', url: `/users?${query}` })
      expect(res.statusCode).toBe(400)
      const { error } = res.json()
      expect(error.code).toBe('BAD_REQUEST')
      expect(error.details[0].field).toBe(query.split('=')[0])
      expect(error.details[0].message).toEqual(expect.any(String))
    },
  )

  it('reads one user in the single envelope, with every field and no password', async () => {
    const res = await t.request({ method: 'GET', url: `/api/v1/users/${t.bob.id}` })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(Object.keys(body)).toEqual(['data', 'meta'])
    expect(body.data).toEqual({
      id: t.bob.id,
      name: 'Bob',
      email: 'bob@example.com',
      age: 41,
      avatar: null,
      role: 'user',
      username: null,
      phone: null,
      website: null,
      address: null,
      company: null,
      createdAt: expect.stringMatching(ISO_UTC),
      updatedAt: expect.stringMatching(ISO_UTC),
    })
  })

  it('never shows a password or its hash', async () => {
    const one = await t.request({ method: 'GET', url: `/users/${t.alice.id}` })
    const list = await t.request({ method: 'GET', url: '/users' })
    for (const text of [one.body, list.body]) {
      expect(text).not.toMatch(/password|scrypt/i)
    }
  })

  it.each(['abc', '0', '-1', '1.5', '01', '1e3', '99999999999', String(2 ** 31)])('answers 404 for the id %s', async (id) => {
    const res = await t.request({ method: 'GET', url: `/users/${id}` })
    expect(res.statusCode).toBe(404)
    expect(res.json().error.code).toBe('NOT_FOUND')
  })
})

describe('creating users', () => {
  it('lets an admin create a user: 201, Location and the created user', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      token: t.tokens.admin,
      json: { name: 'Carol', email: 'carol@example.com', age: 30, avatar: 'https://example.com/c.png' },
    })
    expect(res.statusCode).toBe(201)
    const { data } = res.json()
    expect(res.headers.location).toBe(`/api/v1/users/${data.id}`)
    expect(data).toMatchObject({ name: 'Carol', email: 'carol@example.com', age: 30, role: 'user' })
    const read = await t.request({ method: 'GET', url: res.headers.location })
    expect(read.json().data).toEqual(data)
  })

  it('answers 401 with a Bearer challenge to an anonymous caller', async () => {
    const res = await t.request({ method: 'POST', url: '/users', json: { name: 'X', email: 'x@example.com' } })
    expect(res.statusCode).toBe(401)
    expect(res.json().error.code).toBe('UNAUTHENTICATED')
    expect(res.headers['www-authenticate']).toBe('Bearer realm="threadline"')
  })

  it('answers 403 to a user who is not an admin', async () => {
    const res = await t.request({ method: 'POST', url: '/users', token: t.tokens.alice, json: { name: 'X', email: 'x@example.com' } })
    expect(res.statusCode).toBe(403)
    expect(res.json().error.code).toBe('FORBIDDEN')
  })

  it('answers 409 for an e-mail address already taken, whatever its case', async () => {
    const res = await t.request({ method: 'POST', url: '/users', token: t.tokens.admin, json: { name: 'B2', email: 'BOB@Example.com' } })
    expect(res.statusCode).toBe(409)
    expect(res.json().error).toEqual({
      code: 'CONFLICT',
      message: expect.any(String),
      details: [{ field: 'email', message: 'is already taken' }],
    })
  })

  it('answers 422 with one detail per problem, naming each field', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/users',
      token: t.tokens.admin,
      json: { name: '', email: 'not-an-email', age: 151, avatar: 'http://insecure.example.com/a.png', role: 'root', id: 7 },
    })
    expect(res.statusCode).toBe(422)
    const { error } = res.json()
    expect(error.code).toBe('VALIDATION_ERROR')
    const fields = error.details.map((d: { field: string }) => d.field).sort()
    expect(fields).toEqual(['age', 'avatar', 'email', 'id', 'name', 'role'])
  })

  it.each([
    [{ email: 'n@example.com' }, 'name', 'is required'],
    [{ name: 'N' }, 'email', 'is required'],
    [{ name: '   ', email: 'n@example.com' }, 'name', 'must not be blank or contain control or invalid characters'],
    [{ name: 'a\u0000b', email: 'n@example.com' }, 'name', 'must not be blank or contain control or invalid characters'],
    [{ name: 'a\ud800b', email: 'n@example.com' }, 'name', 'must not be blank or contain control or invalid characters'],
    [{ name: 'N', email: 'n@example.com', password: 'long enough \udfff' }, 'password', 'must not contain invalid characters'],
    [{ name: 'x'.repeat(101), email: 'n@example.com' }, 'name', 'must be at most 100 characters long'],
    [{ name: 'N', email: 'n@example.com', age: '30' }, 'age', 'must be an integer or null'],
    [{ name: 'N', email: 'n@example.com', age: 2.5 }, 'age', 'must be an integer or null'],
    [{ name: 'N', email: 'n@example.com', age: -1 }, 'age', 'must be at least 0'],
    [{ name: 'N', email: 'n@example.com', password: 'short' }, 'password', 'must be at least 8 characters long'],
    [{ name: 'N', email: 'n@example.com', createdAt: '2020-01-01T00:00:00.000Z' }, 'createdAt', 'is not a known field'],
  ])('refuses %j: %s %s', async (json, field, message) => {
    const res = await t.request({ method: 'POST', url: '/users', token: t.tokens.admin, json })
    expect(res.statusCode).toBe(422)
    expect(res.json().error.details).toContainEqual({ field, message })
  })

  it('lets an admin create another admin', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/users',
      token: t.tokens.admin,
      json: { name: 'Root Two', email: 'root2@example.com', role: 'admin' },
    })
    expect(res.statusCode).toBe(201)
    expect(res.json().data.role).toBe('admin')
  })
})

describe('replacing and changing users', () => {
  it('PUT replaces the whole user: optional fields not given become null', async () => {
    const { user, token } = await make.signedIn({ age: 50, avatar: 'https://example.com/d.png' })
    const res = await t.request({ method: 'PUT', url: `/users/${user.id}`, token, json: { name: 'Daniel', email: 'daniel@example.com' } })
    expect(res.statusCode).toBe(200)
    expect(res.json().data).toMatchObject({ id: user.id, name: 'Daniel', email: 'daniel@example.com', age: null, avatar: null, role: 'user' })
    expect(res.json().data.createdAt).toBe(user.createdAt)
  })

  it('PUT without name or email is 422', async () => {
    const res = await t.request({ method: 'PUT', url: `/users/${t.bob.id}`, token: t.tokens.bob, json: { name: 'Bob' } })
    expect(res.statusCode).toBe(422)
    expect(res.json().error.details).toEqual([{ field: 'email', message: 'is required' }])
  })

  it('PATCH changes only the fields given, and null clears an optional one', async () => {
    const { user, token } = await make.signedIn({ email: 'eve@example.com', age: 22 })
    const renamed = await t.request({ method: 'PATCH', url: `/users/${user.id}`, token, json: { name: 'Eve L.' } })
    expect(renamed.json().data).toMatchObject({ name: 'Eve L.', email: 'eve@example.com', age: 22 })
    const cleared = await t.request({ method: 'PATCH', url: `/users/${user.id}`, token, json: { age: null } })
    expect(cleared.json().data).toMatchObject({ name: 'Eve L.', age: null })
  })

  it("keeps a user's profile: written by the user, shown to anyone, an object replaced whole and cleared by null", async () => {
    const { user, token } = await make.signedIn({ email: 'prof@example.com' })
    const address = { street: 'Kulas Light', suite: 'Apt. 556', city: 'Gwenborough', zipcode: '92998-3874', geo: { lat: '-37.3159', lng: '81.1496' } }
    const company = { name: 'Romaguera-Crona', catchPhrase: 'Multi-layered client-server neural-net', bs: 'harness real-time e-markets' }
    const written = await t.request({
      method: 'PATCH',
      url: `/users/${user.id}`,
      token,
      // Keys in any order: shown in the schema's.
      json: {
        username: 'Bret',
        phone: '1-770-736-8031 x56442',
        website: 'hildegard.org',
        address: { geo: address.geo, zipcode: address.zipcode, city: address.city, suite: address.suite, street: address.street },
        company,
      },
    })
    expect(written.statusCode, written.body).toBe(200)
    const shown = (await t.request({ method: 'GET', url: `/users/${user.id}` })).json().data
    expect(shown).toMatchObject({ username: 'Bret', phone: '1-770-736-8031 x56442', website: 'hildegard.org', address, company })
    expect(Object.keys(shown.address)).toEqual(['street', 'suite', 'city', 'zipcode', 'geo'])
    // An address sent replaces the one there (a merge would keep the street).
    const moved = { street: 'Victor Plains', suite: 'Suite 879', city: 'Wisokyburgh', zipcode: '90566-7771', geo: { lat: '-43.9509', lng: '-34.4618' } }
    expect((await t.request({ method: 'PATCH', url: `/users/${user.id}`, token, json: { address: moved } })).json().data.address).toEqual(moved)
    const cleared = (await t.request({ method: 'PATCH', url: `/users/${user.id}`, token, json: { company: null, phone: null } })).json().data
    expect(cleared).toMatchObject({ username: 'Bret', company: null, phone: null, address: moved })
    // Another user may not write it.
    expect((await t.request({ method: 'PATCH', url: `/users/${user.id}`, token: t.tokens.bob, json: { username: 'x' } })).statusCode).toBe(403)
    // PUT: a profile left out becomes null.
    const replaced = await t.request({ method: 'PUT', url: `/users/${user.id}`, token, json: { name: 'Prof', email: 'prof@example.com' } })
    expect(replaced.json().data).toMatchObject({ username: null, phone: null, website: null, address: null, company: null })
  })

  it.each([
    [{ username: 'x'.repeat(101) }, 'username', 'must be at most 100 characters long'],
    [{ username: 'a\nb' }, 'username', 'must not be blank or contain control or invalid characters'],
    [{ address: { street: 'A', suite: 'B', city: 'C', zipcode: 'D' } }, 'address.geo', 'is required'],
    [{ address: { street: 'A', suite: 'B', city: 'C', zipcode: 'D', geo: { lat: '1', lng: '2' }, country: 'E' } }, 'address.country', 'is not a known field'],
    [{ company: { name: 'Co', catchPhrase: 'Go', bs: 7 } }, 'company.bs', 'must be a string'],
    [{ company: 'Co' }, 'company', 'must be an object or null'],
  ])('refuses the profile %j: %s %s (422)', async (json, field, message) => {
    const res = await t.request({ method: 'PATCH', url: `/users/${t.bob.id}`, token: t.tokens.bob, json })
    expect(res.statusCode, res.body).toBe(422)
    expect(res.json().error.details).toContainEqual({ field, message })
  })

  it('filters and sorts users by username', async () => {
    const { user, token } = await make.signedIn({ email: 'zed@example.com' })
    await t.request({ method: 'PATCH', url: `/users/${user.id}`, token, json: { username: 'Zed' } })
    expect((await t.request({ method: 'GET', url: '/users?username=Zed' })).json().data.map((u: { id: number }) => u.id)).toEqual([user.id])
    const sorted = (await t.request({ method: 'GET', url: '/users?sort=-username&limit=1' })).json().data
    expect(sorted[0].username).toBe('Zed')
    const refused = await t.request({ method: 'GET', url: '/users?address=x' })
    expect(refused.statusCode).toBe(400)
  })

  it('PATCH accepts application/merge-patch+json', async () => {
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/users/${t.bob.id}`,
      headers: { authorization: `Bearer ${t.tokens.bob}`, 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ age: 42 }),
    })
    expect(res.statusCode).toBe(200)
    expect(res.json().data.age).toBe(42)
  })

  it('a PATCH that changes nothing keeps updatedAt', async () => {
    const before = (await t.request({ method: 'GET', url: `/users/${t.bob.id}` })).json().data
    const res = await t.request({ method: 'PATCH', url: `/users/${t.bob.id}`, token: t.tokens.bob, json: { name: before.name } })
    expect(res.json().data.updatedAt).toBe(before.updatedAt)
  })

  it('a user may not change someone else (403), an admin may', async () => {
    const denied = await t.request({ method: 'PATCH', url: `/users/${t.bob.id}`, token: t.tokens.alice, json: { name: 'Hacked' } })
    expect(denied.statusCode).toBe(403)
    expect((await t.request({ method: 'GET', url: `/users/${t.bob.id}` })).json().data.name).toBe('Bob')
    const allowed = await t.request({ method: 'PATCH', url: `/users/${t.bob.id}`, token: t.tokens.admin, json: { name: 'Robert' } })
    expect(allowed.statusCode).toBe(200)
    expect(allowed.json().data.name).toBe('Robert')
  })

  it('a user may not make themself an admin (403); sending their own role is harmless', async () => {
    const escalate = await t.request({ method: 'PATCH', url: `/users/${t.alice.id}`, token: t.tokens.alice, json: { role: 'admin' } })
    expect(escalate.statusCode).toBe(403)
    expect((await t.request({ method: 'GET', url: `/users/${t.alice.id}` })).json().data.role).toBe('user')
    const same = await t.request({ method: 'PATCH', url: `/users/${t.alice.id}`, token: t.tokens.alice, json: { role: 'user' } })
    expect(same.statusCode).toBe(200)
  })

  it('an admin may set a role, and the new role takes effect on the next request', async () => {
    const { user, token } = await make.signedIn()
    const promote = await t.request({ method: 'PATCH', url: `/users/${user.id}`, token: t.tokens.admin, json: { role: 'admin' } })
    expect(promote.json().data.role).toBe('admin')
    const asAdmin = await t.request({ method: 'POST', url: '/users', token, json: { name: 'By Fay', email: 'byfay@example.com' } })
    expect(asAdmin.statusCode).toBe(201)
  })

  it('changing e-mail to one that is taken is 409 and changes nothing', async () => {
    const res = await t.request({ method: 'PATCH', url: `/users/${t.alice.id}`, token: t.tokens.alice, json: { name: 'Al', email: 'ada@example.com' } })
    expect(res.statusCode).toBe(409)
    expect((await t.request({ method: 'GET', url: `/users/${t.alice.id}` })).json().data.name).toBe('Alice')
  })

  it('changing a user who does not exist is 404', async () => {
    const res = await t.request({ method: 'PATCH', url: '/users/999999', token: t.tokens.admin, json: { name: 'Ghost' } })
    expect(res.statusCode).toBe(404)
  })

  it('anonymous PUT, PATCH and DELETE are 401', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const res = await t.request({ method, url: `/users/${t.bob.id}`, ...(method === 'DELETE' ? {} : { json: { name: 'X', email: 'x@example.com' } }) })
      expect(res.statusCode).toBe(401)
    }
  })
})

describe('deleting users', () => {
  it('a user may delete themself: 204 with no body, then 404', async () => {
    const { user, token } = await make.signedIn()
    const res = await t.request({ method: 'DELETE', url: `/api/v1/users/${user.id}`, token })
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    expect((await t.request({ method: 'GET', url: `/users/${user.id}` })).statusCode).toBe(404)
    // Their token went with them.
    expect((await t.request({ method: 'GET', url: '/users', token })).statusCode).toBe(401)
  })

  it('a user may not delete someone else (403)', async () => {
    const res = await t.request({ method: 'DELETE', url: `/users/${t.bob.id}`, token: t.tokens.alice })
    expect(res.statusCode).toBe(403)
  })

  it('deletes the user with their posts, comments, todos and tokens', async () => {
    const { db } = t.database
    const { user } = await make.signedIn()
    const post = await make.post(user)
    await make.comment(post, t.bob)
    await make.todo(user)

    const res = await t.request({ method: 'DELETE', url: `/users/${user.id}`, token: t.tokens.admin })
    expect(res.statusCode).toBe(204)
    for (const [table, column] of [
      ['posts', 'user_id'],
      ['todos', 'user_id'],
      ['tokens', 'user_id'],
    ] as const) {
      expect(await db.selectFrom(table).select('id').where(column, '=', user.id).execute()).toEqual([])
    }
    expect(await db.selectFrom('comments').select('id').where('post_id', '=', post.id).execute()).toEqual([])
  })

  it('the last admin can be neither deleted nor demoted (409)', async () => {
    const t2 = await buildTestApp()
    try {
      const del = await t2.request({ method: 'DELETE', url: `/users/${t2.admin.id}`, token: t2.tokens.admin })
      expect(del.statusCode).toBe(409)
      const demote = await t2.request({ method: 'PATCH', url: `/users/${t2.admin.id}`, token: t2.tokens.admin, json: { role: 'user' } })
      expect(demote.statusCode).toBe(409)
      expect((await t2.request({ method: 'GET', url: `/users/${t2.admin.id}` })).json().data.role).toBe('admin')
    } finally {
      await t2.close()
    }
  })
})
