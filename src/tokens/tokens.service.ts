// Bearer tokens: issued to a user (by signing in, or by the operator's CLI), resolved to a Caller
// on every request, revoked on demand. A token is `tl_` and 256 random bits; the store keeps
// only its SHA-256, so a leaked database holds no usable credential. Each has a scope: `read`, or
// `write` (all its user may do).
//
// With an outside OpenID Connect issuer configured, its JWT access tokens sign callers in too. The
// first token of a subject makes its user (from the `name` and `email` claims); later ones find it
// by subject. A verified token is kept in the same table by its hash until it expires, so every
// later request with it, the checks of open connections and a revocation treat it as an own token.
import { createHash, randomBytes } from 'node:crypto'
import { Type } from 'typebox'
import type { OidcConfig } from '../config/oidc-config.js'
import { type Caller, OPERATOR, type Scope } from '../core/caller.js'
import type { Db } from '../db/create-database.js'
import type { CallerTopics } from '../core/caller-changed.js'
import { bodyAjv } from '../core/validation.js'
import type { Events } from '../events/events.js'
import { AppError, isAppError, notFound, unauthenticated } from '../errors.js'
import type { Limiter } from '../limits/limiter.js'
import { User, type UsersService } from '../users/users.public.js'
import { createOidcIssuer, type IssuedIdentity, type OidcIssuer } from './oidc-issuer.js'
import { RecentlyUsed } from '../recently-used.js'
import * as repo from './tokens.repository.js'
import type { IssuedToken, SignInInput } from './tokens.schemas.js'

const TOKEN_PREFIX = 'tl_'
const TOKEN_PATTERN = /^tl_[A-Za-z0-9_-]{43}$/
const BEARER_PATTERN = /^Bearer +(\S+) *$/i
/** What a client sends as its token when the variable meant to hold one was never set (`Bearer ${token}` in JavaScript). */
const UNSET_TOKENS = new Set(['undefined', 'null'])
/** Ids bound in one statement (SQLite takes at most 32,766 parameters). */
const MAX_IDS_PER_QUERY = 1000

export interface TokensServiceDeps {
  db: Db
  /** Where callerChanged is published when a token is revoked (open connections close on it). */
  events: Pick<Events<CallerTopics>, 'publish'>
  /** Who the user is whose credentials are given (the users feature keeps passwords); the users an issuer's subjects are. */
  users: Pick<UsersService, 'verifyCredentials' | 'idOf' | 'get' | 'create' | 'update' | 'remove'>
  /** An outside OpenID Connect issuer whose access tokens sign callers in too; absent: only own tokens. */
  oidc?: OidcConfig
  /** Lifetime of tokens issued by signing in. */
  tokenTtlMs: number
  /**
   * The allowances of failed sign-ins (config.passwords says why three). 'unlimited' only where
   * nobody signs in: the operator's CLI, test fixtures. The HTTP app always gives them.
   */
  signInAllowance: SignInAllowance | 'unlimited'
  /**
   * The store's data version (Database.dataVersion): where there is one, the callers of tokens
   * seen are kept until it moves. Absent (PostgreSQL, the CLI): every request looks its token up.
   */
  dataVersion?: () => number
}

/** Failed sign-ins per client address, per account and address, and per account (the highest). */
export interface SignInAllowance {
  perAddress: Limiter
  perAccountAndAddress: Limiter
  perAccount: Limiter
}

/** Where a sign-in comes from. */
export interface SignInClient {
  /** The client's address as the rate limit keys it (an IPv6 address by its /64). */
  address: string
}

export type TokensService = ReturnType<typeof createTokensService>

/** A user's name is at most this long (the users feature's schema): a longer name claim is cut. */
const MAX_NAME = 100
/** Whether an issuer's claims make a user as the users feature's schema has one. */
const userClaimsValid = bodyAjv.compile(Type.Pick(User, ['name', 'email']))

/** Callers of tokens kept at most (one not seen lately goes first). */
const KNOWN_CALLERS_MAX = 10_000

