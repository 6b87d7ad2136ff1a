// A local OpenID Connect issuer for tests: discovery and a JSON Web Key Set served over real HTTP
// (or HTTPS, with a certificate made for these tests) on a free port of 127.0.0.1, RSA keys made
// with jose, access tokens signed by them, and a key rotation. It counts the requests for its keys,
// so a test sees how often the service fetched them; a request sink counts whatever reaches it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { rootCertificates } from 'node:tls'
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose'
import { Agent, type Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici'

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
  /** The jwks_uri its discovery document names: its own `/jwks` unless a test points it elsewhere. */
  jwksUri: string
  close(): Promise<void>
}

/** `https`: served over TLS with the test certificate (trust it with trustTestCertificate). */
export async function startTestIssuer(audience: string, { https = false }: { https?: boolean } = {}): Promise<TestIssuer> {
  let keyFetches = 0
  let published: Key[] = []
  let down = false
  let url = ''
  let jwksUri = ''
  const answer = (request: IncomingMessage, response: ServerResponse) => {
    if (down) return void response.writeHead(503).end()
    if (request.url === '/.well-known/openid-configuration') {
      response.writeHead(200, { 'content-type': 'application/json' })
      return void response.end(JSON.stringify({ issuer: url, jwks_uri: jwksUri, id_token_signing_alg_values_supported: ['RS256'] }))
    }
    if (request.url === '/jwks') {
      keyFetches++
      response.writeHead(200, { 'content-type': 'application/json' })
      return void response.end(JSON.stringify({ keys: published.map((key) => key.publicJwk) }))
    }
    response.writeHead(404).end()
  }
  const server: Server = https ? createHttpsServer({ cert: TEST_CERTIFICATE, key: TEST_CERTIFICATE_KEY }, answer) : createServer(answer)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `${https ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`
  jwksUri = `${url}/jwks`

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
    get jwksUri() {
      return jwksUri
    },
    set jwksUri(value: string) {
      jwksUri = value
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

export interface RequestSink {
  /** Its origin, `http://127.0.0.1:<port>`. */
  readonly url: string
  /** The requests that reached it so far, whatever their path. */
  readonly requests: number
  close(): Promise<void>
}

/** A server that answers 404 to every request and counts them: where the service must send none. */
export async function startRequestSink(): Promise<RequestSink> {
  let requests = 0
  const server = createServer((_request, response) => {
    requests++
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/**
 * Lets this process's fetch (the service's, in-process) trust the test certificate beside the
 * usual authorities, until the returned function puts the previous dispatcher back.
 */
export function trustTestCertificate(): () => Promise<void> {
  const previous: Dispatcher = getGlobalDispatcher()
  const agent = new Agent({ connect: { ca: [...rootCertificates, TEST_CERTIFICATE] } })
  setGlobalDispatcher(agent)
  return async () => {
    setGlobalDispatcher(previous)
    await agent.close()
  }
}

// A self-signed certificate for 127.0.0.1 and localhost (EC P-256, valid until 2126), made for
// these tests alone: its key protects nothing.
const TEST_CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIBtjCCAVugAwIBAgIUKxfH8k+WlUEYr2GgZ4FWIg8xFDgwCgYIKoZIzj0EAwIw
ITEfMB0GA1UEAwwWdGhyZWFkbGluZSB0ZXN0IGlzc3VlcjAgFw0yNjEyMDEyMzE5
NTZaGA8yMTI2MTEwNzIzMTk1NlowITEfMB0GA1UEAwwWdGhyZWFkbGluZSB0ZXN0
IGlzc3VlcjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABMnZIunjjUClTBz3ztXO
5ekycALflfCH40UBC2OupLqZuESm79GDkrw36UsqRJNPvLRj5PYZJwmBqjXclRyV
WDmjbzBtMB0GA1UdDgQWBBTefo9+rXfjWlo7ABxcOYBLeNChGzAfBgNVHSMEGDAW
gBTefo9+rXfjWlo7ABxcOYBLeNChGzAaBgNVHREEEzARhwR/AAABgglsb2NhbGhv
c3QwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAuJjGGDob8GcR
tvN8kjRSY70IrM3uNR3YBQNdoxMIUMkCIQCrzIcvIUrwM6j3hwSRHU7lfqF+US3W
+BHBxd3Sgnprwg==
-----END CERTIFICATE-----
`
const TEST_CERTIFICATE_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg/I75KWBuGMoLS9sn
iT5np2m6qsHY11JkGjidOe2z18WhRANCAATJ2SLp441ApUwc987VzuXpMnAC35Xw
h+NFAQtjrqS6mbhEpu/Rg5K8N+lLKkSTT7y0Y+T2GScJgao13JUclVg5
-----END PRIVATE KEY-----
`
