// Idempotency-Key on writes (src/idempotency/): a retried write replays the first answer and runs
// once; the same key for another request is 422, a key still running 409; only answers to writes
// that were done are kept, only for callers who can write, bounded in bytes; keys are per caller,
// kept in the database (another app on the same database replays them), expire and are purged in
// slices; a write whose answer was lost is not run again.
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import {
  createIdempotencyStore,
  type KeptAnswer,
  MAX_KEPT_BODY_BYTES,
  PURGE_SLICE_BYTES,
  PURGE_SLICE_ROWS,
  type PurgedSlice,
} from '../../src/idempotency/idempotency-store.js'
import { tracksWriteScopes } from '../../src/db/write-transaction.js'
import { requestFingerprint } from '../../src/idempotency/idempotent-writes.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ CORS_ORIGINS: 'https://app.example' })
})
afterAll(() => t.close())

let keys = 0
const newKey = () => `key-${Date.now()}-${++keys}`
const postsUrl = () => `/api/v1/users/${t.alice.id}/posts`

function createPost(key: string | undefined, body: object = { title: 'Once', content: 'Only once' }, headers: Record<string, string> = {}) {
  return t.request({
    method: 'POST',
    url: postsUrl(),
    token: t.tokens.alice,
    headers: { ...(key === undefined ? {} : { 'idempotency-key': key }), ...headers },
    json: body,
  })
}

/** Alice's keyed create sent to `app`: another app on the same database (a restart, another instance). */
function createPostOn(app: FastifyInstance, key: string, body: object) {
  return app.inject({
    method: 'POST',
    url: postsUrl(),
    headers: { authorization: `Bearer ${t.tokens.alice}`, 'content-type': 'application/json', 'idempotency-key': key },
    payload: JSON.stringify(body),
  })
}

async function postsTitled(title: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from posts where title = ${title}`.execute(t.database.db)
  return Number(rows[0]?.n)
}

/** The bytes of kept bodies counted for every caller (the bound's ledger). */
async function keptBytesCounted(): Promise<number> {
  const { rows } = await sql<{ n: number | string | null }>`select sum(kept_bytes) as n from idempotency_callers`.execute(t.database.db)
  return Number(rows[0]?.n ?? 0)
}

async function keptKeys(): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from idempotency_keys`.execute(t.database.db)
  return Number(rows[0]?.n)
}

