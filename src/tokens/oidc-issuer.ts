// An outside OpenID Connect issuer's access tokens, verified with jose: discovery read once (again
// after a failure, at most every few seconds), the keys from its jwks_uri (only on the origins
// config allows: the issuer's own by default) cached and fetched again when a token names a key
// they lack (jose's cooldown bounds how often). Only asymmetric algorithms are accepted, so neither
// `alg: none` nor an HMAC keyed with a public key can pass; `iss`, `aud`, `exp` and a string `sub`
// are required, and an `iat` ahead of the server's clock by more than a small skew is refused.
// jose is loaded by the first token an issuer is asked about: a server without an issuer, or one
// whose callers bring Threadline's own tokens, never loads it (nor the WebCrypto modules it uses).
import type * as JoseModule from 'jose'
import type { createRemoteJWKSet, JWTPayload } from 'jose'
import type { OidcConfig } from '../config/oidc-config.js'
import type { Scope } from '../core/caller.js'
import { AppError, unauthenticated } from '../errors.js'

/** What a verified access token says of its bearer. */
export interface IssuedIdentity {
  readonly subject: string
  /** The `name` claim (else `preferred_username`), if any. */
  readonly name: string | undefined
  readonly email: string | undefined
  /** Whether the configured admin claim holds; undefined when none is configured (the issuer makes no admins). */
  readonly admin: boolean | undefined
  /** `read` when the token's `scope` (or `scp`) names read but not write; otherwise `write`, all its user may do. */
  readonly scope: Scope
  readonly expiresAt: Date
}

/** The signature algorithms accepted: public-key ones only. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
/** How long a request for the discovery document or the keys may take. */
const FETCH_TIMEOUT_MS = 5000
/** After a failed discovery, how long callers are answered 503 before it is tried again. */
const DISCOVERY_RETRY_MS = 5000
/**
 * How far ahead of this server's clock a token's `iat` may be: the issuer's clock may run a little
 * ahead, a token issued later than that was not issued by a working issuer. Applied to `iat` alone
 * (jose's clockTolerance would extend `exp` too).
 */
const CLOCK_SKEW_S = 60
/** OpenID Connect Core §2: a subject is at most 255 ASCII characters; a longer one is not stored. */
const MAX_SUBJECT_LENGTH = 255
/** A JWT's shape: three base64url parts (the issuer's tokens are told from Threadline's own by it). */
const JWT_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

export type OidcIssuer = ReturnType<typeof createOidcIssuer>

type Jose = typeof JoseModule
let joseLoaded: Promise<Jose> | undefined
const loadJose = (): Promise<Jose> => (joseLoaded ??= import('jose'))

export function createOidcIssuer(config: OidcConfig) {
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined
  let discovering: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined
  let failedAt = -Infinity
  let lastFailure: unknown

  async function discover(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const { createRemoteJWKSet } = await loadJose()
    const url = `${config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`
    const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } })
    if (!response.ok) throw new Error(`${url} answered ${response.status}`)
    const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown }
    // OpenID Connect Discovery §4.3: the document must name the issuer it was asked of.
    if (metadata.issuer !== config.issuer) throw new Misconfigured(`${url} names the issuer ${JSON.stringify(metadata.issuer)}, not ${config.issuer}`)
    const jwksUri = typeof metadata.jwks_uri === 'string' && URL.canParse(metadata.jwks_uri) ? new URL(metadata.jwks_uri) : undefined
    if (jwksUri === undefined) throw new Misconfigured(`${url} has no jwks_uri that is a URL`)
    // Judged before any request: a key set on another host, or over http under an https issuer, is never fetched.
    if (!config.jwksOrigins.includes(jwksUri.origin)) {
      throw new Misconfigured(
        `${url} names the jwks_uri ${jwksUri.href}, outside the origins keys are fetched from (${config.jwksOrigins.join(', ')}; ` +
          'OIDC_JWKS_ORIGINS adds others): refused, not fetched',
      )
    }
    return createRemoteJWKSet(jwksUri, { cooldownDuration: config.keysCooldownMs, timeoutDuration: FETCH_TIMEOUT_MS })
  }

  function keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (keys !== undefined) return Promise.resolve(keys)
    if (Date.now() - failedAt < DISCOVERY_RETRY_MS) return Promise.reject(unavailable(lastFailure))
    discovering ??= discover().then(
      (found) => {
        keys = found
        return found
      },
      (error: unknown) => {
        failedAt = Date.now()
        lastFailure = error
        discovering = undefined
        // The cause goes to the log (once per retry period); the callers meanwhile get the same answer without it.
        throw unavailable(error, error)
      },
    )
    return discovering
  }

  return {
    /** Whether the bearer token is a JWT (an issuer's), not one of Threadline's own. */
    isJwt: (token: string): boolean => JWT_PATTERN.test(token),

    /**
     * The identity a JWT access token of the issuer proves: UNAUTHENTICATED for a token that is
     * forged, expired, of another issuer or audience, or signed by a key the issuer does not
     * publish; SERVICE_UNAVAILABLE while the issuer cannot be reached.
     */
    async verify(token: string): Promise<IssuedIdentity> {
      const jose = await loadJose()
      // What the token's own parts refuse needs no key: refused at once, even while the issuer is away.
      refuseUnreadable(jose, token)
      const resolveKey = await keySet()
      let payload: JWTPayload
      try {
        ;({ payload } = await jose.jwtVerify(token, resolveKey, {
          issuer: config.issuer,
          audience: config.audience,
          algorithms: ALGORITHMS,
          requiredClaims: ['exp', 'sub'],
        }))
      } catch (error) {
        throw refusal(jose, error)
      }
      // RFC 7519 §4.1.2: a StringOrURI. A number would be stored as text (12345 as "12345.0" on
      // SQLite), and a token whose sub is that text would then sign in as its user.
      const subject = payload.sub
      if (typeof subject !== 'string' || subject === '' || subject.length > MAX_SUBJECT_LENGTH) {
        throw unauthenticated(`The token is refused: its sub claim must be a string of 1 to ${MAX_SUBJECT_LENGTH} characters`)
      }
      if (payload.iat !== undefined && payload.iat > Date.now() / 1000 + CLOCK_SKEW_S) {
        throw unauthenticated('The token is refused: its iat claim says it was issued in the future')
      }
      return {
        subject,
        name: text(payload.name) ?? text(payload.preferred_username),
        email: text(payload.email),
        admin: config.adminClaim === undefined ? undefined : holds(payload, config.adminClaim.path, config.adminClaim.value),
        scope: scopeOf(payload),
        expiresAt: new Date((payload.exp as number) * 1000),
      }
    },
  }
}

