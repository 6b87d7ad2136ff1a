// The representation cache (src/http/representation-cache.ts): a GET answered again from what was
// sent, without a statement, while what it was read from has not changed; a write empties only
// what it touched; and never a stale answer, whoever writes (REST, GraphQL, another connection to
// the same file), whatever the write reaches (a renamed author inside a comment, a deleted user's
// posts). Another instance's writes are heard at once on SQLite (the file's data version) and
// within moments on PostgreSQL (NOTIFY); both stores keep answers alike.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/create-database.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { commentPath, createFactories, type Factories, postPath } from '../helpers/factories.js'
import { TEST_STORE } from '../helpers/test-store.js'
import { until } from '../helpers/until.js'

/** Whether another instance's writes reach this one after their answer (PostgreSQL: over NOTIFY). */
const HEARD_LATER = TEST_STORE === 'postgres'

/** A GraphQL mutation sent to `app` as `token`'s holder. */
const mutate = (app: FastifyInstance, query: string, token: string) =>
  app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query } })

/** The answer without what changes on every call. */
const essence = (response: LightMyRequestResponse) => ({
  status: response.statusCode,
  etag: response.headers['etag'],
  lastModified: response.headers['last-modified'],
  cacheControl: response.headers['cache-control'],
  link: response.headers['link'],
  body: response.body === '' ? '' : JSON.stringify({ ...JSON.parse(response.body), meta: { ...JSON.parse(response.body).meta, timestamp: 'now' } }),
})

