// The landing page at GET /: a page for a browser, the API's index for anything else, on the run's
// store. The page's counts follow writes; every URL of the index, filled in, answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { API_INDEX, FEATURES } from '../../src/features.js'
import { PAGE_CSP } from '../../src/pages/page-assets.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { idsForPath, seedEmptyFeatures } from '../helpers/seeded-rows.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8'
const get = (url: string, headers: Record<string, string> = {}) => t.request({ method: 'GET', url, headers })

/** The counts the page shows, read from its markup. */
async function shownCounts(): Promise<Record<string, number>> {
  const page = await get('/', { accept: BROWSER_ACCEPT })
  expect(page.statusCode).toBe(200)
  return Object.fromEntries([...page.body.matchAll(/id="count-(\w+)" data-count="(\d+)"/g)].map((m) => [m[1], Number(m[2])]))
}

/** Every count the page shows (the features that declare one), as `counts` says, the others 0. */
const countsOf = (counts: Record<string, number>): Record<string, number> =>
  Object.fromEntries(FEATURES.flatMap(({ name, landingCount }) => (landingCount === undefined ? [] : [[name, counts[name] ?? 0]])))

/** An RFC 6570 template filled in: path variables from `values`, query expressions dropped. */
const fill = (template: string, values: Record<string, string | number>): string =>
  template.replace(/\{\?[^}]*\}/g, '').replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? `<${name}>`))

describe('GET / to a browser', () => {
  it('answers the HTML page under the pages CSP, never cached without revalidation, with its ETag and Vary: Accept', async () => {
    const res = await get('/', { accept: BROWSER_ACCEPT })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP)
    expect(res.headers['cache-control']).toBe('no-cache')
    expect(String(res.headers.vary)).toMatch(/\bAccept\b/)
    expect(res.headers.etag).toMatch(/^W\/"/)
    expect(res.body).toContain('<a href="/docs">')
    expect(res.body).toContain('<a href="/graphiql">')
    expect(res.body).toContain('data-stream="/graphql/stream"')
    // The curl line carries the address the caller reached.
    expect(res.body).toContain('<code id="curl">curl http://localhost:80/api/v1/users?limit=2</code>')
    const again = await get('/', { accept: BROWSER_ACCEPT, 'if-none-match': String(res.headers.etag) })
    expect(again.statusCode).toBe(304)
  })

  it('loads only its own same-origin files, and runs no inline script or event handler', async () => {
    const { body } = await get('/', { accept: 'text/html' })
    const references = [...body.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1] ?? '')
    for (const reference of references) expect(/^(\/(?![/\\])|data:,$)/.test(reference), reference).toBe(true)
    expect(body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    expect(body).not.toMatch(/\son[a-z]+=/i)
    for (const asset of references.filter((reference) => reference.startsWith('/front-door/assets/'))) {
      const res = await get(asset)
      expect(res.statusCode, asset).toBe(200)
      expect(res.headers['content-type'], asset).toMatch(/^text\/(css|javascript); charset=utf-8$/)
    }
    const script = (await get('/front-door/assets/front-door.js')).body
    expect(script).toContain('commentAdded')
    expect(script).not.toContain('innerHTML')
  })

  it('shows what an anonymous caller can see, counted again after every write: drafts and their comments left out', async () => {
    const before = await shownCounts()
    expect(before).toEqual(countsOf({ users: 3 }))
    const post = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.alice.id}/posts`,
      token: t.tokens.alice,
      json: { title: 'Hello', content: 'World' },
    })
    expect(post.statusCode).toBe(201)
    const draft = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.alice.id}/posts`,
      token: t.tokens.alice,
      json: { title: 'Draft', content: 'Not yet', status: 'draft' },
    })
    expect(draft.statusCode).toBe(201)
    const postId = post.json<{ data: { id: number } }>().data.id
    const draftId = draft.json<{ data: { id: number } }>().data.id
    for (const [id, content] of [
      [postId, 'Seen'],
      [draftId, 'Hidden with its draft'],
    ] as const) {
      const comment = await t.request({ method: 'POST', url: `/api/v1/users/${t.alice.id}/posts/${id}/comments`, token: t.tokens.alice, json: { content } })
      expect(comment.statusCode).toBe(201)
    }
    const todo = await t.request({ method: 'POST', url: `/api/v1/users/${t.bob.id}/todos`, token: t.tokens.bob, json: { text: 'Water the plants' } })
    expect(todo.statusCode).toBe(201)
    await t.createUser({ name: 'Carol', email: 'carol@example.com' })
    expect(await shownCounts()).toEqual(countsOf({ users: 4, posts: 1, comments: 1, todos: 1 }))
  })

  it('counts no further than the lists total: past 10,000 it shows "10,000+", which the live feed leaves alone', async () => {
    const own = await buildTestApp()
    try {
      const now = new Date().toISOString()
      const rows = Array.from({ length: 10_001 }, (_, i) => ({ user_id: own.bob.id, text: `todo ${i}`, completed: 0, created_at: now, updated_at: now }))
      // 500 rows per statement: within SQLite's and PostgreSQL's bound on parameters.
      for (let i = 0; i < rows.length; i += 500)
        await own.database.db
          .insertInto('todos')
          .values(rows.slice(i, i + 500))
          .execute()
      const page = await own.request({ method: 'GET', url: '/', headers: { accept: BROWSER_ACCEPT } })
      expect(page.statusCode).toBe(200)
      expect(page.body).toContain('<dd id="count-todos">10,000+</dd>')
      expect(page.body).toContain('<dd id="count-users" data-count="3">3</dd>')
    } finally {
      await own.close()
    }
  })

  it('answers HEAD with the headers and no body', async () => {
    const res = await t.request({ method: 'HEAD', url: '/', headers: { accept: 'text/html' } })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP)
    expect(res.body).toBe('')
  })
})

