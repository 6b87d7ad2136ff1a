// Answers charged and bounded by their bytes (src/limits/answer-bytes.ts): a REST page of large
// posts takes a point per 64 KiB past the first, a replayed write's kept answer is charged what it
// sends, and an answer over 16 MiB is refused 413 PAYLOAD_TOO_LARGE in the envelope, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ANSWER_BYTES_PER_POINT, MAX_ANSWER_BYTES } from '../../src/limits/answer-bytes.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

/** Points an answer of `bytes` costs in all: one per 64 KiB begun, the request's own included. */
const pointsFor = (bytes: number) => Math.max(1, Math.ceil(bytes / ANSWER_BYTES_PER_POINT))
/** What the request took: an answer that took only its arrival's point does not say it. */
const cost = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-cost'] ?? 1)
const remaining = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-remaining'])

/**
 * A user with `count` posts (rounded up to a power of 2) of 100,000 characters of `letter`: one made
 * through the API, its content set and the post copied by SQL, doubling, so the fixture costs
 * a few statements.
 */
async function userWithLargePosts(count: number, letter: string) {
  const user = await t.createUser({ name: 'Prolific', email: `prolific-${letter.charCodeAt(0)}-${count}@example.com` })
  const token = await t.tokenFor(user.id)
  const created = await t.request({ method: 'POST', url: `/api/v1/users/${user.id}/posts`, token, json: { title: 'Long', content: '.' } })
  expect(created.statusCode).toBe(201)
  const { db } = t.database
  await db
    .updateTable('posts')
    .set({ content: letter.repeat(100_000) })
    .where('user_id', '=', user.id)
    .execute()
  const columns = ['user_id', 'title', 'content', 'status', 'published_at', 'created_at', 'updated_at'] as const
  for (let made = 1; made < count; made *= 2) {
    await db
      .insertInto('posts')
      .columns(columns)
      .expression(db.selectFrom('posts').select(columns).where('user_id', '=', user.id))
      .execute()
  }
  return { user, token }
}

describe('answers charged by their bytes', () => {
  it('charges a page of large posts a point per 64 KiB it sends, the first paid by the request', async () => {
    const { user } = await userWithLargePosts(20, 'x')
    const before = await t.request({ method: 'GET', url: '/api/v1/users/1', remoteAddress: '10.9.0.1' })
    const page = await t.request({ method: 'GET', url: `/api/v1/users/${user.id}/posts?limit=20`, remoteAddress: '10.9.0.1' })
    expect(page.statusCode).toBe(200)
    const bytes = Buffer.byteLength(page.body)
    expect(bytes).toBeGreaterThan(2_000_000)
    expect(cost(page)).toBe(pointsFor(bytes))
    expect(cost(page)).toBe(31)
    expect(remaining(page)).toBe(remaining(before) - pointsFor(bytes))
    // An ordinary answer costs its request's point, no more.
    expect(cost(await t.request({ method: 'GET', url: `/api/v1/users/${user.id}`, remoteAddress: '10.9.0.1' }))).toBe(1)
  })

  it("charges a replay of a kept answer what it sends, as the write's first answer was", async () => {
    const { user, token } = await userWithLargePosts(1, 'y')
    const write = {
      method: 'POST' as const,
      url: `/api/v1/users/${user.id}/posts`,
      token,
      headers: { 'idempotency-key': 'large-answer' },
      json: { title: 'Kept', content: 'z'.repeat(100_000) },
    }
    const first = await t.request(write)
    expect(first.statusCode).toBe(201)
    expect(cost(first)).toBe(2)
    const replays = []
    for (let i = 0; i < 3; i++) replays.push(await t.request(write))
    for (const replay of replays) {
      expect(replay.headers['idempotent-replayed']).toBe('true')
      expect(replay.json()).toEqual(first.json())
      expect(cost(replay)).toBe(pointsFor(Buffer.byteLength(replay.body)))
      expect(cost(replay)).toBe(2)
    }
    expect(remaining(replays[2]!)).toBe(remaining(first) - 3 * 2)
  })
})

describe('the bound on an answer', () => {
  it('refuses a page over 16 MiB with 413 PAYLOAD_TOO_LARGE in the envelope, saying the bound and how to ask for less', async () => {
    // 32 posts of 100,000 control characters, each written \u0001 in JSON: 19 MB of answer from 3 MB stored.
    const { user } = await userWithLargePosts(32, '\u0001')
    const refused = await t.request({ method: 'GET', url: `/api/v1/users/${user.id}/posts?limit=100`, headers: { 'accept-encoding': 'gzip' } })
    expect(refused.statusCode).toBe(413)
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(refused.headers.etag).toBeUndefined()
    expect(refused.headers['content-encoding']).toBeUndefined()
    expect(refused.json()).toEqual({
      error: {
        code: 'PAYLOAD_TOO_LARGE',
        message: expect.stringMatching(
          new RegExp(
            `^This answer would be \\d+ bytes, more than the ${MAX_ANSWER_BYTES} bytes \\(16 MiB\\) an answer may hold: ask for fewer items \\(limit\\)`,
          ),
        ),
      },
    })
    // A smaller page of the same posts is answered.
    const smaller = await t.request({ method: 'GET', url: `/api/v1/users/${user.id}/posts?limit=20` })
    expect(smaller.statusCode).toBe(200)
    expect(smaller.json().data).toHaveLength(20)
  })
})