describe('Idempotency-Key on REST writes', () => {
  it('replays the first answer to a retry, marked, and writes once', async () => {
    const key = newKey()
    const body = { title: 'Retried create', content: 'Sent twice' }
    const first = await createPost(key, body)
    expect(first.statusCode).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const again = await createPost(key, body)
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.headers.location).toBe(first.headers.location)
    expect(again.headers['content-type']).toBe(first.headers['content-type'])
    expect(again.json().data).toEqual(first.json().data)
    expect(await postsTitled('Retried create')).toBe(1)
  })

  it('charges a small replay the point of its arrival, as any request, and nothing more', async () => {
    const key = newKey()
    const first = await createPost(key, { title: 'Metered', content: 'Once' })
    const remaining = Number(first.headers['x-ratelimit-remaining'])
    const again = await createPost(key, { title: 'Metered', content: 'Once' })
    expect(again.headers['idempotent-replayed']).toBe('true')
    // An answer under 64 KiB takes no more than the request's own point, and does not say it.
    expect(again.headers['x-ratelimit-cost']).toBeUndefined()
    expect(Number(again.headers['x-ratelimit-remaining'])).toBe(remaining - 1)
    const next = await t.request({ method: 'GET', url: postsUrl(), token: t.tokens.alice })
    expect(Number(next.headers['x-ratelimit-remaining'])).toBe(remaining - 2)
  })

  it('refuses the key for another body, URL or method with 422, and runs nothing', async () => {
    const key = newKey()
    expect((await createPost(key, { title: 'First use', content: 'a' })).statusCode).toBe(201)
    const otherBody = await createPost(key, { title: 'Second use', content: 'b' })
    expect(otherBody.statusCode).toBe(422)
    expect(otherBody.json().error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'Idempotency-Key' }] })
    const otherUrl = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.alice.id}/todos`,
      token: t.tokens.alice,
      headers: { 'idempotency-key': key },
      json: { title: 'First use', content: 'a' },
    })
    expect(otherUrl.statusCode).toBe(422)
    expect(await postsTitled('Second use')).toBe(0)
    // Another method on the same URL: a PATCH's key sent with a DELETE deletes nothing.
    const post = String((await createPost(undefined, { title: 'Patched, not deleted', content: 'x' })).headers.location)
    const patchKey = newKey()
    const patched = await t.request({ method: 'PATCH', url: post, token: t.tokens.alice, headers: { 'idempotency-key': patchKey }, json: { content: 'y' } })
    expect(patched.statusCode).toBe(200)
    const otherMethod = await t.request({ method: 'DELETE', url: post, token: t.tokens.alice, headers: { 'idempotency-key': patchKey } })
    expect(otherMethod.statusCode).toBe(422)
    expect((await t.request({ method: 'GET', url: post, token: t.tokens.alice })).statusCode).toBe(200)
  })

  it('keeps keys per caller: the same key from another user is a write of their own', async () => {
    const key = newKey()
    expect((await createPost(key, { title: 'Shared key', content: 'alice' })).statusCode).toBe(201)
    const bobs = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.bob.id}/posts`,
      token: t.tokens.bob,
      headers: { 'idempotency-key': key },
      json: { title: 'Shared key', content: 'bob' },
    })
    expect(bobs.statusCode).toBe(201)
    expect(bobs.headers['idempotent-replayed']).toBeUndefined()
    expect(await postsTitled('Shared key')).toBe(2)
  })

  it('refuses an empty key and one over 255 characters with 400, and takes one of 255', async () => {
    for (const key of ['', '   ', 'k'.repeat(256)]) {
      const res = await createPost(key, { title: 'Bad key', content: 'x' })
      expect(res.statusCode, JSON.stringify(key)).toBe(400)
      expect(res.json().error).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'Idempotency-Key' }] })
    }
    expect(await postsTitled('Bad key')).toBe(0)
    expect((await createPost('k'.repeat(255), { title: 'Long key', content: 'x' })).statusCode).toBe(201)
  })

  it('keeps nothing for a refusal the service made (403): no write was done, and the retry is judged again', async () => {
    const key = newKey()
    const before = await keptKeys()
    const request = () =>
      t.request({ method: 'PATCH', url: `/api/v1/users/${t.alice.id}`, token: t.tokens.bob, headers: { 'idempotency-key': key }, json: { name: 'Mallory' } })
    const first = await request()
    expect(first.statusCode).toBe(403)
    expect(await keptKeys()).toBe(before)
    const again = await request()
    expect(again.statusCode).toBe(403)
    expect(again.headers['idempotent-replayed']).toBeUndefined()
  })

  it('does not keep a 500: the retry runs, and writes once', async () => {
    const key = newKey()
    const body = { title: 'Boom', content: 'The store refuses it once' }
    await addFailingTrigger()
    try {
      const failed = await createPost(key, body)
      expect(failed.statusCode).toBe(500)
      expect(failed.json().error.code).toBe('INTERNAL_ERROR')
    } finally {
      await dropFailingTrigger()
    }
    const retried = await createPost(key, body)
    expect(retried.statusCode).toBe(201)
    expect(retried.headers['idempotent-replayed']).toBeUndefined()
    expect((await createPost(key, body)).headers['idempotent-replayed']).toBe('true')
    expect(await postsTitled('Boom')).toBe(1)
  })

  it('answers 409 with Retry-After while the key is claimed, and frees a claim left past its lease', async () => {
    const key = newKey()
    const body = { title: 'Claimed', content: 'elsewhere' }
    const store = createIdempotencyStore(t.database.db, { ttlMs: 86_400_000, leaseMs: 60_000, now: t.clock.now })
    // A request that claimed the key and is still running (or whose process stopped).
    expect(await store.claim(`user:${t.alice.id}`, key, requestFingerprint('POST', postsUrl(), body))).toEqual({ kind: 'claimed' })
    const running = await createPost(key, body)
    expect(running.statusCode).toBe(409)
    expect(running.headers['retry-after']).toBe('1')
    expect(running.json().error.code).toBe('CONFLICT')
    expect(await postsTitled('Claimed')).toBe(0)
    t.clock.advance(61_000)
    const taken = await createPost(key, body)
    expect(taken.statusCode).toBe(201)
    expect(await postsTitled('Claimed')).toBe(1)
  })

  it('keeps a key for the TTL from its first use: after it, the key is new, and purged', async () => {
    const key = newKey()
    const body = { title: 'Expiring', content: 'a day' }
    expect((await createPost(key, body)).statusCode).toBe(201)
    t.clock.advance(t.config.idempotencyTtlMs - 5_000)
    expect((await createPost(key, body)).headers['idempotent-replayed']).toBe('true')
    t.clock.advance(10_000)
    const after = await createPost(key, body)
    expect(after.statusCode).toBe(201)
    expect(after.headers['idempotent-replayed']).toBeUndefined()
    expect(await postsTitled('Expiring')).toBe(2)
    // Every key kept so far has expired a day on: the purge empties the table, slice by slice.
    t.clock.advance(t.config.idempotencyTtlMs + 1_000)
    const store = createIdempotencyStore(t.database.db, { ttlMs: t.config.idempotencyTtlMs, leaseMs: 60_000, now: t.clock.now })
    expect(await keptKeys()).toBeGreaterThan(2)
    let purged = 0
    for (let slice = await store.purgeExpired(); slice.rows > 0; slice = await store.purgeExpired()) purged += slice.rows
    expect(purged).toBeGreaterThan(2)
    expect(await keptKeys()).toBe(0)
    expect(await keptBytesCounted()).toBe(0)
  })

  it('keeps the whole answer: a retry gets what its own Prefer asks for', async () => {
    const key = newKey()
    const body = { title: 'Preferences', content: 'minimal first' }
    const minimal = await createPost(key, body, { prefer: 'return=minimal' })
    expect(minimal.statusCode).toBe(201)
    expect(minimal.body).toBe('')
    const full = await createPost(key, body)
    expect(full.headers['idempotent-replayed']).toBe('true')
    expect(full.headers.location).toBe(minimal.headers.location)
    expect(full.json().data).toMatchObject(body)
    const minimalAgain = await createPost(key, body, { prefer: 'return=minimal', 'accept-encoding': 'gzip' })
    expect(minimalAgain.headers['idempotent-replayed']).toBe('true')
    expect(minimalAgain.headers['preference-applied']).toBe('return=minimal')
    expect(minimalAgain.rawPayload.length).toBe(0)
    expect(await postsTitled('Preferences')).toBe(1)
  })

  it('replays a DELETE 204 instead of a 404, and a PUT', async () => {
    const created = await createPost(undefined, { title: 'To delete', content: 'x' })
    const url = String(created.headers.location)
    const key = newKey()
    const remove = () => t.request({ method: 'DELETE', url, token: t.tokens.alice, headers: { 'idempotency-key': key } })
    expect((await remove()).statusCode).toBe(204)
    const again = await remove()
    expect(again.statusCode).toBe(204)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect((await t.request({ method: 'DELETE', url, token: t.tokens.alice })).statusCode).toBe(404)

    const putKey = newKey()
    const put = () =>
      t.request({
        method: 'PUT',
        url: `/api/v1/users/${t.bob.id}`,
        token: t.tokens.bob,
        headers: { 'idempotency-key': putKey },
        json: { name: 'Bob Again', email: 'bob@example.com' },
      })
    const first = await put()
    const second = await put()
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(second.json().data).toEqual(first.json().data)
  })

  it('leaves writes without a key and reads as they were: nothing kept', async () => {
    const before = await keptKeys()
    expect((await createPost(undefined, { title: 'Unkeyed', content: 'x' })).statusCode).toBe(201)
    expect((await createPost(undefined, { title: 'Unkeyed', content: 'x' })).statusCode).toBe(201)
    const read = await t.request({ method: 'GET', url: postsUrl(), token: t.tokens.alice, headers: { 'idempotency-key': newKey() } })
    expect(read.statusCode).toBe(200)
    expect(await postsTitled('Unkeyed')).toBe(2)
    expect(await keptKeys()).toBe(before)
  })

  it('lets a browser send the key and read the replay mark (CORS)', async () => {
    const preflight = await t.request({
      method: 'OPTIONS',
      url: postsUrl(),
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'idempotency-key, content-type' },
    })
    expect(String(preflight.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)).toContain('idempotency-key')
    const key = newKey()
    await createPost(key, { title: 'From a browser', content: 'x' }, { origin: 'https://app.example' })
    const again = await createPost(key, { title: 'From a browser', content: 'x' }, { origin: 'https://app.example' })
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(String(again.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/)).toContain('idempotent-replayed')
  })

  it('ignores a key on sign-in: its answer, a token, is never kept', async () => {
    const key = newKey()
    const signIn = () =>
      t.request({
        method: 'POST',
        url: '/api/v1/tokens',
        headers: { 'idempotency-key': key },
        json: { email: 'alice@example.com', password: 'correct horse battery' },
      })
    const first = await signIn()
    const second = await signIn()
    expect(first.statusCode).toBe(201)
    expect(second.statusCode).toBe(201)
    expect(second.headers['idempotent-replayed']).toBeUndefined()
    expect(second.json().data.token).not.toBe(first.json().data.token)
  })

  it('answers each of 50 concurrent requests with one key, on two apps, with the one write or 409', async () => {
    const key = newKey()
    const body = { title: 'Stampede', content: 'fifty at once' }
    // A second app on the same database: another instance (PostgreSQL), another process's connection (SQLite).
    const other = await buildApp(t.config, { now: t.clock.now })
    const viaOther = () => createPostOn(other, key, body)
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? createPost(key, body) : viaOther()))).finally(() => other.close())
    expect(await postsTitled('Stampede')).toBe(1)
    const created = answers.filter((answer) => answer.statusCode === 201)
    const conflicts = answers.filter((answer) => answer.statusCode === 409)
    expect(created.length + conflicts.length).toBe(50)
    expect(created.filter((answer) => answer.headers['idempotent-replayed'] === undefined)).toHaveLength(1)
    expect(new Set(created.map((answer) => answer.headers.location)).size).toBe(1)
    for (const conflict of conflicts) expect(conflict.headers['retry-after']).toBe('1')
    expect((await createPost(key, body)).headers['idempotent-replayed']).toBe('true')
  })

  it('finds a kept answer from another app on the same database (a restart, another instance)', async () => {
    const key = newKey()
    const body = { title: 'Across apps', content: 'kept in the store' }
    const first = await createPost(key, body)
    const other = await buildApp(t.config, { now: t.clock.now })
    try {
      const again = await createPostOn(other, key, body)
      expect(again.statusCode).toBe(201)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.json().data.id).toBe(first.json().data.id)
    } finally {
      await other.close()
    }
    expect(await postsTitled('Across apps')).toBe(1)
  })
})

