import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildSchema, parse, validate } from 'graphql'
import { graphqlTypeDefs } from '../../src/features.js'
import { DEFAULT_QUERY, graphiqlRoutes } from '../../src/pages/graphiql.js'
import { PAGE_CSP } from '../../src/pages/page-assets.js'
import { requireRouteAccess } from '../../src/http/access.js'

let app: FastifyInstance
beforeAll(async () => {
  app = Fastify()
  requireRouteAccess(app)
  await app.register(graphiqlRoutes, { endpoint: '/graphql', subscriptionEndpoint: '/graphql' })
  await app.ready()
})
afterAll(() => app.close())

const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers })

/** Every src= and href= in the page, in order. */
async function pageReferences(): Promise<string[]> {
  const page = await get('/graphiql')
  return [...page.body.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1] ?? '')
}

describe('the GraphiQL page', () => {
  it('answers HTML that is not cached without revalidation, under a strict CSP', async () => {
    const res = await get('/graphiql')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['cache-control']).toBe('no-cache')
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP)
    expect(PAGE_CSP).toContain("script-src 'self'")
    expect(PAGE_CSP).not.toMatch(/unsafe-eval|https?:|\*/)
    expect(res.body).toMatch(/^<!doctype html>/)
    expect(res.body).toContain('<div id="graphiql" data-endpoint="/graphql" data-subscription-endpoint="/graphql">')
  })

  it('loads only same-origin files, and runs no inline script or event handler', async () => {
    const references = await pageReferences()
    expect(references.length).toBeGreaterThanOrEqual(6)
    for (const reference of references) {
      expect(reference === 'data:,' || /^\/(?![/\\])/.test(reference), reference).toBe(true)
    }
    const { body } = await get('/graphiql')
    expect(body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    expect(body).not.toMatch(/\son[a-z]+=/i)
  })

  it('serves every file the page references, with its content type and a day of caching', async () => {
    const assets = (await pageReferences()).filter((reference) => reference.startsWith('/'))
    expect(assets.map((path) => path.split('/').pop())).toEqual([
      'graphiql.min.css',
      'page.css',
      'react.production.min.js',
      'react-dom.production.min.js',
      'graphiql.min.js',
      'init.js',
    ])
    for (const path of assets) {
      const res = await get(path)
      expect(res.statusCode, path).toBe(200)
      expect(res.headers['content-type'], path).toBe(path.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8')
      expect(res.headers['cache-control'], path).toBe('public, max-age=86400')
      expect(res.rawPayload.length, path).toBeGreaterThan(path.endsWith('page.css') ? 40 : 500)
      expect(Number(res.headers['content-length']), path).toBe(res.rawPayload.length)
    }
  })

  it('serves the UMD bundles themselves: React, ReactDOM and the GraphiQL global', async () => {
    expect((await get('/graphiql/assets/react.production.min.js')).body).toContain('React')
    expect((await get('/graphiql/assets/react-dom.production.min.js')).body).toContain('createRoot')
    expect((await get('/graphiql/assets/graphiql.min.js')).body).toContain('window.GraphiQL =')
    expect((await get('/graphiql/assets/graphiql.min.css')).body).toContain('.graphiql-container')
  })

  it('boots GraphiQL with the fetcher, the headers editor and the default query', async () => {
    const init = (await get('/graphiql/assets/init.js')).body
    expect(init).toContain('GraphiQL.createFetcher(fetcherOptions)')
    expect(init).toContain('subscriptionUrl')
    expect(init).toContain('isHeadersEditorEnabled: true')
    expect(init).toContain('shouldPersistHeaders: true')
    expect(init).toContain('{\\"Authorization\\": \\"Bearer <token>\\"}')
    expect(init).toContain(JSON.stringify(DEFAULT_QUERY).slice(1, -1))
  })

  it('opens on a query the schema takes: a page of a cursor connection', () => {
    const schema = buildSchema(graphqlTypeDefs())
    expect(validate(schema, parse(DEFAULT_QUERY))).toEqual([])
    expect(DEFAULT_QUERY).toMatch(/usersConnection\(first: 3/)
  })

  it('answers 304 to a revalidation of an asset', async () => {
    const first = await get('/graphiql/assets/init.js')
    const etag = String(first.headers.etag)
    expect(etag).toMatch(/^W\/"[\w-]+"$/)
    const again = await get('/graphiql/assets/init.js', { 'if-none-match': etag })
    expect(again.statusCode).toBe(304)
    expect(again.rawPayload.length).toBe(0)
  })

  it('answers 404 to a file that is not on the list', async () => {
    for (const path of ['/graphiql/assets/graphiql.js', '/graphiql/assets/graphiql.min.js.map', '/graphiql/assets/', '/graphiql/assets']) {
      expect((await get(path)).statusCode, path).toBe(404)
    }
  })

  it('answers 404 to path traversal, encoded or not', async () => {
    for (const path of [
      '/graphiql/assets/../package.json',
      '/graphiql/assets/../../package.json',
      '/graphiql/assets/..%2F..%2Fpackage.json',
      '/graphiql/assets/%2e%2e/%2e%2e/package.json',
      '/graphiql/assets/..%5C..%5Cpackage.json',
      '/graphiql/assets/graphiql.min.js/../../../src/app.ts',
      '/graphiql/assets/%2Fetc%2Fpasswd',
    ]) {
      const res = await get(path)
      expect(res.statusCode, path).toBe(404)
      expect(res.body, path).not.toContain('"name": "threadline"')
    }
  })

  it('refuses an endpoint on another origin at registration', async () => {
    for (const endpoint of ['https://example.com/graphql', '//example.com/graphql', 'graphql']) {
      const other = Fastify()
      await expect(other.register(graphiqlRoutes, { endpoint }).ready()).rejects.toThrow(/must be a path on this service/)
      await other.close()
    }
  })
})

describe('compressed assets', () => {
  it('serves the large files brotli- or gzip-compressed as the client accepts, each compressed once', async () => {
    const { brotliDecompressSync, gunzipSync } = await import('node:zlib')
    const path = '/graphiql/assets/graphiql.min.js'
    const plain = await get(path)
    expect(plain.headers['content-encoding']).toBeUndefined()
    const br = await app.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'gzip, deflate, br' } })
    expect(br.headers['content-encoding']).toBe('br')
    expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3)
    expect(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload)).toBe(true)
    const gz = await app.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'gzip, br;q=0' } })
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true)
    expect(br.headers.vary).toContain('Accept-Encoding')
    const again = await app.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'br' } })
    expect(again.rawPayload.equals(br.rawPayload)).toBe(true)
  })
})
