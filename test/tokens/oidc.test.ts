// Sign-in by an outside OpenID Connect issuer: a local issuer (discovery and keys over real HTTP)
// signs access tokens; the service verifies them with the issuer's published keys, makes a user of a
// subject's first token and finds it by subject afterwards (the subject kept exactly as given),
// takes an admin from the configured claim, refuses the usual forgeries with 401, follows a key
// rotation without a restart, fetches keys only from the origins allowed, and lets such a token
// sign a caller in over every transport, beside its own tokens.
import { createClient as createSseClient } from 'graphql-sse'
import { createClient as createWsClient } from 'graphql-ws'
import { type JWTPayload, SignJWT } from 'jose'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { buildTestApp } from '../helpers/build-test-app.js'
import { disposeWsClients, type Listening, listening, wsClient } from '../helpers/subscription-clients.js'
import { startRequestSink, startTestIssuer, type TestIssuer, trustTestCertificate } from '../helpers/oidc-issuer.js'
import { graphql } from '../helpers/graphql-client.js'
import { until } from '../helpers/until.js'

const AUDIENCE = 'threadline-api'
/** How long the service waits, after fetching the keys, before fetching them again for an unknown key (shortened from 5 s). */
const COOLDOWN_MS = 400

let issuer: TestIssuer
let s: Listening
beforeAll(async () => {
  issuer = await startTestIssuer(AUDIENCE)
  s = await listening(
    { OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: AUDIENCE, OIDC_ADMIN_CLAIM: 'realm_access.roles=threadline-admin' },
    { configure: (config) => ({ ...config, oidc: config.oidc && { ...config.oidc, keysCooldownMs: COOLDOWN_MS } }) },
  )
})
afterEach(() => disposeWsClients())
afterAll(async () => {
  await s?.t.close()
  await issuer?.close()
})

let subjects = 0
/** A fresh subject's claims: its own sub, name and e-mail address. */
const someone = (name = 'Grace Hopper') => {
  const n = subjects++
  return { sub: `subject-${n}`, name, email: `person-${n}@idp.example` }
}

const get = (url: string, token: string) => s.t.request({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })
/** The caller a token signs in, as GraphQL's viewer sees it. */
const viewer = async (token: string) =>
  (await graphql(s.t, '{ viewer { id name email role } }', { token })).body.data?.viewer as
    { id: string; name: string; email: string; role: string } | null | undefined

