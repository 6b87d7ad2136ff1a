import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

const VENDOR = 'application/vnd.threadline+json'

describe('API versions', () => {
  it('serves users at /api/v1, /api/v2 and unversioned', async () => {
    for (const url of ['/api/v1/users', '/api/v2/users', '/users']) {
      const res = await t.request({ method: 'GET', url })
      expect(res.statusCode).toBe(200)
      expect(res.json().data.length).toBe(3)
    }
  })

  it.each([
    [undefined, 200],
    ['application/json', 200],
    ['*/*', 200],
    ['text/html,application/xhtml+xml,*/*;q=0.8', 200],
    [`${VENDOR}`, 200],
    [`${VENDOR}; version=1`, 200],
    [`${VENDOR}; version=2`, 200],
    [`${VENDOR}; version=3`, 406],
    [`${VENDOR}; version=abc`, 406],
    ['text/html', 406],
    ['application/json;q=0', 406],
  ])('unversioned paths with Accept %s answer %i', async (accept, status) => {
    const res = await t.request({ method: 'GET', url: '/users', headers: accept === undefined ? {} : { accept } })
    expect(res.statusCode).toBe(status)
    if (status === 406) expect(res.json().error.code).toBe('NOT_ACCEPTABLE')
  })

  it('a path version wins over the version in Accept', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/users', headers: { accept: `${VENDOR}; version=9` } })
    expect(res.statusCode).toBe(200)
  })

  it('says in API-Version which version served the request', async () => {
    const cases: [string, Record<string, string>, number][] = [
      ['/api/v1/users', {}, 1],
      ['/api/v2/users', {}, 2],
      ['/users', {}, 1],
      ['/users', { accept: `${VENDOR}; version=2` }, 2],
      ['/api/v2/users', { accept: `${VENDOR}; version=1` }, 2],
    ]
    for (const [url, headers, version] of cases) {
      const res = await t.request({ method: 'GET', url, headers })
      expect(res.headers['api-version'], `${url} ${JSON.stringify(headers)}`).toBe(String(version))
    }
  })

  it('answers an unknown version with 406 even on writes, and writes nothing', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/users',
      token: t.tokens.admin,
      headers: { accept: `${VENDOR}; version=7` },
      json: { name: 'V7', email: 'v7@example.com' },
    })
    expect(res.statusCode).toBe(406)
    expect((await t.request({ method: 'GET', url: '/users' })).json().meta.pagination.total).toBe(3)
  })
})
