import { brotliDecompressSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PAGE_CSP } from '../../src/pages/page-assets.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_MAX: '50' })
})
afterAll(() => t.close())

const get = (url: string, headers: Record<string, string> = {}) => t.request({ method: 'GET', url, headers })

/** Every src= and href= in the page, in order. */
async function pageReferences(): Promise<string[]> {
  const page = await get('/docs')
  return [...page.body.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1] ?? '')
}

describe('the API reference page', () => {
  it('answers HTML pointed at /openapi.json that is not cached without revalidation, under a strict CSP, rate-limited like any read', async () => {
    const res = await get('/docs')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['cache-control']).toBe('no-cache')
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP)
    expect(PAGE_CSP).toContain("script-src 'self'")
    expect(PAGE_CSP).toContain("connect-src 'self'")
    expect(PAGE_CSP).not.toMatch(/unsafe-eval|https?:|\*/)
    expect(res.headers['x-ratelimit-limit']).toBe('50')
    expect(res.body).toContain('<div id="swagger-ui" data-spec-url="/openapi.json">')
  })

  it('loads only same-origin files, and runs no inline script or event handler', async () => {
    const references = await pageReferences()
    expect(references.filter((reference) => reference.startsWith('/docs/assets/')).map((path) => path.split('/').pop())).toEqual([
      'favicon-32x32.png',
      'swagger-ui.css',
      'page.css',
      'swagger-ui-bundle.js',
      'init.js',
    ])
    for (const reference of references) expect(/^\/(?![/\\])/.test(reference), reference).toBe(true)
    const { body } = await get('/docs')
    expect(body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    expect(body).not.toMatch(/\son[a-z]+=/i)
  })

  it('serves every file the page references, with its content type and a day of caching, and 304 on revalidation', async () => {
    for (const path of (await pageReferences()).filter((reference) => reference.startsWith('/docs/assets/'))) {
      const res = await get(path)
      expect(res.statusCode, path).toBe(200)
      expect(res.headers['content-type'], path).toMatch(/^(text\/(css|javascript); charset=utf-8|image\/png)$/)
      expect(res.headers['cache-control'], path).toBe('public, max-age=86400')
      const again = await get(path, { 'if-none-match': String(res.headers.etag) })
      expect(again.statusCode, path).toBe(304)
    }
    expect((await get('/docs/assets/swagger-ui-bundle.js')).body).toContain('SwaggerUIBundle')
  })

  it('boots Swagger UI on the document named by the page, with no external validator and no URL taken from the address bar', async () => {
    const init = (await get('/docs/assets/init.js')).body
    expect(init).toContain('url: root.dataset.specUrl')
    expect(init).toContain('validatorUrl: null')
    expect(init).toContain('queryConfigEnabled: false')
    expect(init).toContain("layout: 'BaseLayout'")
  })

  it('sends Swagger UI brotli-compressed to a client that takes it', async () => {
    const plain = await get('/docs/assets/swagger-ui-bundle.js')
    const br = await get('/docs/assets/swagger-ui-bundle.js', { 'accept-encoding': 'gzip, br' })
    expect(br.headers['content-encoding']).toBe('br')
    expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3)
    expect(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload)).toBe(true)
  })

  it('answers 404 to a file that is not on the list, or a path out of the folder', async () => {
    for (const path of [
      '/docs/assets/swagger-ui.js',
      '/docs/assets/swagger-ui-bundle.js.map',
      '/docs/assets/../package.json',
      '/docs/assets/..%2F..%2Fpackage.json',
    ]) {
      expect((await get(path)).statusCode, path).toBe(404)
    }
  })
})

describe.each([
  ['DOCS=false', { DOCS: 'false' }],
  ['OPENAPI=false', { OPENAPI: 'false' }],
])('with %s', (_name, env) => {
  it('serves no API reference page', async () => {
    const off = await buildTestApp(env)
    try {
      for (const url of ['/docs', '/docs/assets/init.js']) expect((await off.request({ method: 'GET', url })).statusCode, url).toBe(404)
      expect((await off.request({ method: 'GET', url: '/api/v1/users' })).statusCode).toBe(200)
    } finally {
      await off.close()
    }
  })
})