describe('Idempotency-Key on GraphQL mutations', () => {
  const mutation = (key: string, title: string) =>
    t.request({
      method: 'POST',
      url: '/graphql',
      token: t.tokens.alice,
      headers: { 'idempotency-key': key },
      json: { query: 'mutation ($title: String!) { createPost(input: { title: $title, content: "via GraphQL" }) { id title } }', variables: { title } },
    })

  it('replays a mutation and runs it once', async () => {
    const key = newKey()
    const first = await mutation(key, 'GraphQL once')
    expect(first.json().data.createPost.title).toBe('GraphQL once')
    const again = await mutation(key, 'GraphQL once')
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(await postsTitled('GraphQL once')).toBe(1)
    const otherVariables = await mutation(key, 'GraphQL twice')
    expect(otherVariables.statusCode).toBe(422)
    expect(otherVariables.json().errors[0].extensions.code).toBe('VALIDATION_ERROR')
  })

  it('does not keep a mutation that failed on the service side (200 with INTERNAL_ERROR): the retry runs', async () => {
    const key = newKey()
    const before = await postsTitled('Boom')
    await addFailingTrigger()
    try {
      const failed = await mutation(key, 'Boom')
      expect(failed.json().errors[0].extensions.code).toBe('INTERNAL_ERROR')
    } finally {
      await dropFailingTrigger()
    }
    const retried = await mutation(key, 'Boom')
    expect(retried.headers['idempotent-replayed']).toBeUndefined()
    expect(retried.json().data.createPost.title).toBe('Boom')
    expect(await postsTitled('Boom')).toBe(before + 1)
  })

  it('replays a batch that holds a mutation', async () => {
    const key = newKey()
    const batch = () =>
      t.request({
        method: 'POST',
        url: '/graphql',
        token: t.tokens.alice,
        headers: { 'idempotency-key': key },
        json: [{ query: `{ user(id: ${t.alice.id}) { id } }` }, { query: 'mutation { createPost(input: { title: "Batched", content: "x" }) { id } }' }],
      })
    const first = await batch()
    expect(first.json()[0].data.user.id).toBe(String(t.alice.id))
    const again = await batch()
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(await postsTitled('Batched')).toBe(1)
  })

  it('keeps nothing for a query sent with a key', async () => {
    const before = await keptKeys()
    const key = newKey()
    for (let i = 0; i < 2; i++) {
      const res = await t.request({
        method: 'POST',
        url: '/graphql',
        token: t.tokens.alice,
        headers: { 'idempotency-key': key },
        json: { query: `{ user(id: ${t.alice.id}) { id } }` },
      })
      expect(res.json().data.user.id).toBe(String(t.alice.id))
      expect(res.headers['idempotent-replayed']).toBeUndefined()
    }
    expect(await keptKeys()).toBe(before)
  })
})

