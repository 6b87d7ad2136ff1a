// An outside OpenID Connect issuer's access tokens, verified with jose: discovery read once (again
// after a failure, at most every few seconds), the keys from its jwks_uri cached and fetched again
// when a token names a key they lack (jose's cooldown bounds how often). Only asymmetric algorithms
// are accepted, so neither `alg: none` nor an HMAC keyed with a public key can pass; `iss`, `aud`,
// `exp` and `sub` are required.
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors, type JWTPayload, jwtVerify } from 'jose'
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
/** A JWT's shape: three base64url parts (the issuer's tokens are told from Threadline's own by it). */
const JWT_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

export type OidcIssuer = ReturnType<typeof createOidcIssuer>

export function createOidcIssuer(config: OidcConfig) {
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined
  let discovering: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined
  let failedAt = -Infinity

  async function discover(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const url = `${config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`
    const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } })
    if (!response.ok) throw new Error(`${url} answered ${response.status}`)
    const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown }
    // OpenID Connect Discovery §4.3: the document must name the issuer it was asked of.
    if (metadata.issuer !== config.issuer) throw new Error(`${url} names the issuer ${JSON.stringify(metadata.issuer)}, not ${config.issuer}`)
    if (typeof metadata.jwks_uri !== 'string') throw new Error(`${url} has no jwks_uri`)
    return createRemoteJWKSet(new URL(metadata.jwks_uri), { cooldownDuration: config.keysCooldownMs, timeoutDuration: FETCH_TIMEOUT_MS })
  }

  function keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (keys !== undefined) return Promise.resolve(keys)
    if (Date.now() - failedAt < DISCOVERY_RETRY_MS) return Promise.reject(unreachable())
    discovering ??= discover().then(
      (found) => {
        keys = found
        return found
      },
      (error: unknown) => {
        failedAt = Date.now()
        discovering = undefined
        throw unreachable(error)
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
      // What the token's own parts refuse needs no key: refused at once, even while the issuer is away.
      refuseUnreadable(token)
      const resolveKey = await keySet()
      let payload: JWTPayload
      try {
        ;({ payload } = await jwtVerify(token, resolveKey, {
          issuer: config.issuer,
          audience: config.audience,
          algorithms: ALGORITHMS,
          requiredClaims: ['exp', 'sub'],
        }))
      } catch (error) {
        throw refusal(error)
      }
      return {
        subject: payload.sub as string,
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
function refuseUnreadable(token: string): void {
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
function refusal(error: unknown): AppError {
  if (error instanceof errors.JWTExpired) return unauthenticated('The token has expired')
  if (error instanceof errors.JWTClaimValidationFailed) return unauthenticated(`The token is refused: ${error.message}`)
  if (error instanceof errors.JWKSNoMatchingKey) return unauthenticated('The token is refused: the issuer publishes no key it names')
  if (error instanceof errors.JWSSignatureVerificationFailed) return unauthenticated('The token is refused: its signature does not verify')
  if (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError) || error instanceof errors.JWKSInvalid) return unreachable(error)
  if (error.code === 'ERR_JOSE_GENERIC') return unreachable(error)
  return unauthenticated('The token is refused: it is not a valid JWT')
}

function unreachable(cause?: unknown): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The identity provider cannot be reached to verify the token', undefined, { retryAfterS: 5, cause })
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
