// Idempotency-Key on writes (src/idempotency/): a retried write replays the first answer and runs
// once; the same key for another request is 422, a key still running 409; 5xx and 429 answers
// are not kept; keys are per caller, kept in the database (another app on the same database
// replays them), and expire.
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { createIdempotencyStore } from '../../src/idempotency/idempotency-store.js'
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

async function postsTitled(title: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from posts where title = ${title}`.execute(t.database.db)
  return Number(rows[0]?.n)
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

  it('charges a replay nothing: the point it took on arrival is given back', async () => {
    const key = newKey()
    const first = await createPost(key, { title: 'Metered', content: 'Once' })
    const remaining = Number(first.headers['x-ratelimit-remaining'])
    const again = await createPost(key, { title: 'Metered', content: 'Once' })
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.headers['x-ratelimit-cost']).toBe('0')
    expect(Number(again.headers['x-ratelimit-remaining'])).toBe(remaining)
    const next = await t.request({ method: 'GET', url: postsUrl(), token: t.tokens.alice })
    expect(Number(next.headers['x-ratelimit-remaining'])).toBe(remaining - 1)
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

  it('keeps a refusal the service made (403) and replays it', async () => {
    const key = newKey()
    const request = () =>
      t.request({ method: 'PATCH', url: `/api/v1/users/${t.alice.id}`, token: t.tokens.bob, headers: { 'idempotency-key': key }, json: { name: 'Mallory' } })
    const first = await request()
    expect(first.statusCode).toBe(403)
    const again = await request()
    expect(again.statusCode).toBe(403)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
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
    // Every key kept so far has expired a day on: the purge empties the table, in batches.
    t.clock.advance(t.config.idempotencyTtlMs + 1_000)
    const store = createIdempotencyStore(t.database.db, { ttlMs: t.config.idempotencyTtlMs, leaseMs: 60_000, now: t.clock.now })
    expect(await keptKeys()).toBeGreaterThan(2)
    let purged = 0
    for (let batch = await store.purgeExpired(2); batch > 0; batch = await store.purgeExpired(2)) purged += batch
    expect(purged).toBeGreaterThan(2)
    expect(await keptKeys()).toBe(0)
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
    const viaOther = () =>
      other.inject({
        method: 'POST',
        url: postsUrl(),
        headers: { authorization: `Bearer ${t.tokens.alice}`, 'content-type': 'application/json', 'idempotency-key': key },
        payload: JSON.stringify(body),
      })
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
      const again = await other.inject({
        method: 'POST',
        url: postsUrl(),
        headers: { authorization: `Bearer ${t.tokens.alice}`, 'content-type': 'application/json', 'idempotency-key': key },
        payload: JSON.stringify(body),
      })
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