/** UNAUTHENTICATED for a token that is not a JWT (its parts unreadable) or names an algorithm not accepted. */
function refuseUnreadable({ decodeProtectedHeader, decodeJwt }: Jose, token: string): void {
  let alg: unknown
  try {
    alg = decodeProtectedHeader(token).alg
    decodeJwt(token)
  } catch {
    throw unauthenticated('The token is refused: it is not a valid JWT')
  }
  if (typeof alg !== 'string' || !ALGORITHMS.includes(alg)) throw unauthenticated('The token is refused: its signature algorithm is not accepted')
}

/** Why the token is refused (401), or the issuer's failure (503): a key set that could not be fetched is not the token's fault. */
function refusal({ errors }: Jose, error: unknown): AppError {
  if (error instanceof errors.JWTExpired) return unauthenticated('The token has expired')
  if (error instanceof errors.JWTClaimValidationFailed) return unauthenticated(`The token is refused: ${error.message}`)
  if (error instanceof errors.JWKSNoMatchingKey) return unauthenticated('The token is refused: the issuer publishes no key it names')
  if (error instanceof errors.JWSSignatureVerificationFailed) return unauthenticated('The token is refused: its signature does not verify')
  if (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError) || error instanceof errors.JWKSInvalid) return unavailable(error, error)
  if (error.code === 'ERR_JOSE_GENERIC') return unavailable(error, error)
  return unauthenticated('The token is refused: it is not a valid JWT')
}

/** A discovery document the service will not use: the issuer is reachable, but set up wrongly (or tampered with). */
class Misconfigured extends Error {
  override name = 'OidcIssuerMisconfigured'
}

/** 503: the issuer cannot be reached, or (`failure` a Misconfigured) its discovery document cannot be used. `cause` is for the log. */
function unavailable(failure: unknown, cause?: unknown): AppError {
  const message =
    failure instanceof Misconfigured
      ? 'The identity provider is misconfigured: the token cannot be verified'
      : 'The identity provider cannot be reached to verify the token'
  return new AppError('SERVICE_UNAVAILABLE', message, undefined, { retryAfterS: 5, cause })
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined)

/** Whether the claim at `path` is `value` or a list that holds it (or, without a value, is true). */
function holds(payload: JWTPayload, path: readonly string[], value: string | undefined): boolean {
  let claim: unknown = payload
  for (const part of path) claim = typeof claim === 'object' && claim !== null ? (claim as Record<string, unknown>)[part] : undefined
  if (value === undefined) return claim === true
  return claim === value || (Array.isArray(claim) && claim.includes(value))
}

function scopeOf(payload: JWTPayload): Scope {
  const named =
    typeof payload.scope === 'string'
      ? payload.scope.split(' ')
      : Array.isArray(payload.scp)
        ? payload.scp
        : typeof payload.scp === 'string'
          ? payload.scp.split(' ')
          : []
  return named.includes('read') && !named.includes('write') ? 'read' : 'write'
}