describe('an access token of the issuer', () => {
  it("makes its subject's user from the name and email claims, then finds it by subject", async () => {
    const grace = someone()
    const first = await viewer(await issuer.sign(grace))
    expect(first).toMatchObject({ name: 'Grace Hopper', email: grace.email, role: 'user' })
    const id = first?.id

    // Another token of the same subject, with another name: the same user, unchanged.
    const second = await viewer(await issuer.sign({ ...grace, name: 'Rear Admiral Hopper' }))
    expect(second).toMatchObject({ id, name: 'Grace Hopper' })
    const users = (await s.t.request({ method: 'GET', url: `/api/v1/users?email=${encodeURIComponent(grace.email)}` })).json().data
    expect(users).toHaveLength(1)
  })

  it('writes as its user, and the service says the scope', async () => {
    const token = await issuer.sign(someone())
    const me = await viewer(token)
    const res = await s.t.request({
      method: 'POST',
      url: `/api/v1/users/${me?.id}/posts`,
      token,
      json: { title: 'From the IdP', content: 'Signed in elsewhere.' },
    })
    expect(res.statusCode).toBe(201)
    expect(res.headers['x-oauth-scopes']).toBe('write')
  })

  it('reads only when its scope claim names read and not write', async () => {
    const token = await issuer.sign({ ...someone(), scope: 'openid profile read' })
    const me = await viewer(token)
    expect(me?.id).toEqual(expect.any(String))
    const res = await s.t.request({ method: 'PATCH', url: `/api/v1/users/${me?.id}`, token, json: { age: 30 } })
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toBe('Bearer realm="threadline", error="insufficient_scope", scope="write"')
  })

  it('makes an admin of a subject the admin claim names, and a user again when a later token does not', async () => {
    const linus = someone('Linus')
    const admin = await viewer(await issuer.sign({ ...linus, realm_access: { roles: ['threadline-admin', 'offline_access'] } }))
    expect(admin?.role).toBe('admin')
    const demoted = await viewer(await issuer.sign({ ...linus, realm_access: { roles: ['offline_access'] } }))
    expect(demoted?.role).toBe('user')
  })

  it('is refused 409 when another user already has its e-mail address: never joined by address alone', async () => {
    const res = await get('/api/v1/users', await issuer.sign({ sub: 'someone-else', name: 'Not Alice', email: 'alice@example.com' }))
    expect(res.statusCode).toBe(409)
    expect(res.json().error.code).toBe('CONFLICT')
  })

  it('is refused 401 without an email claim', async () => {
    const res = await get('/api/v1/users', await issuer.sign({ sub: 'no-email' }))
    expect(res.statusCode).toBe(401)
    expect(res.json().error.message).toContain('email')
  })

  it('ends when revoked, as an own token does', async () => {
    const token = await issuer.sign(someone())
    expect((await get('/api/v1/users', token)).statusCode).toBe(200)
    expect((await s.t.request({ method: 'DELETE', url: '/api/v1/tokens/current', token })).statusCode).toBe(204)
    expect((await get('/api/v1/users', token)).statusCode).toBe(401)
  })

  it("leaves the service's own tokens working beside it", async () => {
    expect((await viewer(s.t.tokens.alice))?.email).toBe('alice@example.com')
  })
})

describe('forgeries', () => {
  const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const claims = () => {
    const now = Math.floor(Date.now() / 1000)
    return { iss: issuer.url, aud: AUDIENCE, sub: 'forger', name: 'Forger', email: 'forger@idp.example', iat: now, exp: now + 300 }
  }

  it.each([
    ['expired', () => issuer.sign({ ...someone(), exp: Math.floor(Date.now() / 1000) - 60 })],
    ['for another audience', () => issuer.sign({ ...someone(), aud: 'another-api' })],
    ['of another issuer', () => issuer.sign({ ...someone(), iss: 'https://evil.example' })],
    ['without exp', () => issuer.sign({ ...someone(), exp: undefined })],
    // RFC 7519: sub is a StringOrURI. Signed as the issuer would if it sent a number.
    ['whose sub is a number', () => issuer.sign({ ...someone(), sub: 12345 } as unknown as JWTPayload)],
    ['whose sub is empty', () => issuer.sign({ ...someone(), sub: '' })],
    ['whose sub is longer than 255 characters', () => issuer.sign({ ...someone(), sub: 's'.repeat(256) })],
    ['issued an hour in the future', () => issuer.sign({ ...someone(), iat: Math.floor(Date.now() / 1000) + 3600 })],
    ['unsigned (alg: none)', async () => `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims())}.`],
    ['signed by a key the issuer does not publish', async () => issuer.sign(someone(), { key: await issuer.newKey(issuer.current.kid) })],
    [
      'HS256 keyed with the public key',
      async () => {
        const secret = new TextEncoder().encode(JSON.stringify(issuer.current.publicJwk))
        return new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: issuer.current.kid }).sign(secret)
      },
    ],
    [
      'with its claims changed after signing',
      async () => {
        const [header, , signature] = (await issuer.sign(claims())).split('.')
        return `${header}.${base64url({ ...claims(), sub: 'someone-else' })}.${signature}`
      },
    ],
  ])('refuses a token %s with 401, and makes no user', async (_what, make) => {
    const users = async () => (await s.t.database.db.selectFrom('users').select('id').execute()).length
    const before = await users()
    const res = await get('/api/v1/users', await make())
    expect(res.statusCode).toBe(401)
    expect(res.json().error.code).toBe('UNAUTHENTICATED')
    expect(res.headers['www-authenticate']).toBe('Bearer realm="threadline", error="invalid_token"')
    const forged = (await s.t.request({ method: 'GET', url: '/api/v1/users?email=forger@idp.example' })).json().data
    expect(forged).toEqual([])
    expect(await users()).toBe(before)
  })
})