describe('GET / to anything else', () => {
  it('answers the API index as JSON to curl (*/*), to no Accept and to application/json, with an ETag that revalidates', async () => {
    const answers = await Promise.all([get('/', { accept: '*/*' }), get('/'), get('/', { accept: 'application/json' })])
    for (const res of answers) {
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(String(res.headers.vary)).toMatch(/\bAccept\b/)
      expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'") // the API's, not the page's
    }
    const [first] = answers
    const again = await get('/', { accept: '*/*', 'if-none-match': String(first?.headers.etag) })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
    // A client that weighs JSON above HTML gets JSON.
    expect((await get('/', { accept: 'text/html;q=0.5, application/json' })).headers['content-type']).toBe('application/json; charset=utf-8')
  })

  it('is 406 in the error body to a client that takes neither JSON nor HTML', async () => {
    const res = await get('/', { accept: 'image/png' })
    expect(res.statusCode).toBe(406)
    expect(res.json()).toMatchObject({ error: { code: 'NOT_ACCEPTABLE' } })
  })

  it('names every resource as an absolute URL template on the address the caller reached, ws: for the WebSocket', async () => {
    const index = (await get('/', { host: 'api.example.test:8080' })).json<Record<string, string>>()
    expect(index.users_url).toBe('http://api.example.test:8080/api/v1/users{?page,limit,cursor,sort,q,fields,select,include}')
    expect(index.graphql_ws_url).toBe('ws://api.example.test:8080/graphql')
    // Each feature's addresses (src/features.ts), then the service's own endpoints.
    expect(Object.keys(index)).toEqual([
      ...Object.keys(API_INDEX),
      'graphql_url',
      'graphql_ws_url',
      'graphql_stream_url',
      'graphql_schema_url',
      'openapi_url',
      'docs_url',
      'graphiql_url',
      'health_url',
    ])
    for (const url of Object.values(index)) expect(url).toMatch(/^(http|ws):\/\/api\.example\.test:8080\//)
  })

  it('every URL of the index, filled in, answers', async () => {
    const post = await t.request({ method: 'POST', url: `/api/v1/users/${t.bob.id}/posts`, token: t.tokens.bob, json: { title: 'Index', content: 'Walk' } })
    const postId = post.json<{ data: { id: number } }>().data.id
    const comment = await t.request({ method: 'POST', url: `/api/v1/users/${t.bob.id}/posts/${postId}/comments`, token: t.tokens.bob, json: { content: 'Hi' } })
    const todo = await t.request({ method: 'POST', url: `/api/v1/users/${t.bob.id}/todos`, token: t.tokens.bob, json: { text: 'Walk' } })
    const made: Record<string, number> = {
      user_id: t.bob.id,
      post_id: postId,
      comment_id: comment.json<{ data: { id: number } }>().data.id,
      todo_id: todo.json<{ data: { id: number } }>().data.id,
    }
    // The other features' rows come from their seed sections; a template with another variable names them.
    await seedEmptyFeatures(t.database.db)
    const index = (await get('/')).json<Record<string, string>>()
    const valuesFor = async (template: string): Promise<Record<string, number>> => {
      const path = template.replace(/\{\?[^}]*\}/g, '').replace(/^\w+:\/\/[^/]+(\/api\/v\d+)?/, '')
      const variables = [...path.matchAll(/\{(\w+)\}/g)].map(([, variable]) => variable!)
      if (variables.every((variable) => variable in made)) return made
      const ids = await idsForPath(
        t.database.db,
        path.replace(/\{(\w+)\}/g, (_, variable: string) => `:${variable.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase())}`),
      )
      return Object.fromEntries(Object.entries(ids).map(([name, id]) => [name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), id]))
    }
    // What a plain GET of each answers: the tokens are written with POST and DELETE only.
    const expected: Record<string, number> = { tokens_url: 405, current_token_url: 405, graphql_ws_url: 400 }
    for (const [name, template] of Object.entries(index)) {
      const values = await valuesFor(template)
      const unfilled = [...template.replace(/\{\?[^}]*\}/g, '').matchAll(/\{(\w+)\}/g)]
        .map(([, variable]) => variable)
        .filter((variable) => !(variable! in values))
      expect(unfilled, `${name}: this test makes no item whose id fills ${unfilled.join(', ')}; create one above`).toEqual([])
      const url = new URL(fill(template, values))
      const headers: Record<string, string> = { host: url.host }
      if (name === 'graphql_stream_url') headers.accept = 'text/event-stream'
      if (name === 'graphql_url' || name === 'graphql_ws_url') continue // checked below, with a query
      if (name === 'graphql_stream_url') continue // an event stream stays open: checked below
      const res = await get(`${url.pathname}${url.search}`, headers)
      expect(res.statusCode, `${name}: ${url.href}`).toBe(expected[name] ?? 200)
    }
    const graphql = new URL(index.graphql_url ?? '')
    const res = await get(`${graphql.pathname}?query=${encodeURIComponent('{ __typename }')}`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ data: { __typename: 'Query' } })
    // The stream URL refuses what it cannot stream, in its own words (the stream itself is tested in test/graphql).
    const stream = new URL(fill(index.graphql_stream_url ?? '', made))
    expect((await get(stream.pathname, { accept: 'application/json' })).statusCode).toBe(406)
  })

  it('takes hostile headers calmly: a Host with markup stays text in the page, nonsense qualities count as refusals', async () => {
    const page = await get('/', { accept: 'text/html', host: 'evil.test"><script>alert(1)</script>' })
    expect(page.statusCode).toBe(200)
    expect(page.body).not.toContain('<script>alert(1)')
    expect(page.body).toContain('curl http://evil.test&#34;&#62;&#60;script&#62;')
    expect((await get('/', { accept: 'text/html;q=abc, application/json;q=0.1' })).headers['content-type']).toBe('application/json; charset=utf-8')
    expect((await get('/', { accept: 'application/json;q=0, text/html;q=0' })).statusCode).toBe(406)
    expect((await get('/', { accept: ', ,' })).headers['content-type']).toBe('application/json; charset=utf-8') // an empty list is no Accept
  })

  it('leaves out the pages that are turned off', async () => {
    const off = await buildTestApp({ DOCS: 'false', GRAPHIQL: 'false' })
    try {
      const index = (await off.request({ method: 'GET', url: '/' })).json<Record<string, string>>()
      expect(index.docs_url).toBeUndefined()
      expect(index.graphiql_url).toBeUndefined()
      expect(index.openapi_url).toBeDefined()
      const page = await off.request({ method: 'GET', url: '/', headers: { accept: 'text/html' } })
      expect(page.body).not.toContain('/graphiql')
      expect(page.body).not.toContain('href="/docs"')
    } finally {
      await off.close()
    }
  })
})
