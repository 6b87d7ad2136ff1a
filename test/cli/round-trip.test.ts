// Export → import → the same API. A database of the run's store holds the demo data and
// the edge rows of export-fixture.ts; `threadline export --output F` (Threadline's format) writes it
// out, `threadline import F` loads it into a second, empty database of the same store, and an app on
// each is read over REST: every page of every list and every single item, as anonymous and as the
// owner of a draft. The bodies must be equal once meta.timestamp (the time of the answer) is
// removed; nothing else may differ — ids, timestamps, drafts, pagination totals and cursors all
// travel. ETags are not compared (they hash the same body, but headers are not this test's
// subject). Tokens do not travel, so each database gets its own for the draft's owner.
import { isDeepStrictEqual } from 'node:util'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase, type Database } from '../../src/db/create-database.js'
import { createMemoryEvents } from '../../src/events/memory-events.js'
import type { AppTopics } from '../../src/features.js'
import { createTokensService } from '../../src/tokens/tokens.service.js'
import { createUsersService } from '../../src/users/users.service.js'
import { freshDatabase, type TestDatabase } from '../helpers/test-store.js'
import { type EdgeRows, PASSWORD, seedWithEdgeRows, threadline } from './export-fixture.js'

type Body = Record<string, unknown> & { data?: unknown; meta?: Record<string, unknown> }
type Item = { id: number }

interface Side {
  store: TestDatabase
  app: FastifyInstance
  database: Database
  /** A bearer token of the draft's owner, made on this database. */
  ownerToken: string
}

const dir = mkdtempSync(join(tmpdir(), 'threadline-round-trip-'))
let edge: EdgeRows
let source: Side
let target: Side

/** An app on an existing database, out of the way of rate limits (thousands of reads from one address). */
async function sideOn(store: TestDatabase, ownerId: number): Promise<Side> {
  const config = loadConfig({
    HTTP_SHED_LOOP_DELAY_MS: '0',
    DATABASE_URL: store.url,
    LOG_LEVEL: 'silent',
    SEED_DEMO_DATA: 'false',
    RATE_LIMIT_MAX: '1000000',
    RATE_LIMIT_AUTHENTICATED_MAX: '1000000',
  })
  const app = await buildApp(config)
  const database = openDatabase(config.database)
  // As the operator's CLI would issue it: no allowance, nobody listening.
  const events = createMemoryEvents<AppTopics>()
  const users = createUsersService({ db: database.db, events, passwordChanges: 'unlimited' })
  const tokens = createTokensService({ db: database.db, events, users, tokenTtlMs: config.tokenTtlMs, signInAllowance: 'unlimited' })
  const ownerToken = (await tokens.issueFor(String(ownerId), 3_600_000)).token
  return { store, app, database, ownerToken }
}