export function createTokensService({ db, users, tokenTtlMs, events, signInAllowance, dataVersion, oidc }: TokensServiceDeps) {
  // The callers of the tokens seen, by token hash, each valid while the data version has not moved
  // and the token has not expired: a revocation, a role changed, a user deleted are writes, by this
  // process or (on SQLite) another, so a right is still checked as it stands when it is used. The
  // lookup was half of a signed-in GET one user served from the representation cache (docs/decisions/0052-representation-cache.md).
  const known = new RecentlyUsed<string, { caller: Caller; expiresAtMs: number; version: number }>(KNOWN_CALLERS_MAX)

  const issuer = oidc === undefined ? undefined : createOidcIssuer(oidc)
  /** Users being made for an issuer's subjects, by subject: concurrent first requests of one subject make one. */
  const making = new Map<string, Promise<number>>()

  async function issue(userId: number, ttlMs: number, scope: Scope): Promise<IssuedToken> {
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url')
    const now = new Date()
    const expiresAt = new Date(now.getTime() + ttlMs).toISOString()
    await repo.insertToken(db, {
      user_id: userId,
      token_hash: hashToken(token),
      created_at: now.toISOString(),
      expires_at: expiresAt,
      scope,
    })
    return { token, expiresAt, scope }
  }

  /** The caller of the live token with this hash, if there is one. */
  async function callerOf(hash: string): Promise<Caller | undefined> {
    const version = dataVersion?.()
    const seen = known.peek(hash)
    if (seen !== undefined) {
      if (seen.version === version && Date.now() < seen.expiresAtMs) return known.get(hash)?.caller
      known.delete(hash)
    }
    const found = await repo.findActiveToken(db, hash, new Date().toISOString())
    if (found === undefined) return undefined
    const caller: Caller = { userId: found.user_id, role: found.role, tokenId: found.id, scope: found.scope }
    // Kept only when nothing was written while it was read.
    if (version !== undefined && dataVersion?.() === version) {
      known.set(hash, { caller, expiresAtMs: new Date(found.expires_at).getTime(), version })
    }
    return caller
  }

  /** The caller of an access token of the outside issuer: verified the first time it is sent, then kept as a token. */
  async function callerOfIssued(oidcIssuer: OidcIssuer, issuerUrl: string, token: string): Promise<Caller> {
    const hash = hashToken(token)
    const kept = await callerOf(hash)
    if (kept !== undefined) return kept
    const identity = await oidcIssuer.verify(token)
    const userId = await userOf(issuerUrl, identity)
    const now = new Date()
    await repo.insertTokenOnce(db, {
      user_id: userId,
      token_hash: hash,
      created_at: now.toISOString(),
      // Never longer than a token of Threadline's own.
      expires_at: new Date(Math.min(identity.expiresAt.getTime(), now.getTime() + tokenTtlMs)).toISOString(),
      scope: identity.scope,
    })
    // Absent when the token was revoked (DELETE /tokens/current) before this request.
    const caller = await callerOf(hash)
    if (caller === undefined) throw unauthenticated('The token is invalid, expired or revoked')
    return caller
  }

  /** The user an issuer's subject is: found by subject, or made by its first token; its role follows the admin claim when one is configured. */
  async function userOf(issuerUrl: string, identity: IssuedIdentity): Promise<number> {
    const found = await repo.findIdentity(db, issuerUrl, identity.subject)
    if (found === undefined) {
      let made = making.get(identity.subject)
      if (made === undefined) {
        made = makeUser(issuerUrl, identity).finally(() => making.delete(identity.subject))
        making.set(identity.subject, made)
      }
      return made
    }
    if (identity.admin !== undefined) {
      const role = identity.admin ? 'admin' : 'user'
      // A changed role is a write like an admin's: it is published, and open connections follow it.
      if ((await users.get(OPERATOR, found)).role !== role) await users.update(OPERATOR, found, { role })
    }
    return found
  }

  async function makeUser(issuerUrl: string, identity: IssuedIdentity): Promise<number> {
    const { email } = identity
    if (email === undefined) throw unauthenticated('The token has no email claim: the first token of a subject makes its user from its name and email claims')
    const input = { name: (identity.name ?? email).slice(0, MAX_NAME), email, role: identity.admin === true ? ('admin' as const) : ('user' as const) }
    if (!userClaimsValid(input)) throw unauthenticated("The token's name or email claim cannot make a user: one line of text and an e-mail address are needed")
    let userId: number
    try {
      userId = (await users.create(OPERATOR, input)).id
    } catch (error) {
      if (!(isAppError(error) && error.code === 'CONFLICT')) throw error
      // Made by another instance meanwhile, or the address is another user's: never linked by address alone.
      const mapped = await repo.findIdentity(db, issuerUrl, identity.subject)
      if (mapped !== undefined) return mapped
      throw new AppError(
        'CONFLICT',
        "Another user has the token's e-mail address: a user of the identity provider is never joined to an existing one by address",
      )
    }
    if (await repo.insertIdentity(db, { issuer: issuerUrl, subject: identity.subject, user_id: userId, created_at: new Date().toISOString() })) return userId
    // Another instance mapped the subject first: its user is the one.
    await users.remove(OPERATOR, userId)
    const mapped = await repo.findIdentity(db, issuerUrl, identity.subject)
    if (mapped === undefined) throw unauthenticated('The token is invalid, expired or revoked')
    return mapped
  }

  const takeSignInAttempt = (email: string, address: string) =>
    signInAllowance === 'unlimited' ? Promise.resolve(NOTHING_TAKEN) : takeAttempt(signInAllowance, email, address)

  return {
    /**
     * The caller named by an Authorization header value; UNAUTHENTICATED unless it is a live bearer
     * token of Threadline's own, or (when an issuer is configured) a valid access token of the issuer.
     */
    async authenticate(authorization: string): Promise<Caller> {
      const token = BEARER_PATTERN.exec(authorization)?.[1]
      if (token === undefined) throw unauthenticated('The Authorization header must be "Bearer <token>"')
      // Refused as any unknown token is, in words that point at the client's bug (short: a WebSocket's close reason).
      if (UNSET_TOKENS.has(token)) throw unauthenticated(`"Bearer ${token}" holds no token (an unset variable?): send one, or no Authorization to be anonymous`)
      if (TOKEN_PATTERN.test(token)) {
        const caller = await callerOf(hashToken(token))
        if (caller === undefined) throw unauthenticated('The token is invalid, expired or revoked')
        return caller
      }
      if (issuer !== undefined && oidc !== undefined && issuer.isJwt(token)) return callerOfIssued(issuer, oidc.issuer, token)
      throw unauthenticated('The token is invalid, expired or revoked')
    },

    /**
     * Exchanges a user's e-mail and password for a token; one answer for every wrong part.
     * RATE_LIMITED, before any password is checked, when the client or the account has failed too
     * often; SERVICE_UNAVAILABLE when too many passwords are being checked already.
     */
    async signIn(input: SignInInput, client: SignInClient): Promise<IssuedToken> {
      const attempt = await takeSignInAttempt(input.email, client.address)
      let userId: number | undefined
      try {
        userId = await users.verifyCredentials(input.email, input.password, client.address)
      } catch (error) {
        // No password was checked (the queue was full, the store failed): the attempt is not a failure.
        await attempt.giveBack()
        throw error
      }
      if (userId === undefined) throw unauthenticated('The e-mail address or the password is wrong')
      await attempt.giveBack()
      return issue(userId, tokenTtlMs, input.scope ?? 'write')
    },

    /** For the operator's CLI: a token for the user with this id or e-mail address. */
    async issueFor(user: string, ttlMs: number, scope: Scope = 'write'): Promise<IssuedToken> {
      const id = await users.idOf(user)
      if (id === undefined) throw notFound(`User "${user}"`)
      return issue(id, ttlMs, scope)
    },

    /**
     * Of these tokens (of open connections), the ones still live, as the callers they name now
     * (their user's current role), by token id: one query by primary key, in chunks.
     */
    async activeCallers(tokenIds: readonly number[]): Promise<Map<number, Caller>> {
      const now = new Date().toISOString()
      const callers = new Map<number, Caller>()
      for (let start = 0; start < tokenIds.length; start += MAX_IDS_PER_QUERY) {
        for (const found of await repo.findActiveTokensByIds(db, tokenIds.slice(start, start + MAX_IDS_PER_QUERY), now)) {
          callers.set(found.id, { userId: found.user_id, role: found.role, tokenId: found.id, scope: found.scope })
        }
      }
      return callers
    },

    /** Revokes the token the caller signed in with. */
    async revokeCurrent(caller: Caller): Promise<void> {
      const revoked = await repo.revokeTokenWhere(db, { id: caller.tokenId }, new Date().toISOString())
      // Committed: connections opened with this token close now, on every instance.
      if (revoked !== undefined) await events.publish('callerChanged', { userId: revoked.user_id, change: 'token-revoked', tokenId: revoked.id })
    },

    /** For the operator's CLI: revokes a token given in full. */
    async revoke(token: string): Promise<void> {
      const revoked = await repo.revokeTokenWhere(db, { token_hash: hashToken(token) }, new Date().toISOString())
      if (revoked === undefined) throw new AppError('NOT_FOUND', 'No active token matches')
      await events.publish('callerChanged', { userId: revoked.user_id, change: 'token-revoked', tokenId: revoked.id })
    },
  }
}