describe('the representation cache', () => {
  let t: TestApp
  let make: Factories
  let statements: string[]

  beforeEach(async () => {
    statements = []
    t = await buildTestApp({}, { onQuery: (sql) => statements.push(sql) })
    make = createFactories(t)
    // On PostgreSQL the cache keeps nothing until its connection listens for the other instances' changes.
    await until(() => t.database.changes.heard())
  })
  afterEach(() => t.close())

  /** The statements the app runs for one request. */
  const counted = async (send: () => Promise<LightMyRequestResponse>) => {
    statements.length = 0
    const response = await send()
    return { response, statements: [...statements] }
  }

  it('answers a repeated GET without a statement, with the same answer and validators', async () => {
    const url = `/api/v1/users/${t.bob.id}`
    const first = await counted(() => t.request({ url }))
    expect(first.statements.length).toBeGreaterThan(0)
    const again = await counted(() => t.request({ url }))
    expect(essence(again.response)).toEqual(essence(first.response))
    expect(again.statements).toHaveLength(0)
    // A fresh timestamp each time, as without the cache.
    const stamp = (r: LightMyRequestResponse) => JSON.parse(r.body).meta.timestamp as string
    expect(Date.parse(stamp(again.response))).toBeGreaterThanOrEqual(Date.parse(stamp(first.response)))

    const notModified = await counted(() => t.request({ url, headers: { 'if-none-match': String(first.response.headers['etag']) } }))
    expect(notModified.response.statusCode).toBe(304)
    expect(notModified.response.body).toBe('')
    expect(notModified.response.headers['etag']).toBe(first.response.headers['etag'])
    expect(notModified.response.headers['content-type']).toBeUndefined()
    expect(notModified.statements).toHaveLength(0)

    const since = await counted(() => t.request({ url, headers: { 'if-modified-since': String(first.response.headers['last-modified']) } }))
    expect(since.response.statusCode).toBe(304)
  })

  it('keeps pages with their Link header, per query string and API version', async () => {
    for (let i = 0; i < 3; i++) await make.user()
    for (const url of ['/api/v1/users?limit=2', '/api/v1/users?limit=2&page=2', '/api/v2/users?limit=2']) {
      const first = await t.request({ url })
      expect(first.headers['link']).toBeDefined()
      const again = await counted(() => t.request({ url }))
      expect(essence(again.response)).toEqual(essence(first))
      expect(again.statements).toEqual([])
    }
    const v1 = JSON.parse((await t.request({ url: '/api/v1/users?limit=2' })).body)
    const v2 = JSON.parse((await t.request({ url: '/api/v2/users?limit=2' })).body)
    expect(v1.meta.pagination.total).toBeDefined()
    expect(v2.meta.pagination.total).toBeUndefined()
  })

  it('keeps each caller its own answer: a draft is seen only by its author, whoever asked first', async () => {
    const draft = await make.draft(t.alice, { title: 'Not yet' })
    const url = `/api/v1/users/${t.alice.id}/posts`
    const titles = async (token?: string) =>
      (JSON.parse((await t.request({ url, ...(token === undefined ? {} : { token }) })).body).data as { title: string }[]).map((p) => p.title)
    expect(await titles(t.tokens.alice)).toEqual([draft.title])
    expect(await titles()).toEqual([])
    expect(await titles(t.tokens.bob)).toEqual([])
    expect(await titles(t.tokens.alice)).toEqual([draft.title])
    const anonymous = await t.request({ url })
    const signedIn = await t.request({ url, token: t.tokens.alice })
    expect(anonymous.headers['cache-control']).toMatch(/^public/)
    expect(signedIn.headers['cache-control']).toBe('private, no-cache')
  })

  it('sees a write at once, through REST, GraphQL or another connection', async () => {
    const url = `/api/v1/users/${t.bob.id}`
    const name = async () => JSON.parse((await t.request({ url })).body).data.name as string
    expect(await name()).toBe('Bob')
    await t.request({ method: 'PATCH', url, token: t.tokens.bob, json: { name: 'Bob over REST' } })
    expect(await name()).toBe('Bob over REST')
    const answer = await mutate(t.app, `mutation { updateUser(id: "${t.bob.id}", input: { name: "Bob over GraphQL" }) { name } }`, t.tokens.bob)
    expect(answer.json().errors).toBeUndefined()
    expect(await name()).toBe('Bob over GraphQL')
    // As the CLI or another process would: not through the app at all.
    await t.database.db.updateTable('users').set({ name: 'Bob from elsewhere' }).where('id', '=', t.bob.id).execute()
    expect(await name()).toBe('Bob from elsewhere')
  })

  it("sees what a write reaches beyond its row: an author's new name in their comment, a deleted user's posts", async () => {
    const post = await make.post(t.alice)
    const comment = await make.comment(post, t.bob)
    const url = commentPath(post, comment)
    const author = async () => JSON.parse((await t.request({ url })).body).data.author.name as string
    expect(await author()).toBe('Bob')
    await t.request({ method: 'PATCH', url: `/api/v1/users/${t.bob.id}`, token: t.tokens.bob, json: { name: 'Robert' } })
    expect(await author()).toBe('Robert')

    expect((await t.request({ url: postPath(post) })).statusCode).toBe(200)
    expect((await t.request({ url })).statusCode).toBe(200)
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${t.alice.id}`, token: t.tokens.admin })).statusCode).toBe(204)
    expect((await t.request({ url: postPath(post) })).statusCode).toBe(404)
    expect((await t.request({ url })).statusCode).toBe(404)
  })

  it('answers what an uncached instance on the same data answers, after any sequence of writes from either', async () => {
    // A second instance over the same store, keeping nothing: the oracle, and a writer the first cannot hear.
    const twinDatabase = openDatabase(t.config.database)
    const twin: FastifyInstance = await buildApp({ ...t.config, http: { ...t.config.http, representationCacheMb: 0 } }, { database: twinDatabase })
    try {
      const posts = [await make.post(t.alice), await make.draft(t.alice), await make.post(t.bob)]
      const comments = [await make.comment(posts[0]!, t.bob), await make.comment(posts[2]!, t.alice)]
      const reads = [
        `/api/v1/users/${t.alice.id}`,
        `/api/v1/users?sort=name`,
        `/api/v2/users?limit=2`,
        `/api/v1/users/${t.alice.id}/posts`,
        postPath(posts[0]!),
        postPath(posts[1]!),
        `${postPath(posts[0]!)}/comments`,
        commentPath(posts[0]!, comments[0]!),
        commentPath(posts[2]!, comments[1]!),
      ]
      const readers = [undefined, t.tokens.alice, t.tokens.bob]
      // A fixed sequence of pseudo-random writes (a linear congruential generator: the same every run).
      let seed = 20_261_126
      const next = (n: number) => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
        return seed % n
      }
      const writes = [
        (app: FastifyInstance, i: number) =>
          app.inject({
            method: 'PATCH',
            url: `/api/v1/users/${t.alice.id}`,
            headers: { authorization: `Bearer ${t.tokens.alice}` },
            payload: { name: `Alice ${i}` },
          }),
        (app: FastifyInstance, i: number) =>
          app.inject({
            method: 'PATCH',
            url: postPath(posts[i % 2]!),
            headers: { authorization: `Bearer ${t.tokens.alice}` },
            payload: { title: `Title ${i}` },
          }),
        (app: FastifyInstance, i: number) =>
          app.inject({
            method: 'PATCH',
            url: postPath(posts[1]!),
            headers: { authorization: `Bearer ${t.tokens.alice}` },
            payload: { status: i % 2 === 0 ? 'published' : 'draft' },
          }),
        (app: FastifyInstance, i: number) =>
          app.inject({
            method: 'POST',
            url: `${postPath(posts[0]!)}/comments`,
            headers: { authorization: `Bearer ${t.tokens.bob}` },
            payload: { content: `Comment ${i}` },
          }),
        (app: FastifyInstance, i: number) => mutate(app, `mutation { updateUser(id: "${t.bob.id}", input: { name: "Bob ${i}" }) { id } }`, t.tokens.bob),
        async (_app: FastifyInstance, i: number) => {
          await t.database.db
            .updateTable('comments')
            .set({ content: `Edited elsewhere ${i}` })
            .where('id', '=', comments[0]!.id)
            .execute()
        },
      ]
      // What the first instance has heard: on PostgreSQL the twin's writes arrive over NOTIFY, moments after their answer.
      let heard = 0
      const stopCounting = t.database.changes.listen(() => heard++)
      for (let step = 0; step < 40; step++) {
        const writer = next(2) === 0 ? t.app : twin
        const heardBefore = heard
        const written = await writes[next(writes.length)]!(writer, step)
        if (written !== undefined && 'statusCode' in written) expect(written.statusCode).toBeLessThan(300)
        if (HEARD_LATER && writer === twin) await until(() => heard > heardBefore, 2000)
        for (let r = 0; r < 3; r++) {
          const url = reads[next(reads.length)]!
          const token = readers[next(readers.length)]
          const headers = token === undefined ? {} : { authorization: `Bearer ${token}` }
          const cached = await t.app.inject({ url, headers })
          const fresh = await twin.inject({ url, headers })
          expect(essence(cached), `step ${step}: GET ${url}`).toEqual(essence(fresh))
        }
      }
      stopCounting()
    } finally {
      await twin.close()
    }
  })

  it('empties only what a write touched: the row it changed, the pages of its table, what shows it', async () => {
    const post = await make.post(t.alice)
    const comment = await make.comment(post, t.bob)
    const urls = {
      alice: `/api/v1/users/${t.alice.id}`,
      bob: `/api/v1/users/${t.bob.id}`,
      users: '/api/v1/users',
      post: postPath(post),
      byAlice: `/api/v1/users/${t.alice.id}/posts`,
      bobsComment: commentPath(post, comment),
      withPosts: `/api/v1/users/${t.alice.id}?include=posts`,
    }
    for (const url of Object.values(urls)) expect((await t.request({ url })).statusCode).toBe(200)
    const readsOf = async (url: string) => (await counted(() => t.request({ url }))).statements.length

    // Bob renamed: his row, the users' pages, his comment (it shows his name), and what embeds anything.
    expect((await t.request({ method: 'PATCH', url: urls.bob, token: t.tokens.bob, json: { name: 'Robert' } })).statusCode).toBe(200)
    expect(await readsOf(urls.alice)).toBe(0)
    expect(await readsOf(urls.post)).toBe(0)
    expect(await readsOf(urls.byAlice)).toBe(0)
    expect(await readsOf(urls.bob)).toBeGreaterThan(0)
    expect(await readsOf(urls.users)).toBeGreaterThan(0)
    expect(await readsOf(urls.bobsComment)).toBeGreaterThan(0)
    expect(await readsOf(urls.withPosts)).toBeGreaterThan(0)
    expect(JSON.parse((await t.request({ url: urls.bobsComment })).body).data.author.name).toBe('Robert')

    // A post added: the pages of posts, not the users nor another post.
    await t.request({ method: 'POST', url: urls.byAlice, token: t.tokens.alice, json: { title: 'Second', content: 'More.' } })
    expect(await readsOf(urls.alice)).toBe(0)
    expect(await readsOf(urls.post)).toBe(0)
    expect(await readsOf(urls.byAlice)).toBeGreaterThan(0)
    expect(JSON.parse((await t.request({ url: urls.byAlice })).body).data).toHaveLength(2)
  })

  it("hears another instance's write: at once on SQLite, within moments on PostgreSQL", async () => {
    const twinDatabase = openDatabase(t.config.database)
    const twin: FastifyInstance = await buildApp(t.config, { database: twinDatabase })
    try {
      const url = `/api/v1/users/${t.alice.id}`
      expect((await t.request({ url })).statusCode).toBe(200)
      expect((await counted(() => t.request({ url }))).statements).toEqual([])
      const written = await twin.inject({ method: 'PATCH', url, headers: { authorization: `Bearer ${t.tokens.alice}` }, payload: { name: 'Alice elsewhere' } })
      expect(written.statusCode).toBe(200)
      const name = async () => JSON.parse((await t.request({ url })).body).data.name as string
      if (HEARD_LATER) await until(async () => (await name()) === 'Alice elsewhere', 2000)
      else expect(await name()).toBe('Alice elsewhere')
      // And kept again once read.
      expect((await counted(() => t.request({ url }))).statements).toEqual([])
    } finally {
      await twin.close()
    }
  })
})