describe('The asynchronous context of keyed writes', () => {
  // Tracked (AsyncLocalStorage) so that a keyed request's writes mark its key: while it is, every
  // promise of the process costs more, so it is tracked only while a keyed request runs.
  it('is tracked only while a keyed request runs: once its answer is out, no scope is left open', async () => {
    const key = newKey()
    expect(tracksWriteScopes()).toBe(false)
    expect((await createPost(key, { title: 'Scoped', content: 'once' })).statusCode).toBe(201)
    expect(tracksWriteScopes()).toBe(false)
    expect((await createPost(key, { title: 'Scoped', content: 'once' })).headers['idempotent-replayed']).toBe('true')
    expect((await createPost(key, { title: 'Scoped', content: 'another body' })).statusCode).toBe(422)
    const keyedGraphql = (query: string) =>
      t.request({ method: 'POST', url: '/graphql', token: t.tokens.alice, headers: { 'idempotency-key': newKey() }, json: { query } })
    const mutation = await keyedGraphql('mutation { createPost(input: { title: "Scoped too", content: "via GraphQL" }) { id } }')
    expect(mutation.json().data.createPost.id).toBeDefined()
    const query = await keyedGraphql('{ users { id } }')
    expect(query.json().data.users.length).toBeGreaterThan(0)
    expect(tracksWriteScopes()).toBe(false)
    expect(await postsTitled('Scoped')).toBe(1)
    expect(await postsTitled('Scoped too')).toBe(1)
  })
})