interface SignInAttempt {
  /** Returns the points the attempt took: it succeeded, or no password was checked. */
  giveBack(): Promise<void>
}

const NOTHING_TAKEN: SignInAttempt = { giveBack: async () => {} }

/**
 * Takes one attempt from each allowance, the client address's first: the first refusal stops
 * there, so an address past its allowance counts against no account, and one address adds at most
 * its account-and-address allowance to an account's. The points are taken before the password is
 * checked (so parallel attempts cannot all pass one check), and given back on success.
 */
async function takeAttempt(allowance: SignInAllowance, email: string, address: string): Promise<SignInAttempt> {
  // The account is the e-mail address given, whether or not a user has it (a refusal tells
  // nothing about who exists), hashed so that no address is stored in Redis's keys.
  const account = createHash('sha256').update(email.toLowerCase()).digest('base64url')
  const steps: [Limiter, string][] = [
    [allowance.perAddress, address],
    [allowance.perAccountAndAddress, `${account}:${address}`],
    [allowance.perAccount, account],
  ]
  const taken: [Limiter, string][] = []
  for (const [limiter, key] of steps) {
    const verdict = await limiter.consume(key)
    if (!verdict.allowed) {
      const { retryAfterS } = verdict
      throw new AppError('RATE_LIMITED', `Too many failed sign-ins: retry in ${retryAfterS} s`, undefined, { retryAfterS })
    }
    taken.push([limiter, key])
  }
  return {
    async giveBack() {
      await Promise.all(taken.map(([limiter, key]) => limiter.reward(key)))
    },
  }
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}
