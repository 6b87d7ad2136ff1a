// A local OpenID Connect issuer for tests: discovery and a JSON Web Key Set served over real HTTP
// on a free port of 127.0.0.1, RSA keys made with jose, access tokens signed by them, and a key
// rotation. It counts the requests for its keys, so a test sees how often the service fetched them.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose'

type Key = { kid: string; privateKey: CryptoKey; publicJwk: JWK }

export interface TestIssuer {
  /** The issuer's URL, as its tokens' `iss` says. */
  readonly url: string
  /** GET requests for the key set so far. */
  readonly keyFetches: number
  /** The key the issuer signs with now (its public half is published). */
  readonly current: Key
  /** A token signed by the current key (or `key`): `iss`, `aud`, `iat`, `exp` (in 5 minutes) and `sub` unless `claims` says otherwise. */
  sign(claims: JWTPayload, options?: { key?: Key; header?: Record<string, unknown> }): Promise<string>
  /** A key the issuer does not publish. */
  newKey(kid: string): Promise<Key>
  /** Signs with a new key from now on, and publishes it alone: the old key is withdrawn. */
  rotate(): Promise<Key>
  /** Answers every request with 503 while down. */
  down: boolean
  close(): Promise<void>
}

export async function startTestIssuer(audience: string): Promise<TestIssuer> {
  let keyFetches = 0
  let published: Key[] = []
  let down = false
  let url = ''
  const server: Server = createServer((request, response) => {
    if (down) return void response.writeHead(503).end()
    if (request.url === '/.well-known/openid-configuration') {
      response.writeHead(200, { 'content-type': 'application/json' })
      return void response.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks`, id_token_signing_alg_values_supported: ['RS256'] }))
    }
    if (request.url === '/jwks') {
      keyFetches++
      response.writeHead(200, { 'content-type': 'application/json' })
      return void response.end(JSON.stringify({ keys: published.map((key) => key.publicJwk) }))
    }
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  let serial = 0
  async function newKey(kid: string): Promise<Key> {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
    return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } }
  }
  let current = await newKey(`key-${serial++}`)
  published = [current]

  return {
    url,
    get keyFetches() {
      return keyFetches
    },
    get current() {
      return current
    },
    get down() {
      return down
    },
    set down(value: boolean) {
      down = value
    },
    async sign(claims, { key = current, header = {} } = {}) {
      const now = Math.floor(Date.now() / 1000)
      return new SignJWT({ iss: url, aud: audience, iat: now, exp: now + 300, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'at+jwt', ...header })
        .sign(key.privateKey)
    },
    newKey,
    async rotate() {
      current = await newKey(`key-${serial++}`)
      published = [current]
      return current
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