async function getBody(side: Side, url: string, token?: string): Promise<{ status: number; body: Body }> {
  const res = await side.app.inject({ method: 'GET', url, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  const body = res.json<Body>()
  // The one part of an answer that is about the answer, not the data.
  if (body.meta !== undefined) delete body.meta.timestamp
  return { status: res.statusCode, body }
}

/**
 * Everything the nested REST routes show a caller, keyed by what was asked (page n of a list, not
 * its cursor, so that a cursor which differed would show as a difference in the body, not a
 * missing key). Each side follows its own lists, so a row only one side has shows up too.
 */
async function crawl(side: Side, token: string | undefined, extra: string[]): Promise<Map<string, unknown>> {
  const seen = new Map<string, unknown>()
  const get = (url: string) => getBody(side, url, token)

  async function everyPage(base: string, limit = 100): Promise<Item[]> {
    const items: Item[] = []
    let cursor: string | null = null
    for (let page = 1; ; page++) {
      const { status, body } = await get(`${base}?limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`)
      seen.set(`${base} by ${limit}, page ${page}`, { status, body })
      if (status !== 200) return items
      items.push(...(body.data as Item[]))
      cursor = (body.meta?.pagination as { nextCursor: string | null }).nextCursor
      if (cursor === null) return items
    }
  }
  async function one(url: string) {
    seen.set(url, await get(url))
  }

  for (const user of await everyPage('/api/v1/users')) {
    const at = `/api/v1/users/${user.id}`
    await one(at)
    for (const post of await everyPage(`${at}/posts`)) {
      await one(`${at}/posts/${post.id}`)
      const comments = await everyPage(`${at}/posts/${post.id}/comments`)
      await Promise.all(comments.map((comment) => one(`${at}/posts/${post.id}/comments/${comment.id}`)))
    }
    await Promise.all((await everyPage(`${at}/todos`)).map((todo) => one(`${at}/todos/${todo.id}`)))
  }
  for (const url of extra) await one(url)
  // No list of the demo data is longer than 100: walk two in short pages, so that cursors are followed and compared.
  await everyPage('/api/v1/users', 4)
  await everyPage('/api/v1/users/1/todos', 7)
  return seen
}

/** The first few keys whose answers differ, both answers shown: [] when the two are the same. */
function differences(a: Map<string, unknown>, b: Map<string, unknown>) {
  const keys = [...new Set([...a.keys(), ...b.keys()])]
  return keys
    .filter((key) => !isDeepStrictEqual(a.get(key), b.get(key)))
    .slice(0, 5)
    .map((key) => ({ key, source: a.get(key), target: b.get(key) }))
}

beforeAll(async () => {
  const [from, to] = await Promise.all([freshDatabase(), freshDatabase()])
  edge = await seedWithEdgeRows(from.url)
  const file = join(dir, 'export.json')
  await threadline(from.url, ['export', '--output', file])
  await threadline(to.url, ['import', file])
  source = await sideOn(from, edge.user.id)
  target = await sideOn(to, edge.user.id)
}, 120_000)

afterAll(async () => {
  for (const side of [source, target]) {
    await side?.app.close()
    await side?.database.close()
    await side?.store.drop()
  }
})

describe('export, then import into an empty database', { timeout: 60_000 }, () => {
  it('answers every list page and every item the same to anonymous callers', async () => {
    // The draft by its address: 404 on both for anyone but its owner.
    const draft = `/api/v1/users/${edge.user.id}/posts/${edge.draftPostId}`
    const before = await crawl(source, undefined, [draft])
    const after = await crawl(target, undefined, [draft])
    expect(differences(before, after)).toEqual([])
    expect(before.get(draft)).toMatchObject({ status: 404 })
    // Short pages were followed by their cursors.
    expect(before.has('/api/v1/users by 4, page 3')).toBe(true)
    expect(before.has('/api/v1/users/1/todos by 7, page 2')).toBe(true)
    // The crawl saw everything an anonymous caller may: each published post, its comments, each todo.
    const items = (pattern: RegExp) => [...before.keys()].filter((key) => pattern.test(key)).length
    const { db } = source.database
    const n = (row: { n: string | number | bigint }) => Number(row.n)
    const posts = await db
      .selectFrom('posts')
      .where('status', '=', 'published')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow()
    const comments = await db
      .selectFrom('comments')
      .innerJoin('posts', 'posts.id', 'comments.post_id')
      .where('posts.status', '=', 'published')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow()
    const todos = await db
      .selectFrom('todos')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow()
    // The published posts, and the draft asked for by its address.
    expect(items(/\/posts\/\d+$/)).toBe(n(posts) + 1)
    expect(items(/\/comments\/\d+$/)).toBe(n(comments))
    expect(items(/\/todos\/\d+$/)).toBe(n(todos))
    expect(items(/\/todos\/\d+$/)).toBeGreaterThan(200)
  })

  it("answers the draft's owner the same, drafts included", async () => {
    const draft = `/api/v1/users/${edge.user.id}/posts/${edge.draftPostId}`
    const before = await crawl(source, source.ownerToken, [])
    const after = await crawl(target, target.ownerToken, [])
    expect(differences(before, after)).toEqual([])
    expect(before.get(draft)).toMatchObject({ status: 200, body: { data: { id: edge.draftPostId, status: 'draft', publishedAt: null } } })
    expect(after.get(draft)).toEqual(before.get(draft))
    // The edge user's comment (awkward text) and completed todo came through the crawl.
    expect(after.get(`/api/v1/users/${edge.user.id}/todos/${edge.todoId}`)).toMatchObject({ status: 200, body: { data: { completed: true } } })
    expect([...after.keys()].some((key) => key.endsWith(`/comments/${edge.commentId}`))).toBe(true)
  })

  it('signs the exported user in with the password: the hash survived', async () => {
    const res = await target.app.inject({ method: 'POST', url: '/api/v1/tokens', payload: { email: edge.user.email, password: PASSWORD } })
    expect(res.statusCode).toBe(201)
    const { token } = res.json().data as { token: string }
    const me = await getBody(target, `/api/v1/users/${edge.user.id}/posts/${edge.draftPostId}`, token)
    expect(me.status).toBe(200)
    // And a wrong one is still refused.
    const wrong = await target.app.inject({ method: 'POST', url: '/api/v1/tokens', payload: { email: edge.user.email, password: `${PASSWORD}!` } })
    expect(wrong.statusCode).toBe(401)
  })

  it('gives the next ids to a new post, comment and todo (the sequences moved past the imported rows)', async () => {
    const created = async (side: Side) => {
      const post = async (url: string, payload: object) => {
        const res = await side.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${side.ownerToken}` }, payload })
        expect(res.statusCode, res.body).toBe(201)
        return (res.json().data as Item).id
      }
      const at = `/api/v1/users/${edge.user.id}`
      const postId = await post(`${at}/posts`, { title: 'After the move', content: 'x' })
      return { post: postId, comment: await post(`${at}/posts/${postId}/comments`, { content: 'y' }), todo: await post(`${at}/todos`, { text: 'z' }) }
    }
    const maxId = async (side: Side, table: 'posts' | 'comments' | 'todos') =>
      Number(
        (
          await side.database.db
            .selectFrom(table)
            .select((eb) => eb.fn.max('id').as('id'))
            .executeTakeFirstOrThrow()
        ).id,
      )
    const expected = {
      post: (await maxId(target, 'posts')) + 1,
      comment: (await maxId(target, 'comments')) + 1,
      todo: (await maxId(target, 'todos')) + 1,
    }
    expect(await created(target)).toEqual(expected)
    // The source, which made its ids itself, gives the same ones.
    expect(await created(source)).toEqual(expected)
  })
})