describe('a subject', () => {
  it('is kept exactly as the token gives it: "12345.0" and "12345" are two users, and a numeric 12345 is neither', async () => {
    const numeric = await get('/api/v1/users', await issuer.sign({ ...someone(), sub: 12345 } as unknown as JWTPayload))
    expect(numeric.statusCode).toBe(401)
    const decimal = { ...someone(), sub: '12345.0' }
    const integer = { ...someone(), sub: '12345' }
    expect((await viewer(await issuer.sign(decimal)))?.email).toBe(decimal.email)
    expect((await viewer(await issuer.sign(integer)))?.email).toBe(integer.email)
    const kept = await s.t.database.db.selectFrom('identities').select('subject').where('subject', 'like', '12345%').orderBy('subject').execute()
    expect(kept.map((row) => row.subject)).toEqual(['12345', '12345.0'])
  })

  it("signs in with an iat a little ahead of the server's clock: the issuer's clock may run ahead", async () => {
    const grace = someone()
    expect((await viewer(await issuer.sign({ ...grace, iat: Math.floor(Date.now() / 1000) + 30 })))?.email).toBe(grace.email)
  })
})

describe('a key rotation', () => {
  it('is followed without a restart: a token of the new key fetches the keys again, at most once per cooldown', async () => {
    // Signed before, so that they are sent within the cooldown: one key nobody publishes, under 20 key ids.
    const stranger = await issuer.newKey('unknown')
    const strangers = await Promise.all(Array.from({ length: 20 }, (_, i) => issuer.sign(someone(), { key: { ...stranger, kid: `unknown-${i}` } })))
    const before = issuer.keyFetches
    const grace = someone()
    await issuer.rotate()
    // The first token of the new key is refused only while the cooldown of the last fetch runs.
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS + 50))
    const ofNewKey = await issuer.sign(grace)
    const signedInAt = Date.now()
    expect((await viewer(ofNewKey))?.email).toBe(grace.email)
    expect(issuer.keyFetches).toBe(before + 1)

    // A flood of tokens naming keys nobody publishes, just after: refused, and the keys not fetched
    // again for each, only once per cooldown gone by since that fetch (a loaded machine takes several).
    const statuses = await Promise.all(strangers.map(async (token) => (await get('/api/v1/users', token)).statusCode))
    expect(statuses.every((status) => status === 401)).toBe(true)
    expect(issuer.keyFetches - (before + 1)).toBeLessThanOrEqual(Math.floor((Date.now() - signedInAt) / COOLDOWN_MS))
  })
})

