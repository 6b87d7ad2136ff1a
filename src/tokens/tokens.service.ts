// Bearer tokens: issued to a user (by signing in, or by the operator's CLI), resolved to a Caller
// on every request, revoked on demand. A token is `tl_` and 256 random bits; the store keeps
// only its SHA-256, so a leaked database holds no usable credential.
import { createHash, randomBytes } from 'node:crypto'
import type { Caller } from '../core/caller.js'
import type { Db } from '../db/create-database.js'
import type { CallerTopics } from '../core/caller-changed.js'
import type { Events } from '../events/events.js'
import { AppError, notFound, unauthenticated } from '../errors.js'
import type { Limiter } from '../limits/limiter.js'
import type { UsersService } from '../users/users.public.js'
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
  events: Pick<Events<CallerTopics>, 'publish'>
  /** Who the user is whose credentials are given (the users feature keeps passwords). */
  users: Pick<UsersService, 'verifyCredentials' | 'idOf'>
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

/** Callers of tokens kept at most (the least recently seen goes first). */
const KNOWN_CALLERS_MAX = 10_000

export function createTokensService({ db, users, tokenTtlMs, events, signInAllowance, dataVersion }: TokensServiceDeps) {
  // The callers of the tokens seen, by token hash, each valid while the data version has not moved
  // and the token has not expired: a revocation, a role changed, a user deleted are writes, by this
  // process or (on SQLite) another, so a right is still checked as it stands when it is used. The
  // lookup was half of a signed-in GET one user served from the representation cache (docs/architecture.md).
  const known = new Map<string, { caller: Caller; expiresAtMs: number; version: number }>()

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

  const takeSignInAttempt = (email: string, address: string) =>
    signInAllowance === 'unlimited' ? Promise.resolve(NOTHING_TAKEN) : takeAttempt(signInAllowance, email, address)

  return {
    /** The caller named by an Authorization header value; UNAUTHENTICATED unless it is a live bearer token. */
    async authenticate(authorization: string): Promise<Caller> {
      const token = BEARER_PATTERN.exec(authorization)?.[1]
      if (token === undefined) throw unauthenticated('The Authorization header must be "Bearer <token>"')
      if (!TOKEN_PATTERN.test(token)) throw unauthenticated('The token is invalid, expired or revoked')
      const hash = hashToken(token)
      const version = dataVersion?.()
      const seen = known.get(hash)
      if (seen !== undefined) {
        known.delete(hash)
        if (seen.version === version && Date.now() < seen.expiresAtMs) {
          known.set(hash, seen)
          return seen.caller
        }
      }
      const found = await repo.findActiveToken(db, hash, new Date().toISOString())
      if (found === undefined) throw unauthenticated('The token is invalid, expired or revoked')
      const caller: Caller = { userId: found.user_id, role: found.role, tokenId: found.id }
      // Kept only when nothing was written while it was read.
      if (version !== undefined && dataVersion?.() === version) {
        if (known.size >= KNOWN_CALLERS_MAX) known.delete(known.keys().next().value as string)
        known.set(hash, { caller, expiresAtMs: new Date(found.expires_at).getTime(), version })
      }
      return caller
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
      return issue(userId, tokenTtlMs)
    },

    /** For the operator's CLI: a token for the user with this id or e-mail address. */
    async issueFor(user: string, ttlMs: number): Promise<IssuedToken> {
      const id = await users.idOf(user)
      if (id === undefined) throw notFound(`User "${user}"`)
      return issue(id, ttlMs)
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
