// The collection query language, through /users (the same implementation serves every collection).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'

let t: TestApp
const ids: Record<string, number> = {}

beforeAll(async () => {
  t = await buildTestApp()
  // admin (no age), alice (no age), bob (41) come from the helper; add a spread of ages and names.
  const people: [string, number | null, 'user' | 'admin'][] = [
    ['Carol', 30, 'user'],
    ['Dave', 30, 'admin'],
    ['erin', 25, 'user'],
    ['Frank', 41, 'user'],
    ['Grace 100% _real_', 30, 'user'],
    ['Heidi', null, 'user'],
  ]
  for (const [name, age, role] of people) {
    const user = await t.createUser({ name, email: `${name.split(' ')[0]!.toLowerCase()}@example.com`, age, role })
    ids[name] = user.id
  }
})
afterAll(() => t.close())

const get = async (url: string, headers: Record<string, string> = {}) => {
  const res = await t.request({ method: 'GET', url, headers })
  return { status: res.statusCode, body: res.json(), link: res.headers.link as string | undefined }
}
const names = (body: { data: { name: string }[] }) => body.data.map((u) => u.name)

describe('filters', () => {
  it('filters by equality on an integer field', async () => {
    const { body } = await get('/users?age=30')
    expect(names(body)).toEqual(['Carol', 'Dave', 'Grace 100% _real_'])
    expect(body.meta.pagination.total).toBe(3)
  })

  it('means "any of" for a repeated parameter, and combines parameters with AND', async () => {
    expect(names((await get('/users?age=25&age=41')).body)).toEqual(['Bob', 'erin', 'Frank'])
    expect(names((await get('/users?age=30&role=admin')).body)).toEqual(['Dave'])
  })

  it('filters enumerations, and null matches a missing value', async () => {
    expect(names((await get('/users?role=admin')).body)).toEqual(['Ada Admin', 'Dave'])
    expect(names((await get('/users?age=null')).body)).toEqual(['Ada Admin', 'Alice', 'Heidi'])
    expect(names((await get('/users?age=null&age=25')).body)).toEqual(['Ada Admin', 'Alice', 'erin', 'Heidi'])
  })

  it('compares e-mail addresses without regard to case, and text exactly otherwise', async () => {
    expect(names((await get('/users?email=CAROL@Example.COM')).body)).toEqual(['Carol'])
    expect(names((await get('/users?name=carol')).body)).toEqual([])
    expect(names((await get('/users?name=Carol')).body)).toEqual(['Carol'])
  })

  it('filters timestamps by the instant, whatever the offset it is written in', async () => {
    const carol = (await get(`/users/${ids.Carol}`)).body.data
    const shifted = new Date(Date.parse(carol.createdAt)).toISOString().replace('Z', '+00:00')
    expect(names((await get(`/users?createdAt=${encodeURIComponent(shifted)}`)).body)).toContain('Carol')
  })

  it.each([
    ['age=thirty', 'age', 'must be an integer from -2147483648 to 2147483647 (or null)'],
    ['age=3.5', 'age', 'must be an integer from -2147483648 to 2147483647 (or null)'],
    ['age=2147483648', 'age', 'must be an integer from -2147483648 to 2147483647 (or null)'],
    ['age=-2147483649', 'age', 'must be an integer from -2147483648 to 2147483647 (or null)'],
    ['id=99999999999', 'id', 'must be an integer from -2147483648 to 2147483647'],
    ['id=1e3', 'id', 'must be an integer from -2147483648 to 2147483647'],
    ['role=root', 'role', 'must be one of: user, admin'],
    ['role=user%00', 'role', 'must be one of: user, admin'],
    ['createdAt=yesterday', 'createdAt', 'must be an ISO 8601 date-time in the years 0001 to 9999'],
    ['createdAt=0000-01-01T00:00Z', 'createdAt', 'must be an ISO 8601 date-time in the years 0001 to 9999'],
    ['createdAt=0001-01-01T00:00%2B00:01', 'createdAt', 'must be an ISO 8601 date-time in the years 0001 to 9999'],
    ['createdAt=9999-12-31T23:59:59.999-00:01', 'createdAt', 'must be an ISO 8601 date-time in the years 0001 to 9999'],
    ['createdAt=2023-02-29T00:00Z', 'createdAt', 'must be an ISO 8601 date-time in the years 0001 to 9999'],
    ['createdAt=2024-04-31T00:00Z', 'createdAt', 'must be an ISO 8601 date-time in the years 0001 to 9999'],
    ['name=%00', 'name', 'must be text without NUL characters'],
    ['name=Carol&name=Car%00ol', 'name', 'must be text without NUL characters'],
    ['email=carol%00@example.com', 'email', 'must be text without NUL characters'],
    ['height=2', 'height', 'is not a field of this collection'],
    ['avatar=x', 'avatar', 'cannot be filtered on; search it with q'],
    ['password=x', 'password', 'is not a field of this collection'],
    ['constructor=x', 'constructor', 'is not a field of this collection'],
    ['__proto__=x', '__proto__', 'is not a field of this collection'],
  ])('answers 400 to %s, naming the parameter', async (query, field, message) => {
    const { status, body } = await get(`/users?${query}`)
    expect(status).toBe(400)
    expect(body.error.code).toBe('BAD_REQUEST')
    expect(body.error.details).toContainEqual({ field, message })
  })

  it('takes the bounds themselves, and leading zeros', async () => {
    expect((await get('/users?age=2147483647&age=-2147483648&age=00030')).body.data.map((u: { age: number }) => u.age)).toEqual([30, 30, 30])
    expect((await get('/users?createdAt=0001-01-01T00:00Z&createdAt=9999-12-31T23:59:59.999Z&createdAt=2024-02-29T00:00Z')).status).toBe(200)
  })

  it('reports every bad parameter at once', async () => {
    const { body } = await get('/users?age=x&role=y&sort=nope&limit=0')
    expect(body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['age', 'limit', 'role', 'sort'])
  })
})

