// `threadline import` refuses, with each value's JSON path and before writing anything, the values
// the API could not serve afterwards: ids past what the API names, instants outside what it reads,
// and strings longer than any field, the last without holding them (the import's heap is bounded).
import { once } from 'node:events'
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, SECOND_STORE_RUN, type TestDatabase } from '../helpers/test-store.js'
import { dataFiles, readers, threadline, threadlineFails } from './import-fixture.js'

const fileOf = dataFiles('threadline-import-values-')
const at = '2026-01-02T03:04:05.006Z'
const user = (id: unknown, email: string, createdAt: unknown = at) => ({
  id,
  name: `User ${String(id)}`,
  email,
  age: null,
  avatar: null,
  role: 'user',
  passwordHash: null,
  createdAt,
  updatedAt: at,
})
const marker = { version: 1 }

let db: TestDatabase
beforeAll(async () => {
  db = await freshDatabase()
})
afterAll(() => db.drop())
// Registered after the drop, so closed before it (after-hooks run in reverse order).
const { withApp } = readers()

async function userIds(url: string): Promise<number[]> {
  return withApp(url, async (app) => (await app.inject({ url: '/api/v1/users?limit=100' })).json().data.map((u: { id: number }) => u.id))
}

describe('threadline import: values the API could not serve', { timeout: 120_000 }, () => {
  it.skipIf(SECOND_STORE_RUN)(
    'refuses an id past 2147483647, written out or as 1e308, in a row or a reference, with its path, and writes nothing',
    async () => {
      // Written by hand: JSON.stringify would write 1e308 as 1e+308 (the same number).
      const file = fileOf(
        'big-ids.json',
        `{"threadline": {"version": 1}, "users": [${JSON.stringify(user(1, 'one@example.com'))}, ${JSON.stringify(user(2147483648, 'big@example.com'))},
        ${JSON.stringify(user(3, 'huge@example.com')).replace('"id":3', '"id":1e308')}],
        "posts": [{"id": 1, "userId": 2147483648, "title": "T", "content": "C", "status": "published", "publishedAt": "${at}", "createdAt": "${at}", "updatedAt": "${at}"}]}`,
      )
      const failed = await threadlineFails(db.url, ['import', file])
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain('users[1].id: must be at most 2147483647')
      expect(failed.stderr).toContain('users[2].id: must be at most 2147483647')
      expect(failed.stderr).toContain('posts[0].userId: must be at most 2147483647')
      expect(failed.stderr).toContain('nothing was imported')
      expect(failed.stderr).not.toMatch(/out of range|datatype mismatch|\n\s+at /)
      expect(await userIds(db.url)).toEqual([])
    },
  )

  it.skipIf(SECOND_STORE_RUN)('refuses an instant in the year 0 with its path, and writes nothing', async () => {
    const file = fileOf('year-zero.json', { threadline: marker, users: [user(1, 'one@example.com'), user(2, 'zero@example.com', '0000-01-01T00:00:00.000Z')] })
    const failed = await threadlineFails(db.url, ['import', file])
    expect(failed.stderr).toContain('users[1].createdAt: must be an ISO 8601 date-time with an offset (Z or ±hh:mm) in the years 0001 to 9999')
    expect(failed.stderr).not.toMatch(/out of range|\n\s+at /)
    expect(await userIds(db.url)).toEqual([])
  })

  it('stores instants as the API writes them, so a createdAt cursor walks past rows given with an offset', async () => {
    const file = fileOf('offsets.json', {
      threadline: marker,
      users: [user(1, 'one@example.com', '2026-01-02T04:04:05.006+01:00'), user(2, 'two@example.com', '2026-01-02T03:04:06Z'), user(3, 'three@example.com')],
    })
    await threadline(db.url, ['import', '--replace', file])
    await withApp(db.url, async (app) => {
      const first = (await app.inject({ url: '/api/v1/users?sort=createdAt&limit=1' })).json()
      expect(first.data.map((u: { id: number; createdAt: string }) => [u.id, u.createdAt])).toEqual([[1, '2026-01-02T03:04:05.006Z']])
      const next = await app.inject({ url: `/api/v1/users?sort=createdAt&limit=2&cursor=${first.meta.pagination.nextCursor}` })
      expect(next.statusCode).toBe(200)
      expect(next.json().data.map((u: { id: number; createdAt: string }) => [u.id, u.createdAt])).toEqual([
        [3, at],
        [2, '2026-01-02T03:04:06.000Z'],
      ])
    })
  })

  it.skipIf(SECOND_STORE_RUN)('refuses a 100 MB string with its path as soon as it is longer than any field, within its bounded heap', async () => {
    // Written as a stream, a megabyte at a time: the test holds none of it whole either.
    const dir = mkdtempSync(join(tmpdir(), 'threadline-import-huge-'))
    try {
      const file = join(dir, 'huge.json')
      const out = createWriteStream(file)
      out.write(`{"users": [${JSON.stringify(user(10, 'ten@example.com'))}, {"id": 11, "email": "eleven@example.com", "name": "`)
      const megabyte = 'a'.repeat(2 ** 20)
      for (let i = 0; i < 100; i++) if (!out.write(megabyte)) await once(out, 'drain')
      out.end('"}]}')
      await once(out, 'close')
      const before = await userIds(db.url)
      const failed = await threadlineFails(db.url, ['import', file])
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain('users[1].name: is a string longer than any field accepts (100,000 characters); not read')
      expect(failed.stderr).not.toMatch(/heap|FATAL|\n\s+at /)
      expect(await userIds(db.url)).toEqual(before)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
