// `q` with the rest of the query language: a search is one more condition beside the
// operators, paged by cursor to the end with every match once; the full-text index moves with the
// transaction that writes the rows (a rolled-back write leaves nothing to find); and a term the
// index names more than MAX_INDEXED_CANDIDATES rows for is matched row by row, all of them (the
// table here is under MAX_SEARCHED_ROWS). On both stores;
// the semantics of a term (case, `%`, `_`, `\`, `fields`) are in query-language.test.ts and
// bounded-reads.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_INDEXED_CANDIDATES } from '../../src/db/list-page.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
let writer: { id: number }
/** Every third post's title holds this term; ages follow the id. */
const TERM = 'Wombat'
const POSTS = MAX_INDEXED_CANDIDATES * 3 + 30

interface Item {
  id: number
  title: string
  createdAt: string
}

beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_MAX: '100000' })
  writer = await t.createUser({ name: 'Searcher', email: 'searcher@example.com' })
  const start = Date.parse('2025-01-01T00:00:00.000Z')
  const rows = Array.from({ length: POSTS }, (_, i) => {
    const at = new Date(start + i * 60_000).toISOString()
    return {
      user_id: writer.id,
      title: i % 3 === 0 ? `a ${i % 2 === 0 ? TERM.toLowerCase() : TERM.toUpperCase()} ${i}` : `plain ${i}`,
      content: 'text',
      status: 'published' as const,
      published_at: at,
      created_at: at,
      updated_at: at,
    }
  })
  for (let i = 0; i < rows.length; i += 1000) {
    await t.database.db
      .insertInto('posts')
      .values(rows.slice(i, i + 1000))
      .execute()
  }
}, 120_000)
afterAll(() => t.close())

async function page(url: string): Promise<{ items: Item[]; next: string | null }> {
  const res = await t.request({ method: 'GET', url })
  expect(res.statusCode, res.body).toBe(200)
  const body = res.json()
  return { items: body.data, next: body.meta.pagination.nextCursor }
}

/** Every item of the query, following nextCursor. */
async function everyItem(query: string): Promise<Item[]> {
  const items: Item[] = []
  let cursor: string | null = null
  do {
    const got = await page(`/api/v2/users/${writer.id}/posts?${query}${cursor === null ? '' : `&cursor=${cursor}`}`)
    items.push(...got.items)
    cursor = got.next
  } while (cursor !== null)
  return items
}

describe('search with the query language', () => {
  it('pages a search narrowed by operators to its end by cursor, every match once, in order', async () => {
    const since = '2025-01-01T10:00:00Z'
    const until = '2025-01-01T20:00:00Z'
    const items = await everyItem(`q=${TERM}&fields=title&createdAt[gte]=${since}&createdAt[lt]=${until}&sort=-createdAt&limit=7&select=title,createdAt`)
    const expected: number[] = []
    const all = await t.database.db.selectFrom('posts').select(['id', 'title', 'created_at']).where('user_id', '=', writer.id).orderBy('id', 'desc').execute()
    for (const row of all) {
      const at = Date.parse(String(row.created_at instanceof Date ? row.created_at.toISOString() : row.created_at))
      if (row.title.toLowerCase().includes(TERM.toLowerCase()) && at >= Date.parse(since) && at < Date.parse(until)) expected.push(row.id)
    }
    expect(expected.length).toBeGreaterThan(100)
    expect(items.map((item) => item.id)).toEqual(expected)
    expect(new Set(items.map((item) => item.id)).size).toBe(items.length)
    expect(Object.keys(items[0] ?? {}).sort()).toEqual(['createdAt', 'id', 'title'])
  })

  it(`finds every match of a term in more than ${MAX_INDEXED_CANDIDATES} rows (too many ids to bind), in either case`, async () => {
    const items = await everyItem(`q=${TERM.toLowerCase()}&limit=100&select=title`)
    expect(items.length).toBe(Math.ceil(POSTS / 3))
    expect(items.length).toBeGreaterThan(MAX_INDEXED_CANDIDATES)
    expect(items.every((item) => item.title.toLowerCase().includes(TERM.toLowerCase()))).toBe(true)
  })

  it('moves the index with the write transaction: a rolled-back insert or change leaves nothing to find', async () => {
    const found = async (term: string) => (await page(`/api/v2/users/${writer.id}/posts?q=${term}`)).items.map((item) => item.id)
    const now = new Date().toISOString()
    const row = { user_id: writer.id, content: 'text', status: 'published' as const, published_at: now, created_at: now, updated_at: now }
    await expect(
      t.database.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('posts')
          .values({ ...row, title: 'Quetzal rolled back' })
          .execute()
        await trx.updateTable('posts').set({ title: 'Axolotl rolled back' }).where('user_id', '=', writer.id).where('title', '=', 'plain 1').execute()
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    expect(await found('quetzal')).toEqual([])
    expect(await found('axolotl')).toEqual([])
    expect(await found('plain%201')).not.toEqual([])

    const committed = await t.database.db
      .insertInto('posts')
      .values({ ...row, title: 'Quetzal committed' })
      .returning('id')
      .executeTakeFirstOrThrow()
    expect(await found('QUETZAL')).toEqual([committed.id])
  })
})