describe('sort', () => {
  it('sorts ascending and descending, earlier names first, the id breaking ties', async () => {
    const { body } = await get('/users?sort=-age,name&age=30&age=41&age=25')
    expect(names(body)).toEqual(['Bob', 'Frank', 'Carol', 'Dave', 'Grace 100% _real_', 'erin'])
  })

  it('breaks ties by id in the direction of the last key', async () => {
    const asc = (await get('/users?sort=age&age=30')).body.data.map((u: { id: number }) => u.id)
    const desc = (await get('/users?sort=-age&age=30')).body.data.map((u: { id: number }) => u.id)
    expect(asc).toEqual([...asc].sort((a, b) => a - b))
    expect(desc).toEqual([...asc].reverse())
  })

  it('puts missing values first ascending and last descending', async () => {
    const asc = (await get('/users?sort=age&limit=100')).body.data.map((u: { age: number | null }) => u.age)
    expect(asc.slice(0, 3)).toEqual([null, null, null])
    const desc = (await get('/users?sort=-age&limit=100')).body.data.map((u: { age: number | null }) => u.age)
    expect(desc.slice(-3)).toEqual([null, null, null])
  })

  it.each(['sort=height', 'sort=avatar', 'sort=name,name', 'sort=', 'sort=-', 'sort=name,,age'])('answers 400 to %s', async (query) => {
    const { status, body } = await get(`/users?${query}`)
    expect(status).toBe(400)
    expect(body.error.details[0].field).toBe('sort')
  })
})

describe('page pagination', () => {
  it('does the arithmetic: page, limit, total, pages, and Link rel=next/prev/first', async () => {
    const first = await get('/api/v1/users?limit=4')
    expect(first.body.meta.pagination).toMatchObject({ page: 1, limit: 4, total: 9, pages: 3 })
    expect(first.link).toBe('</api/v1/users?limit=4&page=2>; rel="next", </api/v1/users?limit=4&page=1>; rel="first"')
    const last = await get('/api/v1/users?limit=4&page=3')
    expect(last.body.data).toHaveLength(1)
    expect(last.body.meta.pagination.nextCursor).toBeNull()
    expect(last.link).toBe('</api/v1/users?limit=4&page=2>; rel="prev", </api/v1/users?limit=4&page=1>; rel="first"')
    const all = [1, 2, 3].map(async (page) => (await get(`/users?limit=4&page=${page}`)).body.data.map((u: { id: number }) => u.id))
    expect((await Promise.all(all)).flat()).toEqual((await get('/users?limit=100')).body.data.map((u: { id: number }) => u.id))
  })

  it('caps the limit at 100 and says so', async () => {
    expect((await get('/users?limit=5000')).body.meta.pagination.limit).toBe(100)
  })

  it.each(['page=0', 'page=-2', 'page=1.5', 'page=x', 'limit=0', 'limit=-1', 'limit=ten', 'page=1&page=2', 'limit=1&limit=2'])(
    'answers 400 to %s',
    async (query) => {
      const { status, body } = await get(`/users?${query}`)
      expect(status).toBe(400)
      expect(['page', 'limit']).toContain(body.error.details[0].field)
    },
  )
})

