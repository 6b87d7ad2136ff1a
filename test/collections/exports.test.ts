// CSV and NDJSON answers of every collection GET: read back as a spreadsheet reads them (formula
// cells neutralized, commas, quotes and line breaks intact), with the JSON page's filters, sort,
// select and rights; bounded per answer with a Link to go on, charged by rows; 406 elsewhere.
import type { RouteOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { EXPORT_PAGE_KIND, EXPORT_PAGE_ROWS, EXPORT_ROWS_PER_POINT } from '../../src/http/collection-export.js'
import { exportFormatOf } from '../../src/http/export-formats.js'
import type { Post } from '../../src/posts/posts.schemas.js'
import { Post as PostSchema } from '../../src/posts/posts.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { csvObjects, readCsv } from '../helpers/csv.js'
import { countLoopTurns } from '../helpers/loop-turns.js'
import { createFactories } from '../helpers/factories.js'
import { idsForPath, seedEmptyFeatures } from '../helpers/seeded-rows.js'

/** Over two pages of the store, so that the bound is reached after more than one read. */
const MAX_ROWS = 2 * EXPORT_PAGE_ROWS
const CSV = { accept: 'text/csv' }
const NDJSON = { accept: 'application/x-ndjson' }

let t: TestApp
let published: Post
let draft: Post
const collectionPaths = new Set<string>()

beforeAll(async () => {
  t = await buildTestApp(
    { HTTP_EXPORT_MAX_ROWS: String(MAX_ROWS) },
    {
      onRoute: (route: RouteOptions & { prefix: string }) => {
        if (route.method === 'GET' && route.config?.collection !== undefined && route.prefix === '/api/v1') collectionPaths.add(route.url)
      },
    },
  )
  const make = createFactories(t)
  published = await make.post(t.alice, { title: '=1+1', content: 'Commas, "quotes"\r\nand\nlines' })
  draft = await make.draft(t.alice, { title: '@draft', content: '-not a number' })
  await make.post(t.bob, { title: 'By Bob', content: 'Plain' })
  await seedEmptyFeatures(t.database.db)
})
afterAll(() => t.close())

/** `count` open todos of `userId`'s, their texts `<word> 0`, `<word> 1`, …: a word a search finds them by. */
async function addTodos(userId: number, word: string, count: number): Promise<void> {
  const now = new Date().toISOString()
  const rows = Array.from({ length: count }, (_, i) => ({ user_id: userId, text: `${word} ${i}`, completed: 0, created_at: now, updated_at: now }))
  await t.database.db.insertInto('todos').values(rows).execute()
}

describe('exports', () => {
  it('CSV: a header of the fields in the schema order, CRLF records, formula cells neutralized, commas, quotes and line breaks intact', async () => {
    // The JSON answer of the same URL, kept by the representation cache, is not what CSV gets.
    for (let i = 0; i < 2; i++) expect((await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/posts?sort=id` })).json().data).toHaveLength(1)
    const res = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/posts?sort=id`, headers: CSV })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8; header=present')
    expect(String(res.headers.vary)).toMatch(/\bAccept\b/)
    expect(res.headers.etag).toBeUndefined()
    expect(res.body.endsWith('\r\n')).toBe(true)
    const { header, rows } = csvObjects(res.body)
    expect(header).toEqual(Object.keys(PostSchema.properties))
    // Anonymous: the draft is not there.
    expect(rows.map((row) => Number(row.id))).toEqual([published.id])
    expect(rows[0]).toMatchObject({ title: "'=1+1", content: 'Commas, "quotes"\r\nand\nlines', userId: String(t.alice.id), status: 'published' })
    expect(rows[0]?.publishedAt).toBe(published.publishedAt)
  })

  it("follows the caller's rights: the owner's export holds her draft, null written as an empty field", async () => {
    const res = await t.request({
      method: 'GET',
      url: `/api/v1/users/${t.alice.id}/posts?sort=id&select=title,publishedAt`,
      headers: CSV,
      token: t.tokens.alice,
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(readCsv(res.body)).toEqual([
      ['id', 'title', 'publishedAt'],
      [String(published.id), "'=1+1", published.publishedAt],
      [String(draft.id), "'@draft", ''],
    ])
  })

  it("NDJSON: one item a line, as JSON pages write them, with the query's filters, sort and select", async () => {
    const url = `/api/v2/posts?status=published&sort=-title&select=title,userId`
    const [lines, page] = await Promise.all([t.request({ method: 'GET', url, headers: NDJSON }), t.request({ method: 'GET', url })])
    expect(lines.statusCode, lines.body).toBe(200)
    expect(lines.headers['content-type']).toBe('application/x-ndjson; charset=utf-8')
    expect(lines.body.endsWith('\n')).toBe(true)
    const items = lines.body
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown)
    expect(items).toEqual(page.json().data)
    for (const item of items) expect(Object.keys(item as object)).toEqual(['id', 'userId', 'title'])
  })

  it('bounds each answer, names the next in a Link, and charges by rows; the answers followed meet every row once, in order', async () => {
    const now = new Date().toISOString()
    // Half of them not completed: the filter keeps just over the bound.
    const many = 2 * (MAX_ROWS + 5)
    for (let at = 0; at < many; at += EXPORT_PAGE_ROWS) {
      const rows = Array.from({ length: Math.min(EXPORT_PAGE_ROWS, many - at) }, (_, i) => ({
        user_id: t.bob.id,
        text: `todo ${at + i}`,
        completed: (at + i) % 2,
        created_at: now,
        updated_at: now,
      }))
      await t.database.db.insertInto('todos').values(rows).execute()
    }
    const first = await t.request({ method: 'GET', url: `/api/v1/users/${t.bob.id}/todos?sort=text&completed=false`, headers: CSV })
    expect(first.statusCode, first.body).toBe(200)
    const firstRows = csvObjects(first.body).rows
    expect(firstRows).toHaveLength(MAX_ROWS)
    expect(firstRows.every((row) => row.completed === 'false')).toBe(true)
    expect(Number(first.headers['x-ratelimit-cost'])).toBe(MAX_ROWS / EXPORT_ROWS_PER_POINT)
    const next = /^<([^>]+)>; rel="next"$/.exec(String(first.headers.link))?.[1]
    expect(next).toMatch(/cursor=/)

    const rest = await t.request({ method: 'GET', url: next!, headers: CSV })
    expect(rest.statusCode, rest.body).toBe(200)
    expect(rest.headers.link).toBeUndefined()
    const restRows = csvObjects(rest.body).rows
    const texts = [...firstRows, ...restRows].map((row) => row.text)
    const expected = Array.from({ length: many }, (_, i) => i)
      .filter((i) => i % 2 === 0)
      .map((i) => `todo ${i}`)
      .sort()
    expect(texts).toEqual(expected)

    const limited = await t.request({ method: 'GET', url: `/api/v1/users/${t.bob.id}/todos?limit=3`, headers: NDJSON })
    expect(limited.body.trimEnd().split('\n')).toHaveLength(3)
    expect(limited.headers.link).toMatch(/rel="next"/)
  })

  it("reads each page after the headers in a slot of its caller's, as the request's handler ran in one", async () => {
    await addTodos(t.alice.id, 'slot', EXPORT_PAGE_ROWS + 1)
    const scheduler = t.scheduler!
    const acquired = vi.spyOn(scheduler, 'acquire')
    const ran = vi.spyOn(scheduler, 'run')
    try {
      const res = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/todos?q=slot`, token: t.tokens.bob, headers: NDJSON })
      expect(res.statusCode, res.body).toBe(200)
      expect(res.body.trimEnd().split('\n')).toHaveLength(EXPORT_PAGE_ROWS + 1)
      // The request's own slot, then one per page of rows (two pages), all under the caller's key.
      const [requestSlot] = acquired.mock.calls.map(([key]) => key)
      const pageSlots = ran.mock.calls.filter(([, , options]) => options?.kind === EXPORT_PAGE_KIND)
      expect(pageSlots.map(([key]) => key)).toEqual([requestSlot, requestSlot])
      expect(requestSlot).toContain(String(t.bob.id))
    } finally {
      acquired.mockRestore()
      ran.mockRestore()
    }
  })

  it('holds the event loop for one read of the store at a time, in both passes', async () => {
    await addTodos(t.alice.id, 'turns', EXPORT_PAGE_ROWS + 1)
    // Loop turns counted while the export is answered: reads of the store are synchronous on
    // SQLite, and nothing but a turn between them lets the sockets be read.
    const turns = countLoopTurns()
    const res = await t.request({ method: 'GET', url: `/api/v1/users/${t.alice.id}/todos?q=turns`, headers: NDJSON })
    const counted = turns()
    expect(res.statusCode, res.body).toBe(200)
    expect(res.body.trimEnd().split('\n')).toHaveLength(EXPORT_PAGE_ROWS + 1)
    // Two reads of ids, then two of rows: a turn between each two.
    expect(counted).toBeGreaterThanOrEqual(3)
  })

  it('serves every collection in both formats, and refuses what an export does not take', async () => {
    expect(collectionPaths.size).toBeGreaterThan(5)
    for (const path of collectionPaths) {
      const ids = await idsForPath(t.database.db, path.slice('/api/v1'.length))
      const url = path.replace(/:(\w+)/g, (_, name: string) => String(ids[name]))
      // An admin: the seeded rows a path names may sit under a draft.
      const csv = await t.request({ method: 'GET', url: `${url}?limit=5`, headers: CSV, token: t.tokens.admin })
      expect(csv.statusCode, `${url}: ${csv.body}`).toBe(200)
      const [header, ...records] = readCsv(csv.body)
      expect(header?.[0]).toBe('id')
      expect(records.length, url).toBeGreaterThan(0)
      const ndjson = await t.request({ method: 'GET', url: `${url}?limit=5`, headers: NDJSON, token: t.tokens.admin })
      expect(ndjson.statusCode, `${url}: ${ndjson.body}`).toBe(200)
      expect(
        ndjson.body
          .trimEnd()
          .split('\n')
          .map((line) => (JSON.parse(line) as { id: number }).id),
      ).toEqual(records.map((record) => Number(record[0])))
    }
    const refused = await t.request({ method: 'GET', url: '/api/v1/posts?include=author&page=2', headers: CSV })
    expect(refused.statusCode).toBe(400)
    expect(refused.json().error.details.map((detail: { field: string }) => detail.field)).toEqual(['include', 'page'])
  })

  it('406 names the types served: a collection lists CSV and NDJSON, a single resource serves neither', async () => {
    const xml = await t.request({ method: 'GET', url: '/api/v1/posts', headers: { accept: 'application/xml' } })
    expect(xml.statusCode).toBe(406)
    expect(xml.json().error.code).toBe('NOT_ACCEPTABLE')
    for (const type of ['application/json', 'text/csv', 'application/x-ndjson']) expect(xml.json().error.message).toContain(type)
    const one = await t.request({ method: 'GET', url: `/api/v1/posts/${published.id}`, headers: CSV })
    expect(one.statusCode).toBe(406)
    expect(one.json().error.message).not.toContain('text/csv')
    const preferred = await t.request({ method: 'GET', url: '/posts', headers: { accept: 'application/json;q=0.5, text/csv' } })
    expect(preferred.headers['content-type']).toMatch(/^text\/csv/)
  })

  it('negotiates by q, a named type over a wildcard, then the order written', () => {
    const cases: [string | undefined, string | undefined][] = [
      [undefined, undefined],
      ['*/*', undefined],
      ['text/*', 'csv'],
      ['text/csv;q=0.9, application/json;q=0.8', 'csv'],
      ['application/json, text/csv', undefined],
      ['text/csv, application/json', 'csv'],
      ['*/*, application/x-ndjson', 'ndjson'],
      ['text/csv;q=0, application/xml', undefined],
      ['TEXT/CSV', 'csv'],
      ['Application/X-NDJSON', 'ndjson'],
    ]
    for (const [accept, format] of cases) expect(exportFormatOf(accept), String(accept)).toBe(format)
  })

  it('compresses an export as it streams, when asked', async () => {
    const res = await t.request({ method: 'GET', url: `/api/v1/users/${t.bob.id}/todos`, headers: { ...CSV, 'accept-encoding': 'gzip' } })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-encoding']).toBe('gzip')
    const { gunzipSync } = await import('node:zlib')
    expect(readCsv(gunzipSync(res.rawPayload).toString('utf8'))).toHaveLength(MAX_ROWS + 1)
  })
})
