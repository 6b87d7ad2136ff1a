// An outside OpenID Connect issuer (OIDC_ISSUER, OIDC_AUDIENCE, OIDC_ADMIN_CLAIM, OIDC_JWKS_ORIGINS):
// its JWT access tokens sign callers in beside Threadline's own tokens.
import { ConfigError, type Env, raw } from './read-env.js'

/** Which claim of an access token makes its user an admin: the claim at `path` is `value`, holds it (a list), or is true when no value is given. */
export interface AdminClaim {
  /** The claim's name, or a dotted path into nested claims (`realm_access.roles`). */
  readonly path: readonly string[]
  /** The value that makes an admin; undefined: the claim must be `true`. */
  readonly value: string | undefined
}

export interface OidcConfig {
  /** The issuer's URL, exactly as its tokens' `iss` claim names it; discovery is read at `<issuer>/.well-known/openid-configuration`. */
  readonly issuer: string
  /** The `aud` an access token must name (the API's identifier at the issuer). */
  readonly audience: string
  /** The claim that makes an admin; undefined (the default): the issuer makes no admins, and a user keeps the role Threadline gives. */
  readonly adminClaim: AdminClaim | undefined
  /**
   * The origins the discovery document's `jwks_uri` may be on: the issuer's own, then those
   * OIDC_JWKS_ORIGINS names. A key set elsewhere is never fetched: whoever can change the
   * discovery document cannot send the service to another host, nor from https to http.
   * @default [the issuer's origin]
   */
  readonly jwksOrigins: readonly string[]
  /**
   * After the issuer's keys were fetched, how long a token signed by a key they lack waits before
   * they are fetched again (a rotation needs no restart; a flood of forged key ids costs one fetch
   * per period). Not a variable: tests shorten it. @default 5000
   */
  readonly keysCooldownMs: number
}

/** The issuer, or undefined (the default) when only Threadline's own tokens sign callers in. */
export function readOidcConfig(env: Env): OidcConfig | undefined {
  const issuer = raw(env, 'OIDC_ISSUER')
  if (issuer === undefined) {
    for (const name of ['OIDC_AUDIENCE', 'OIDC_ADMIN_CLAIM', 'OIDC_JWKS_ORIGINS']) {
      if (raw(env, name) !== undefined) throw new ConfigError(name, 'is read only with OIDC_ISSUER, which is not set')
    }
    return undefined
  }
  const url = parseUrl(issuer)
  if (url === undefined || !isSecureOrLocal(url) || url.search !== '' || url.hash !== '') {
    throw new ConfigError('OIDC_ISSUER', `expected the issuer's https:// URL (http:// only on localhost), without query or fragment, got "${issuer}"`)
  }
  const audience = raw(env, 'OIDC_AUDIENCE')
  if (audience === undefined) throw new ConfigError('OIDC_AUDIENCE', 'is required with OIDC_ISSUER: the audience (aud) the access tokens are issued for')
  return Object.freeze({
    issuer,
    audience,
    adminClaim: readAdminClaim(env, 'OIDC_ADMIN_CLAIM'),
    jwksOrigins: Object.freeze([url.origin, ...readJwksOrigins(env, 'OIDC_JWKS_ORIGINS', url)]),
    keysCooldownMs: 5000,
  })
}

function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value)
  } catch {
    return undefined
  }
}

/** https://, or http:// on this machine (a local issuer in development). */
function isSecureOrLocal(url: URL): boolean {
  const local = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]'
  return url.protocol === 'https:' || (url.protocol === 'http:' && local)
}

/**
 * Further origins the issuer's keys may be served from (some providers publish them on another
 * host): a comma-separated list of origins, https:// under an https:// issuer (an http:// one only
 * on localhost, under a local http:// issuer).
 */
function readJwksOrigins(env: Env, name: string, issuer: URL): string[] {
  const value = raw(env, name)
  if (value === undefined) return []
  const named = value
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '')
  return named.map((origin) => {
    const url = parseUrl(origin)
    const bare = url !== undefined && url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === ''
    const scheme = url !== undefined && isSecureOrLocal(url) && (issuer.protocol === 'http:' || url.protocol === 'https:')
    if (url === undefined || !bare || !scheme) {
      throw new ConfigError(
        name,
        `expected origins such as https://keys.example.com (no path), https:// under an https:// issuer (http:// only on localhost, under an http:// issuer), got "${origin}"`,
      )
    }
    return url.origin
  })
}

function readAdminClaim(env: Env, name: string): AdminClaim | undefined {
  const value = raw(env, name)
  if (value === undefined) return undefined
  const match = /^([A-Za-z0-9_:/.-]+?)(?:=(.+))?$/.exec(value)
  const path = match?.[1]?.split('.')
  if (match === null || path === undefined || path.some((part) => part === '')) {
    throw new ConfigError(
      name,
      `expected a claim, or a dotted path to one, with an optional =value (realm_access.roles=admin, groups=threadline-admins, is_admin), got "${value}"`,
    )
  }
  return Object.freeze({ path: Object.freeze(path), value: match[2] })
}