/** Follows nextCursor from the first page to the last; returns every id seen, in order. */
async function walk(url: string, onPage?: (page: number) => Promise<void>): Promise<number[]> {
  const seen: number[] = []
  let next: string | null = url
  for (let page = 0; next !== null && page < 200; page++) {
    const { status, body }: { status: number; body: { data: { id: number }[]; meta: { pagination: { nextCursor: string | null } } } } = await get(next)
    expect(status).toBe(200)
    seen.push(...body.data.map((item) => item.id))
    const cursor = body.meta.pagination.nextCursor
    next = cursor === null ? null : `${url}${url.includes('?') ? '&' : '?'}cursor=${cursor}`
    await onPage?.(page)
  }
  return seen
}

describe('cursor pagination', () => {
  it('visits every item once, in order, in v1 and v2', async () => {
    const everyone = (await get('/users?limit=100&sort=-age,name')).body.data.map((u: { id: number }) => u.id)
    expect(await walk('/api/v2/users?limit=2&sort=-age,name')).toEqual(everyone)
    expect(await walk('/api/v1/users?limit=4&sort=-age,name')).toEqual(everyone)
  })

  it('walks filtered, searched and null-sorted orders too', async () => {
    for (const query of ['sort=age', 'sort=-age', 'age=30&age=null&sort=-age,-name', 'q=a&sort=email', 'sort=-createdAt']) {
      const all = (await get(`/users?limit=100&${query}`)).body.data.map((u: { id: number }) => u.id)
      expect(await walk(`/api/v2/users?limit=2&${query}`), query).toEqual(all)
    }
  })

  it('v2 pages by cursor by default, reports hasMore and no total; v1 reports the total', async () => {
    const v2 = await get('/api/v2/users?limit=4')
    expect(v2.body.meta.pagination).toEqual({ limit: 4, nextCursor: expect.any(String), hasMore: true })
    expect(v2.link).toMatch(/^<\/api\/v2\/users\?limit=4&cursor=[\w-]+>; rel="next", <\/api\/v2\/users\?limit=4>; rel="first"$/)
    const v2Page = await get('/api/v2/users?limit=4&page=3')
    expect(v2Page.body.meta.pagination).toEqual({ page: 3, limit: 4, nextCursor: null, hasMore: false })
    const v1Cursor = await get(`/api/v1/users?limit=4&cursor=${v2.body.meta.pagination.nextCursor}`)
    expect(v1Cursor.body.meta.pagination).toEqual({ limit: 4, total: 9, nextCursor: expect.any(String) })
  })

  it('links back with rel=prev, and the previous page is the page before', async () => {
    const first = await get('/api/v2/users?limit=3')
    const second = await get(`/api/v2/users?limit=3&cursor=${first.body.meta.pagination.nextCursor}`)
    const prevUrl = /<([^>]+)>; rel="prev"/.exec(second.link ?? '')?.[1]
    expect(prevUrl).toBeDefined()
    const back = await get(prevUrl as string)
    expect(back.body.data).toEqual(first.body.data)
    expect(back.link).not.toMatch(/rel="prev"/)
    expect(back.link).toMatch(/rel="next"/)
  })

  it('visits every item exactly once while rows are inserted during the walk', async () => {
    const make = createFactories(t)
    const target = await make.user({ name: 'Walker', email: 'walker@example.com' })
    const add = (text: string) => make.todo(target, { text })
    for (let i = 0; i < 40; i++) await add(`todo ${String(i).padStart(2, '0')}`)
    const before = (await get(`/users/${target.id}/todos?limit=100`)).body.data.map((todo: { id: number }) => todo.id)

    // Sorted by text, so new rows land before, inside and after the part already seen.
    const seen = await walk(`/api/v2/users/${target.id}/todos?limit=6&sort=text`, async (page) => {
      await add(`todo ${String(page * 7).padStart(2, '0')}b`)
      await add(`a first ${page}`)
      await add(`z last ${page}`)
    })
    expect(new Set(seen).size).toBe(seen.length)
    for (const id of before) expect(seen).toContain(id)
  })

  it('refuses a cursor that was forged, tampered with, or made for another query', async () => {
    const { body } = await get('/api/v2/users?limit=2&sort=name')
    const cursor: string = body.meta.pagination.nextCursor
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString())
    const forge = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString('base64url')
    const bad = [
      'not-a-cursor',
      'x'.repeat(3000),
      '%%%',
      forge({ d: 'a', k: ['Bob'], f: decoded.f }),
      forge({ d: 'a', k: [42, 1], f: decoded.f }),
      forge({ d: 'a', k: ['Bob\u0000', 1], f: decoded.f }),
      forge({ d: 'a', k: ['Bob', 2 ** 31], f: decoded.f }),
      forge({ d: 'a', k: ['Bob', 1.5], f: decoded.f }),
      forge({ d: 'sideways', k: decoded.k, f: decoded.f }),
      forge({ ...decoded, f: 'somethingelse' }),
      forge([1, 2, 3]),
      forge(null),
    ]
    for (const forged of bad) {
      const res = await get(`/api/v2/users?limit=2&sort=name&cursor=${encodeURIComponent(forged)}`)
      expect(res.status, forged).toBe(400)
      expect(res.body.error.details[0].field).toBe('cursor')
    }
    for (const other of ['sort=-name', 'sort=age', 'role=user&sort=name', 'q=a&sort=name']) {
      const res = await get(`/api/v2/users?limit=2&${other}&cursor=${cursor}`)
      expect(res.status, other).toBe(400)
    }
    // A different limit is the same query.
    expect((await get(`/api/v2/users?limit=5&sort=name&cursor=${cursor}`)).status).toBe(200)
  })

  it('refuses a cursor together with a page', async () => {
    const { body } = await get('/api/v2/users?limit=2')
    const res = await get(`/api/v2/users?limit=2&page=2&cursor=${body.meta.pagination.nextCursor}`)
    expect(res.status).toBe(400)
  })

  it('refuses a cursor from one collection on another', async () => {
    const { body } = await get(`/api/v2/users/${t.bob.id}/todos?limit=1`)
    const res = await get(`/api/v2/users/${t.alice.id}/todos?limit=1&cursor=${body.meta.pagination.nextCursor ?? 'x'}`)
    expect(res.status).toBe(400)
  })
})