describe('every transport', () => {
  it('signs a caller in over the WebSocket and the event stream', async () => {
    const grace = someone()
    const token = await issuer.sign(grace)
    const client = wsClient(s.ws, token)
    const overWs = await new Promise<unknown>((resolve, reject) => {
      client.subscribe({ query: '{ viewer { email } }' }, { next: resolve, error: reject, complete: () => {} })
    })
    expect(overWs).toEqual({ data: { viewer: { email: grace.email } } })

    const sse = createSseClient({ url: `${s.http}/graphql/stream`, headers: { authorization: `Bearer ${token}` }, retryAttempts: 0 })
    try {
      const overSse = await new Promise<unknown>((resolve, reject) => {
        sse.subscribe({ query: '{ viewer { email } }' }, { next: resolve, error: reject, complete: () => {} })
      })
      expect(overSse).toEqual({ data: { viewer: { email: grace.email } } })
    } finally {
      sse.dispose()
    }
  })

  it('closes a WebSocket whose access token expires, as it does for an own token', async () => {
    const token = await issuer.sign({ ...someone(), exp: Math.floor(Date.now() / 1000) + 2 })
    let closed: number | undefined
    const client = createWsClient({
      url: s.ws,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${token}` },
      on: { closed: (event) => (closed = (event as { code: number }).code) },
    })
    try {
      // A subscription holds the socket open until the server ends it.
      client.subscribe({ query: 'subscription { commentAdded { id } }' }, { next: () => {}, error: () => {}, complete: () => {} })
      await until(() => closed !== undefined, 6000)
      expect(closed).toBe(4401)
    } finally {
      await client.dispose()
    }
  })
})

describe('an issuer that cannot be reached', () => {
  it('is answered 503 with Retry-After, not 401: the token may be good', async () => {
    const other = await startTestIssuer(AUDIENCE)
    const token = await other.sign(someone())
    other.down = true
    const app = await listening({ OIDC_ISSUER: other.url, OIDC_AUDIENCE: AUDIENCE })
    try {
      const res = await app.t.request({ method: 'GET', url: '/api/v1/users', token })
      expect(res.statusCode).toBe(503)
      expect(res.headers['retry-after']).toBe('5')
      expect(res.json().error.code).toBe('SERVICE_UNAVAILABLE')
      // What a token's own parts refuse needs no key: still 401 while the issuer is away.
      const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.`
      for (const refused of [unsigned, 'not.a.jwt']) {
        const answer = await app.t.request({ method: 'GET', url: '/api/v1/users', token: refused })
        expect(answer.statusCode).toBe(401)
      }
    } finally {
      await app.t.close()
      await other.close()
    }
  })
})

describe("the discovery document's jwks_uri", () => {
  /** An app whose issuer's discovery names `jwksUri`, the issuer's log lines at warn, and a token of that issuer. */
  async function appOf(other: TestIssuer, env: Record<string, string> = {}) {
    const lines: string[] = []
    const app = await buildTestApp(
      { OIDC_ISSUER: other.url, OIDC_AUDIENCE: AUDIENCE, LOG_LEVEL: 'warn', ...env },
      { logStream: { write: (line) => void lines.push(line) } },
    )
    return { app, lines }
  }

  it.each([
    ['on another origin', false],
    ['over http under an https issuer', true],
  ])('is refused %s: 503, logged, and no request reaches it', async (_where, https) => {
    const sink = await startRequestSink()
    const restore = https ? trustTestCertificate() : undefined
    const other = await startTestIssuer(AUDIENCE, { https })
    other.jwksUri = `${sink.url}/jwks`
    const { app, lines } = await appOf(other)
    try {
      const res = await app.request({ method: 'GET', url: '/api/v1/users', token: await other.sign(someone()) })
      expect(res.statusCode).toBe(503)
      expect(res.json().error).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'The identity provider is misconfigured: the token cannot be verified' })
      expect(res.headers['retry-after']).toBe('5')
      expect(lines.join('\n')).toContain(`names the jwks_uri ${sink.url}/jwks, outside the origins keys are fetched from (${other.url}`)
      expect(sink.requests).toBe(0)
    } finally {
      await app.close()
      await other.close()
      await restore?.()
      await sink.close()
    }
  })

  it('is fetched on another origin that OIDC_JWKS_ORIGINS names', async () => {
    // The keys are served by a second issuer: its tokens name the first as their iss.
    const keys = await startTestIssuer(AUDIENCE)
    const other = await startTestIssuer(AUDIENCE)
    other.jwksUri = keys.jwksUri
    const { app } = await appOf(other, { OIDC_JWKS_ORIGINS: keys.url })
    try {
      const res = await app.request({ method: 'GET', url: '/api/v1/users', token: await keys.sign({ ...someone(), iss: other.url }) })
      expect(res.statusCode).toBe(200)
      expect(keys.keyFetches).toBe(1)
    } finally {
      await app.close()
      await other.close()
      await keys.close()
    }
  })
})
