// Bearer tokens: issued to a user (by signing in, or by the operator's CLI), resolved to a Caller
// on every request, revoked on demand. A token is `tl_` and 256 random bits; the store keeps
// only its SHA-256, so a leaked database holds no usable credential.
import { createHash, randomBytes } from 'node:crypto'
import type { Caller } from '../caller.js'
import type { Db } from '../db/create-database.js'
import type { Events } from '../events/events.js'
import { AppError, notFound, unauthenticated } from '../errors.js'
import { parseId } from '../ids.js'
import { verifyAgainstDecoy, verifyPassword } from '../users/passwords.js'
import { findUserByEmail, findUserById } from '../users/users.repository.js'
import * as repo from './tokens.repository.js'
import type { IssuedToken, SignInInput } from './tokens.schemas.js'

const TOKEN_PREFIX = 'tl_'
const TOKEN_PATTERN = /^tl_[A-Za-z0-9_-]{43}$/
const BEARER_PATTERN = /^Bearer +(\S+) *$/i
/** Ids bound in one statement (SQLite takes at most 32,766 parameters). */
const MAX_IDS_PER_QUERY = 1000

export interface TokensServiceDeps {
  db: Db
  /** Where callerChanged is published when a token is revoked (open connections close on it). */
  events: Pick<Events, 'publish'>
  /** Lifetime of tokens issued by signing in. */
  tokenTtlMs: number
}

export type TokensService = ReturnType<typeof createTokensService>

export function createTokensService({ db, tokenTtlMs, events }: TokensServiceDeps) {
  async function issue(userId: number, ttlMs: number): Promise<IssuedToken> {
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url')
    const now = new Date()
    const expiresAt = new Date(now.getTime() + ttlMs).toISOString()
    await repo.insertToken(db, {
      user_id: userId,
      token_hash: hashToken(token),
      created_at: now.toISOString(),
      expires_at: expiresAt,
    })
    return { token, expiresAt }
  }

  return {
    /** The caller named by an Authorization header value; UNAUTHENTICATED unless it is a live bearer token. */
    async authenticate(authorization: string): Promise<Caller> {
      const token = BEARER_PATTERN.exec(authorization)?.[1]
      if (token === undefined) throw unauthenticated('The Authorization header must be "Bearer <token>"')
      const found = TOKEN_PATTERN.test(token)
        ? await repo.findActiveToken(db, hashToken(token), new Date().toISOString())
        : undefined
      if (found === undefined) throw unauthenticated('The token is invalid, expired or revoked')
      return { userId: found.user_id, role: found.role, tokenId: found.id }
    },

    /** Exchanges a user's e-mail and password for a token; one answer for every wrong part. */
    async signIn(input: SignInInput): Promise<IssuedToken> {
      const user = await findUserByEmail(db, input.email)
      const valid =
        user?.password_hash != null
          ? await verifyPassword(input.password, user.password_hash)
          : await verifyAgainstDecoy(input.password)
      if (!valid || user === undefined) throw unauthenticated('The e-mail address or the password is wrong')
      return issue(user.id, tokenTtlMs)
    },

    /** For the operator's CLI: a token for the user with this id or e-mail address. */
    async issueFor(user: string, ttlMs: number): Promise<IssuedToken> {
      const id = parseId(user)
      const row = id === undefined ? await findUserByEmail(db, user) : await findUserById(db, id)
      if (row === undefined) throw notFound(`User "${user}"`)
      return issue(row.id, ttlMs)
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
          callers.set(found.id, { userId: found.user_id, role: found.role, tokenId: found.id })
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

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}