describe('search', () => {
  it('matches a substring of the name or e-mail, whatever the case', async () => {
    expect(names((await get('/users?q=ERIN')).body)).toEqual(['erin'])
    const everyone = names((await get('/users?limit=100')).body)
    expect(names((await get('/users?q=EXAMPLE.com&limit=100')).body)).toEqual(everyone)
  })

  it('finds names written with letters beyond ASCII', async () => {
    const emile = await t.createUser({ name: 'Émile Zola', email: 'emile@example.org' })
    expect(names((await get(`/users?q=${encodeURIComponent('Émile')}`)).body)).toEqual(['Émile Zola'])
    expect(names((await get('/users?q=zOLA')).body)).toEqual(['Émile Zola'])
    await t.request({ method: 'DELETE', url: `/users/${emile.id}`, token: t.tokens.admin })
  })

  it('searches only the fields named in fields', async () => {
    expect(names((await get('/users?q=carol&fields=email')).body)).toEqual(['Carol'])
    expect(names((await get('/users?q=@example&fields=name')).body)).toEqual([])
  })

  it('searches a field named a thousand times once, and refuses more than 100 names', async () => {
    expect(names((await get(`/users?q=carol&fields=${Array(1100).fill('email').join(',')}`)).body)).toEqual(['Carol'])
    const many = await get(`/users?q=carol&fields=${Array.from({ length: 101 }, (_, i) => `f${i}`).join(',')}`)
    expect(many.status).toBe(400)
    expect(many.body.error.details[0]).toEqual({ field: 'fields', message: 'may name at most 100 fields' })
  })

  it('takes % and _ literally', async () => {
    expect(names((await get(`/users?q=${encodeURIComponent('100%')}`)).body)).toEqual(['Grace 100% _real_'])
    expect(names((await get(`/users?q=${encodeURIComponent('_real_')}`)).body)).toEqual(['Grace 100% _real_'])
    expect(names((await get(`/users?q=${encodeURIComponent('%')}`)).body)).toEqual(['Grace 100% _real_'])
    expect(names((await get('/users?q=_')).body)).toEqual(['Grace 100% _real_'])
    expect(names((await get(`/users?q=${encodeURIComponent('\\')}`)).body)).toEqual([])
  })

  it('combines with filters, sort and both paginations', async () => {
    const { body } = await get('/users?q=a&role=user&sort=-name&limit=2&page=2')
    const all = names((await get('/users?q=a&role=user&sort=-name&limit=100')).body)
    expect(names(body)).toEqual(all.slice(2, 4))
    expect(body.meta.pagination.total).toBe(all.length)
  })

  it.each([
    ['q=a&fields=avatar', 'fields'],
    ['q=a&fields=height', 'fields'],
    ['fields=name', 'fields'],
    [`q=${'a'.repeat(201)}`, 'q'],
    ['q=a%00', 'q'],
  ])('answers 400 to %s', async (query, field) => {
    const { status, body } = await get(`/users?${query}`)
    expect(status).toBe(400)
    expect(body.error.details[0].field).toBe(field)
  })
})
