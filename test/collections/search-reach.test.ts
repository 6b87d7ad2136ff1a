// Every match of a search is reachable by cursor, however many rows the list holds:
// a term the full-text index cannot narrow (too common, or shorter than a trigram) is
// matched in a window of MAX_SEARCHED_ROWS rows, and sorted by id that window lies past the
// cursor, so a page that does not fill ends at the window's edge and the next one reads on. On
// both stores, forward and backward, with a filter beside the search.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_INDEXED_CANDIDATES, MAX_SEARCHED_ROWS } from '../../src/db/list-page.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
let writer: { id: number }
/** Rows of one user: two and a half windows. */
const POSTS = Math.floor(MAX_SEARCHED_ROWS * 2.5)
/** In every 10th title (more than the index's answer may bind), every 4th of those a draft. */
const COMMON = 'Pangolin'
/** Shorter than a trigram: in the oldest and the newest few titles only. */
const SHORT = 'zq'
const hasCommon = (i: number) => i % 10 === 0
const isDraft = (i: number) => i % 40 === 0
const hasShort = (i: number) => i < 15 || i >= POSTS - 3
/** The ids of the user's posts, oldest first (index i is the i-th post written). */
let ids: number[] = []

beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_MAX: '100000' })
  writer = await t.createUser({ name: 'Reacher', email: 'reacher@example.com' })
  const at = new Date('2025-01-01T00:00:00.000Z').toISOString()
  const rows = Array.from({ length: POSTS }, (_, i) => ({
    user_id: writer.id,
    title: `${hasCommon(i) ? COMMON : 'plain'} ${hasShort(i) ? SHORT : ''} ${i}`,
    content: 'text',
    status: isDraft(i) ? ('draft' as const) : ('published' as const),
    published_at: isDraft(i) ? null : at,
    created_at: at,
    updated_at: at,
  }))
  for (let i = 0; i < rows.length; i += 1000) {
    await t.database.db
      .insertInto('posts')
      .values(rows.slice(i, i + 1000))
      .execute()
  }
  const written = await t.database.db.selectFrom('posts').select('id').where('user_id', '=', writer.id).orderBy('id').execute()
  ids = written.map((row) => row.id)
  expect(ids).toHaveLength(POSTS)
}, 180_000)
afterAll(() => t.close())

interface Page {
  ids: number[]
  next: string | null
  prev: string | null
}

async function page(query: string): Promise<Page> {
  const res = await t.request({ method: 'GET', url: `/api/v2/users/${writer.id}/posts?${query}`, token: t.tokens.admin })
  expect(res.statusCode, res.body).toBe(200)
  const body = res.json()
  const prev = /<[^>]*[?&]cursor=([^&>]+)[^>]*>; rel="prev"/.exec(String(res.headers.link))?.[1] ?? null
  return { ids: body.data.map((item: { id: number }) => item.id), next: body.meta.pagination.nextCursor, prev }
}

/** Every page of the query, following one of the cursors until it runs out. */
async function walk(query: string, start: string | null, follow: 'next' | 'prev'): Promise<Page[]> {
  const pages: Page[] = []
  let cursor = start
  do {
    const got = await page(`${query}${cursor === null ? '' : `&cursor=${cursor}`}`)
    pages.push(got)
    cursor = got[follow]
    expect(pages.length, 'the walk ends').toBeLessThan(POSTS)
  } while (cursor !== null)
  return pages
}

const idsWhere = (keep: (i: number) => boolean) => ids.filter((_, i) => keep(i))

describe('a search the index cannot narrow, paged by cursor', () => {
  it(`reaches every match of a term in more than ${MAX_INDEXED_CANDIDATES} rows of more than ${MAX_SEARCHED_ROWS}, in id order, each once`, async () => {
    const expected = idsWhere(hasCommon)
    expect(expected.length).toBeGreaterThan(MAX_INDEXED_CANDIDATES)
    const pages = await walk(`q=${COMMON.toLowerCase()}&limit=100`, null, 'next')
    const found = pages.flatMap((p) => p.ids)
    expect(found).toEqual(expected)
    expect(pages.every((p) => p.ids.length <= 100)).toBe(true)
  })

  it('reaches them newest first, with a filter beside the search, and back again by the previous cursors', async () => {
    const expected = idsWhere((i) => hasCommon(i) && !isDraft(i)).reverse()
    const query = `q=${COMMON}&status=published&sort=-id&limit=100`
    const pages = await walk(query, null, 'next')
    expect(pages.flatMap((p) => p.ids)).toEqual(expected)
    const last = pages.at(-1) as Page
    const back = await walk(query, last.prev, 'prev')
    expect([...back.reverse().flatMap((p) => p.ids), ...last.ids]).toEqual(expected)
  })

  it('reaches a short term found only in the oldest and newest rows: pages between them end empty at their window, and go on', async () => {
    const expected = idsWhere(hasShort)
    const pages = await walk(`q=${SHORT}&limit=10`, null, 'next')
    expect(pages.flatMap((p) => p.ids)).toEqual(expected)
    // The first window holds the oldest 15 (a full page, then 5 and the edge), the middle windows none.
    expect(pages.some((p) => p.ids.length === 0 && p.next !== null)).toBe(true)
    expect(pages.length).toBeLessThanOrEqual(2 + Math.ceil(POSTS / MAX_SEARCHED_ROWS) + 1)
    const newestFirst = await walk(`q=${SHORT}&sort=-id&limit=10`, null, 'next')
    expect(newestFirst.flatMap((p) => p.ids)).toEqual([...expected].reverse())
  })

  it('counts the matches in the newest rows for total whatever the cursor, as before (API v1)', async () => {
    // A short term, which both stores match in a window.
    const total = async (query: string) => {
      const res = await t.request({ method: 'GET', url: `/api/v1/users/${writer.id}/posts?q=${SHORT}&limit=1${query}`, token: t.tokens.admin })
      expect(res.statusCode, res.body).toBe(200)
      return res.json().meta.pagination
    }
    const first = await total('')
    const inNewest = idsWhere((i) => hasShort(i) && i >= POSTS - MAX_SEARCHED_ROWS).length
    expect(first.total).toBe(inNewest)
    expect((await total(`&cursor=${first.nextCursor}`)).total).toBe(inNewest)
  })
})