describe('What is kept: only writes that were done, for callers who can write, bounded in bytes', () => {
  const graphql = (key: string, json: unknown, token?: string) =>
    t.request({ method: 'POST', url: '/graphql', token, headers: { 'idempotency-key': key }, json })
  const todosTexted = async (text: string): Promise<number> => {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from todos where text = ${text}`.execute(t.database.db)
    return Number(rows[0]?.n)
  }

  it('keeps nothing for a GraphQL batch whose mutation failed, nor for a document refused by validation', async () => {
    const before = await keptKeys()
    const key = newKey()
    const batch = [{ query: 'mutation { updatePost(id: "999999", input: { title: "Nobody" }) { id } }' }, { query: `{ user(id: ${t.alice.id}) { id name } }` }]
    for (let i = 0; i < 2; i++) {
      const res = await graphql(key, batch, t.tokens.alice)
      expect(res.json()[0].errors[0].extensions.code).toBe('NOT_FOUND')
      expect(res.headers['idempotent-replayed']).toBeUndefined()
    }
    const refused = await graphql(newKey(), { query: 'mutation { noSuchMutation }' }, t.tokens.alice)
    expect(refused.json().errors[0].extensions.code).toBeDefined()
    expect(await keptKeys()).toBe(before)
  })

  it('keeps nothing for an anonymous caller: its key is not even read', async () => {
    const before = await keptKeys()
    const key = newKey()
    const batch = [{ query: 'mutation { addTodo(text: "Anonymous") { id } }' }, { query: `{ user(id: ${t.alice.id}) { id name } }` }]
    for (let i = 0; i < 2; i++) {
      const res = await graphql(key, batch)
      expect(res.json()[0].errors[0].extensions.code).toBe('UNAUTHENTICATED')
      expect(res.headers['idempotent-replayed']).toBeUndefined()
    }
    expect(await keptKeys()).toBe(before)
  })

  it("does not replay to a read token the mutation its user's write token kept: it is refused, as on REST, and nothing is written", async () => {
    const key = newKey()
    const mutation = { query: 'mutation { addTodo(text: "Scoped replay") { id } }' }
    const written = await graphql(key, mutation, t.tokens.alice)
    expect(written.json().data.addTodo.id).toBeDefined()
    const readToken = await t.tokenFor(t.alice.id, 3_600_000, 'read')
    const refused = await graphql(key, mutation, readToken)
    expect(refused.headers['idempotent-replayed']).toBeUndefined()
    expect(refused.json().errors[0].extensions.code).toBe('FORBIDDEN')
    expect(refused.json().data ?? null).toBeNull()
    const rest = await t.request({
      method: 'POST',
      url: `/api/v1/users/${t.alice.id}/todos`,
      token: readToken,
      headers: { 'idempotency-key': key },
      json: { text: 'Scoped replay' },
    })
    expect(rest.statusCode).toBe(403)
    expect(await todosTexted('Scoped replay')).toBe(1)
    // The write token still gets its answer.
    expect((await graphql(key, mutation, t.tokens.alice)).headers['idempotent-replayed']).toBe('true')
  })

  it('keeps the status and headers of an answer past the size bound, and replays them without the body, saying so', async () => {
    const content = 'x'.repeat(100_000)
    const post = await createPost(undefined, { title: 'Large', content })
    const id = post.json().data.id
    const key = newKey()
    // A mutation that was done, with a query that makes the answer larger than any body kept.
    const batch = [
      { query: 'mutation { addTodo(text: "Beside a large answer") { id } }' },
      { query: `{ a: post(id: "${id}") { content } b: post(id: "${id}") { content } c: post(id: "${id}") { content } }` },
    ]
    const first = await graphql(key, batch, t.tokens.alice)
    expect(first.statusCode).toBe(200)
    expect(first.body.length).toBeGreaterThan(MAX_KEPT_BODY_BYTES)
    const again = await graphql(key, batch, t.tokens.alice)
    expect(again.statusCode).toBe(200)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.headers['idempotent-body-omitted']).toBe('true')
    expect(again.headers['content-type']).toBeUndefined()
    expect(again.body).toBe('')
    expect(await todosTexted('Beside a large answer')).toBe(1)
    const { rows } = await sql<{ n: number | string }>`select max(kept_bytes) as n from idempotency_keys`.execute(t.database.db)
    expect(Number(rows[0]?.n)).toBeLessThanOrEqual(MAX_KEPT_BODY_BYTES)
  })

  it('bounds what one caller keeps in all: past it, answers are kept without their bodies until older ones expire', async () => {
    const store = createIdempotencyStore(t.database.db, { ttlMs: 120_000, leaseMs: 60_000, maxBodyBytes: 100, maxCallerBytes: 250, now: t.clock.now })
    const caller = `user:bounded-${newKey()}`
    const body = 'b'.repeat(100)
    const keep = async (who: string, key: string): Promise<KeptAnswer | undefined> => {
      expect(await store.claim(who, key, 'f')).toEqual({ kind: 'claimed' })
      await t.database.db.transaction().execute((trx) => store.markWriteDone(trx, who, key))
      await store.complete(who, key, { status: 201, headers: { location: `/${key}` }, body })
      const claim = await store.claim(who, key, 'f')
      return claim.kind === 'answered' ? claim.answer : undefined
    }
    expect((await keep(caller, 'one'))?.body).toBe(body)
    expect((await keep(caller, 'two'))?.body).toBe(body)
    expect(await keep(caller, 'three')).toEqual({ status: 201, headers: { location: '/three' }, body: null, bodyOmitted: true })
    // Another caller has a bound of their own; a body past the per-answer bound is never kept.
    expect((await keep(`${caller}-other`, 'one'))?.body).toBe(body)
    expect(await store.claim(`${caller}-large`, 'one', 'f')).toEqual({ kind: 'claimed' })
    await t.database.db.transaction().execute((trx) => store.markWriteDone(trx, `${caller}-large`, 'one'))
    await store.complete(`${caller}-large`, 'one', { status: 200, headers: {}, body: 'L'.repeat(101) })
    expect(await store.claim(`${caller}-large`, 'one', 'f')).toEqual({ kind: 'answered', answer: { status: 200, headers: {}, body: null, bodyOmitted: true } })
    // Once the first answers expire and are purged, the caller may keep bodies again.
    t.clock.advance(121_000)
    while ((await store.purgeExpired()).rows > 0);
    expect((await keep(caller, 'four'))?.body).toBe(body)
  })

  it('purges expired keys in slices bounded by bytes, so no statement holds the loop with all of them', async () => {
    const store = createIdempotencyStore(t.database.db, { ttlMs: 60_000, leaseMs: 60_000, now: t.clock.now })
    const body = 'p'.repeat(250 * 1024)
    const rows = 20
    for (let i = 0; i < rows; i++) {
      const caller = `user:purged-${i % 3}`
      const key = `purge-${newKey()}`
      await store.claim(caller, key, 'f')
      await t.database.db.transaction().execute((trx) => store.markWriteDone(trx, caller, key))
      await store.complete(caller, key, { status: 201, headers: {}, body })
    }
    t.clock.advance(61_000)
    const slices: PurgedSlice[] = []
    for (let slice = await store.purgeExpired(); slice.rows > 0; slice = await store.purgeExpired()) slices.push(slice)
    expect(slices.reduce((sum, slice) => sum + slice.bytes, 0)).toBeGreaterThanOrEqual(rows * body.length)
    expect(slices.length).toBeGreaterThan(1)
    for (const slice of slices) {
      expect(slice.rows).toBeLessThanOrEqual(PURGE_SLICE_ROWS)
      expect(slice.bytes).toBeLessThanOrEqual(PURGE_SLICE_BYTES)
    }
    const { rows: left } = await sql<{ n: number | string }>`select count(*) as n from idempotency_keys where caller like 'user:purged-%'`.execute(
      t.database.db,
    )
    expect(Number(left[0]?.n)).toBe(0)
    const { rows: counted } = await sql<{ n: number | string }>`select count(*) as n from idempotency_callers where caller like 'user:purged-%'`.execute(
      t.database.db,
    )
    expect(Number(counted[0]?.n)).toBe(0)
  })
})

describe('The write runs once through faults', () => {
  it('does not run a write again whose answer could not be kept: the retry after the lease, on another instance, is 409', async () => {
    const key = newKey()
    const body = { title: 'Answer lost', content: 'the store failed after the commit' }
    await addFailingKeepTrigger()
    let first
    try {
      first = await createPost(key, body)
    } finally {
      await dropFailingKeepTrigger()
    }
    // The write committed, and its answer went out; keeping it failed.
    expect(first.statusCode).toBe(201)
    expect(await postsTitled('Answer lost')).toBe(1)
    t.clock.advance(61_000)
    const other = await buildApp(t.config, { now: t.clock.now })
    try {
      const retried = await createPostOn(other, key, body)
      expect(retried.statusCode).toBe(409)
      expect(retried.json().error).toMatchObject({ code: 'CONFLICT', details: [{ field: 'Idempotency-Key' }] })
      expect(retried.headers['retry-after']).toBeUndefined()
    } finally {
      await other.close()
    }
    expect((await createPost(key, body)).statusCode).toBe(409)
    expect(await postsTitled('Answer lost')).toBe(1)
  })
})

/** Makes keeping an answer fail, as a store that went away between the write's commit and the answer's keeping. */
async function addFailingKeepTrigger(): Promise<void> {
  if (t.config.database.dialect === 'sqlite') {
    await sql`create trigger keys_fault before update on idempotency_keys when new.status is not null and old.status is null begin select raise(abort, 'fault'); end`.execute(
      t.database.db,
    )
    return
  }
  await sql`create function keys_fault() returns trigger language plpgsql as $$ begin raise exception 'fault'; end $$`.execute(t.database.db)
  await sql`create trigger keys_fault before update on idempotency_keys for each row when (new.status is not null and old.status is null) execute function keys_fault()`.execute(
    t.database.db,
  )
}

async function dropFailingKeepTrigger(): Promise<void> {
  if (t.config.database.dialect === 'sqlite') {
    await sql`drop trigger keys_fault`.execute(t.database.db)
    return
  }
  await sql`drop trigger keys_fault on idempotency_keys`.execute(t.database.db)
  await sql`drop function keys_fault()`.execute(t.database.db)
}

async function addFailingTrigger(): Promise<void> {
  if (t.config.database.dialect === 'sqlite') {
    await sql`create trigger posts_boom before insert on posts when new.title = 'Boom' begin select raise(abort, 'boom'); end`.execute(t.database.db)
    return
  }
  await sql`create function posts_boom() returns trigger language plpgsql as $$ begin if new.title = 'Boom' then raise exception 'boom'; end if; return new; end $$`.execute(
    t.database.db,
  )
  await sql`create trigger posts_boom before insert on posts for each row execute function posts_boom()`.execute(t.database.db)
}

async function dropFailingTrigger(): Promise<void> {
  if (t.config.database.dialect === 'sqlite') {
    await sql`drop trigger posts_boom`.execute(t.database.db)
    return
  }
  await sql`drop trigger posts_boom on posts`.execute(t.database.db)
  await sql`drop function posts_boom()`.execute(t.database.db)
}
