import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { commentPath, createFactories, type Factories, postPath, todoPath } from '../helpers/factories.js'
import { weakTagOf } from '../../src/http/caching.js'

let t: TestApp
let make: Factories
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_MAX: '100000', CACHE_MAX_AGE_S: '5' })
  make = createFactories(t)
})
afterAll(() => t.close())

/** Sends a request line and headers as written; resolves with the status line and headers. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text))
    let received = ''
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
    socket.on('end', () => resolve(received.split('\r\n\r\n')[0] ?? ''))
    socket.on('error', reject)
  })
}

const get = (url: string, headers: Record<string, string> = {}, token?: string) => t.request({ method: 'GET', url, headers, ...(token ? { token } : {}) })

describe('validators and cache headers', () => {
  it('sends a weak ETag, Last-Modified, Cache-Control and Vary with every 200 GET', async () => {
    const res = await get(`/users/${t.bob.id}`)
    expect(res.headers.etag).toMatch(/^W\/"[\w-]+"$/)
    expect(res.headers['last-modified']).toBe(new Date(res.json().data.updatedAt).toUTCString())
    expect(res.headers['cache-control']).toBe('public, max-age=5')
    expect(res.headers.vary).toBe('Accept, Authorization, Accept-Encoding')
    const list = await get('/users')
    expect(list.headers.etag).toMatch(/^W\//)
    const newest = Math.max(...list.json().data.map((u: { updatedAt: string }) => Date.parse(u.updatedAt)))
    expect(list.headers['last-modified']).toBe(new Date(newest).toUTCString())
  })

  it('keeps answers with a token private', async () => {
    const res = await get(`/users/${t.bob.id}`, {}, t.tokens.alice)
    expect(res.headers['cache-control']).toBe('private, no-cache')
  })

  it('marks error answers to GET as not storable', async () => {
    expect((await get('/users/999999')).headers['cache-control']).toBe('no-store')
  })

  it('keeps the ETag while nothing changes, though meta.timestamp does', async () => {
    const first = await get(`/users/${t.bob.id}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
    const second = await get(`/users/${t.bob.id}`)
    expect(first.json().meta.timestamp).not.toBe(second.json().meta.timestamp)
    expect(second.headers.etag).toBe(first.headers.etag)
    const page = await get('/users?limit=2')
    await new Promise((resolve) => setTimeout(resolve, 5))
    const pageAgain = await get('/users?limit=2')
    expect(pageAgain.json().meta.timestamp).not.toBe(page.json().meta.timestamp)
    expect(pageAgain.headers.etag).toBe(page.headers.etag)
  })

  it('tags what is around meta.timestamp, whether the timestamp ends the envelope or a page goes on after it', () => {
    const one = (timestamp: string, name = 'Bob') => `{"data":{"id":1,"name":"${name}"},"meta":{"timestamp":"${timestamp}"}}`
    const page = (timestamp: string, total = 1) => `{"data":[{"id":1}],"meta":{"timestamp":"${timestamp}","pagination":{"total":${total}}}}`
    expect(weakTagOf(one('2026-01-01T00:00:00.000Z'))).toBe(weakTagOf(one('2026-01-02T00:00:00.000Z')))
    expect(weakTagOf(one('2026-01-01T00:00:00.000Z'))).not.toBe(weakTagOf(one('2026-01-01T00:00:00.000Z', 'Bobby')))
    expect(weakTagOf(page('2026-01-01T00:00:00.000Z'))).toBe(weakTagOf(page('2026-01-02T00:00:00.000Z')))
    expect(weakTagOf(page('2026-01-01T00:00:00.000Z'))).not.toBe(weakTagOf(page('2026-01-01T00:00:00.000Z', 2)))
    expect(weakTagOf('<html></html>')).toMatch(/^W\/"[\w-]{27}"$/)
  })

  it('changes the ETag with a write, with the page, and with the version of a collection', async () => {
    const before = await get(`/users/${t.bob.id}`)
    await t.request({ method: 'PATCH', url: `/users/${t.bob.id}`, token: t.tokens.bob, json: { age: 55 } })
    expect((await get(`/users/${t.bob.id}`)).headers.etag).not.toBe(before.headers.etag)
    expect((await get('/users?limit=1&page=1')).headers.etag).not.toBe((await get('/users?limit=1&page=2')).headers.etag)
    expect((await get('/api/v1/users')).headers.etag).not.toBe((await get('/api/v2/users')).headers.etag)
  })

  it("changes a comment's ETag when its author is renamed", async () => {
    const post = await make.post(t.alice)
    const url = commentPath(post, await make.comment(post, t.bob))
    const before = (await get(url)).headers.etag
    await t.request({ method: 'PATCH', url: `/users/${t.bob.id}`, token: t.tokens.bob, json: { name: 'Bobby' } })
    expect((await get(url)).headers.etag).not.toBe(before)
  })
})

describe('conditional GET', () => {
  it('answers 304 without a body when If-None-Match holds the tag, for one resource and a collection', async () => {
    for (const url of [`/users/${t.bob.id}`, '/users?limit=2', `/api/v2/users/${t.bob.id}/todos`]) {
      const first = await get(url)
      const again = await get(url, { 'if-none-match': first.headers.etag as string })
      expect(again.statusCode, url).toBe(304)
      expect(again.body).toBe('')
      expect(again.headers.etag).toBe(first.headers.etag)
      expect(again.headers['cache-control']).toBe(first.headers['cache-control'])
      expect(again.headers['last-modified']).toBe(first.headers['last-modified'])
      expect(again.headers['x-ratelimit-remaining']).toEqual(expect.any(String))
    }
  })

  it('compares weakly, and takes a list of tags or *', async () => {
    const { etag } = (await get(`/users/${t.bob.id}`)).headers as { etag: string }
    const strong = etag.replace(/^W\//, '')
    for (const header of [strong, `"nope", ${etag}`, `W/"other",${strong}`, '*']) {
      expect((await get(`/users/${t.bob.id}`, { 'if-none-match': header })).statusCode, header).toBe(304)
    }
    expect((await get(`/users/${t.bob.id}`, { 'if-none-match': 'W/"stale"' })).statusCode).toBe(200)
  })

  it('answers 304 to If-Modified-Since at or after Last-Modified, 200 before it', async () => {
    const { headers } = await get(`/users/${t.bob.id}`)
    const lastModified = headers['last-modified'] as string
    expect((await get(`/users/${t.bob.id}`, { 'if-modified-since': lastModified })).statusCode).toBe(304)
    const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString()
    expect((await get(`/users/${t.bob.id}`, { 'if-modified-since': earlier })).statusCode).toBe(200)
    expect((await get(`/users/${t.bob.id}`, { 'if-modified-since': 'not a date' })).statusCode).toBe(200)
  })

  it('lets If-None-Match win over If-Modified-Since', async () => {
    const { headers } = await get(`/users/${t.bob.id}`)
    const fresh = { 'if-modified-since': headers['last-modified'] as string }
    expect((await get(`/users/${t.bob.id}`, { ...fresh, 'if-none-match': 'W/"stale"' })).statusCode).toBe(200)
    const old = { 'if-modified-since': new Date(0).toUTCString() }
    expect((await get(`/users/${t.bob.id}`, { ...old, 'if-none-match': headers.etag as string })).statusCode).toBe(304)
  })

  it('does not trust If-Modified-Since for a collection, whose deletions it cannot see', async () => {
    const { headers } = await get('/users')
    expect((await get('/users', { 'if-modified-since': headers['last-modified'] as string })).statusCode).toBe(200)
  })

  it("does not trust If-Modified-Since for a comment, whose author's name it embeds", async () => {
    const post = await make.post(t.alice)
    const url = commentPath(post, await make.comment(post, t.alice))
    const { headers } = await get(url)
    expect((await get(url, { 'if-modified-since': headers['last-modified'] as string })).statusCode).toBe(200)
    expect((await get(url, { 'if-none-match': headers.etag as string })).statusCode).toBe(304)
  })

  it('sends no Content-Length with a 304', async () => {
    const { headers } = await get(`/users/${t.bob.id}`)
    const again = await get(`/users/${t.bob.id}`, { 'if-none-match': headers.etag as string })
    expect(again.statusCode).toBe(304)
    expect(again.headers['content-length']).toBeUndefined()
  })

  it('answers HEAD with the same validators', async () => {
    const head = await t.request({ method: 'HEAD', url: `/users/${t.bob.id}` })
    expect(head.headers.etag).toBe((await get(`/users/${t.bob.id}`)).headers.etag)
  })
})

describe('conditional writes (If-Match)', () => {
  const makeTodo = async () => todoPath(await make.todo(t.alice))

  it('writes when If-Match holds the current tag, and answers 412 without writing when it is stale', async () => {
    const url = await makeTodo()
    const { etag } = (await get(url)).headers as { etag: string }
    const ok = await t.request({ method: 'PATCH', url, token: t.tokens.alice, headers: { 'if-match': etag }, json: { text: 'v2' } })
    expect(ok.statusCode).toBe(200)
    const stale = await t.request({ method: 'PATCH', url, token: t.tokens.alice, headers: { 'if-match': etag }, json: { text: 'v3' } })
    expect(stale.statusCode).toBe(412)
    expect(stale.json().error.code).toBe('PRECONDITION_FAILED')
    expect((await get(url)).json().data.text).toBe('v2')
    expect((await t.request({ method: 'PATCH', url, token: t.tokens.alice, headers: { 'if-match': '*' }, json: { text: 'v4' } })).statusCode).toBe(200)
  })

  it('guards PUT and DELETE the same way, on every resource', async () => {
    const { user, token } = await make.signedIn({ email: 'versioned@example.com' })
    const userUrl = `/users/${user.id}`
    const put = await t.request({
      method: 'PUT',
      url: userUrl,
      token,
      headers: { 'if-match': 'W/"stale"' },
      json: { name: 'X', email: 'versioned@example.com' },
    })
    expect(put.statusCode).toBe(412)
    const post = await make.post(user)
    const postUrl = postPath(post)
    expect((await t.request({ method: 'DELETE', url: postUrl, token, headers: { 'if-match': 'W/"stale"' } })).statusCode).toBe(412)
    expect((await get(postUrl)).statusCode).toBe(200)
    const postTag = (await get(postUrl)).headers.etag as string
    const commentUrl = commentPath(post, await make.comment(post, user))
    const commentTag = (await get(commentUrl)).headers.etag as string
    expect((await t.request({ method: 'PATCH', url: commentUrl, token, headers: { 'if-match': commentTag }, json: { content: 'd' } })).statusCode).toBe(200)
    expect((await t.request({ method: 'DELETE', url: commentUrl, token, headers: { 'if-match': commentTag } })).statusCode).toBe(412)
    expect((await t.request({ method: 'DELETE', url: postUrl, token, headers: { 'if-match': postTag } })).statusCode).toBe(204)
    const userTag = (await get(userUrl)).headers.etag as string
    expect((await t.request({ method: 'DELETE', url: userUrl, token, headers: { 'if-match': userTag } })).statusCode).toBe(204)
  })

  it('lets exactly one of two racing writes with the same tag win', async () => {
    const url = await makeTodo()
    const { etag } = (await get(url)).headers as { etag: string }
    const race = await Promise.all(
      ['left', 'right'].map((text) => t.request({ method: 'PATCH', url, token: t.tokens.alice, headers: { 'if-match': etag }, json: { text } })),
    )
    expect(race.map((r) => r.statusCode).sort()).toEqual([200, 412])
    const winner = race.find((r) => r.statusCode === 200)?.json().data.text
    expect((await get(url)).json().data.text).toBe(winner)
  })
})

describe('trailing slashes', () => {
  it('redirects to the path without the slash, keeping the query: 301 for reads, 308 for writes', async () => {
    const res = await get('/api/v1/users/?limit=2&sort=-name')
    expect(res.statusCode).toBe(301)
    expect(res.headers.location).toBe('/api/v1/users?limit=2&sort=-name')
    expect(res.headers['x-ratelimit-limit']).toEqual(expect.any(String))
    const write = await t.request({ method: 'POST', url: '/users/', json: {} })
    expect(write.statusCode).toBe(308)
    expect(write.headers.location).toBe('/users')
  })

  it('never redirects to another host, over a real socket too', async () => {
    const res = await get('//evil.example.com/')
    expect(res.statusCode).toBe(404)
    expect(res.headers.location).toBeUndefined()
    // app.inject normalizes URLs; a raw request line does not.
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = new URL(address)
    for (const path of ['/\\evil.example.com/', '/%5Cevil.example.com/', '/%5cevil.example.com/', '//evil.example.com/']) {
      const head = await rawRequest(Number(port), `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      expect(head, path).not.toMatch(/^location:/im)
      expect(head, path).not.toMatch(/^HTTP\/1\.1 30/)
    }
  })
})
