// Bearer tokens: issued to a user (by signing in, or by the operator's CLI), resolved to a Caller
// on every request, revoked on demand. A token is `tl_` and 256 random bits; the store keeps
// only its SHA-256, so a leaked database holds no usable credential. Each has a scope: `read`, or
// `write` (all its user may do).
// With an outside OpenID Connect issuer configured, its JWT access tokens sign callers in too
// (issued-callers.ts). The callers of tokens seen are kept in the process (known-callers.ts), and
// failed sign-ins are counted before a password is checked (sign-in-attempts.ts).
import { randomBytes } from 'node:crypto'
import type { OidcConfig } from '../config/oidc-config.js'
import type { Caller, Scope } from '../core/caller.js'
import type { CallerTopics } from '../core/caller-changed.js'
import type { Db } from '../db/create-database.js'
import type { Events } from '../events/events.js'
import { AppError, notFound, unauthenticated } from '../errors.js'
import type { UsersService } from '../users/users.public.js'
import { issuedCallers } from './issued-callers.js'
import { type SignInAllowance, takeSignInAttempt } from './sign-in-attempts.js'
import { type HeardChanges, knownCallers } from './known-callers.js'
import { hashToken } from './token-hash.js'
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
   * The store's changes as it tells them (Database.changes), where the callers of tokens seen may
   * be kept until their token's or user's row changes (SQLite). Absent (PostgreSQL, the CLI):
   * every request looks its token up.
   */
  changes?: HeardChanges
}

/** Where a sign-in comes from. */
export interface SignInClient {
  /** The client's address as the rate limit keys it (an IPv6 address by its /64). */
  address: string
}

export type TokensService = ReturnType<typeof createTokensService>

export function createTokensService({ db, users, tokenTtlMs, events, signInAllowance, changes, oidc }: TokensServiceDeps) {
  const callerOf = knownCallers(db, changes)
  const issued = oidc === undefined ? undefined : issuedCallers({ db, oidc, users, tokenTtlMs, callerOf })

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
      if (issued?.isIssued(token) === true) return issued.callerOf(token)
      throw unauthenticated('The token is invalid, expired or revoked')
    },

    /**
     * Exchanges a user's e-mail and password for a token; one answer for every wrong part.
     * RATE_LIMITED, before any password is checked, when the client or the account has failed too
     * often; SERVICE_UNAVAILABLE when too many passwords are being checked already.
     */
    async signIn(input: SignInInput, client: SignInClient): Promise<IssuedToken> {
      const attempt = await takeSignInAttempt(signInAllowance, input.email, client.address)
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
