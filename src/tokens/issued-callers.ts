// The callers of an outside OpenID Connect issuer's access tokens. The first token of a subject
// makes its user (from the `name` and `email` claims); later ones find it by subject. A verified
// token is kept in the tokens' table by its hash until it expires, so every later request with it,
// the checks of open connections and a revocation treat it as a token of Threadline's own.
import { Type } from 'typebox'
import type { OidcConfig } from '../config/oidc-config.js'
import { type Caller, OPERATOR } from '../core/caller.js'
import { bodyAjv } from '../core/validation.js'
import type { Db } from '../db/create-database.js'
import { AppError, isAppError, unauthenticated } from '../errors.js'
import { User, type UsersService } from '../users/users.public.js'
import type { CallerOfHash } from './known-callers.js'
import { createOidcIssuer, type IssuedIdentity } from './oidc-issuer.js'
import { hashToken } from './token-hash.js'
import * as repo from './tokens.repository.js'

/** A user's name is at most this long (the users feature's schema): a longer name claim is cut. */
const MAX_NAME = 100
/** Whether an issuer's claims make a user as the users feature's schema has one. */
const userClaimsValid = bodyAjv.compile(Type.Pick(User, ['name', 'email']))

export interface IssuedCallersDeps {
  db: Db
  oidc: OidcConfig
  /** The users an issuer's subjects are (made, found, their role followed). */
  users: Pick<UsersService, 'get' | 'create' | 'update' | 'remove'>
  /** Lifetime of Threadline's own tokens: a kept token of the issuer never lives longer. */
  tokenTtlMs: number
  callerOf: CallerOfHash
}

export interface IssuedCallers {
  /** Whether the token is shaped as the issuer's (a JWT), whoever signed it. */
  isIssued(token: string): boolean
  /** The caller of a token of the issuer: verified the first time it is sent, then kept as a token. */
  callerOf(token: string): Promise<Caller>
}

export function issuedCallers({ db, oidc, users, tokenTtlMs, callerOf }: IssuedCallersDeps): IssuedCallers {
  const issuer = createOidcIssuer(oidc)
  /** Users being made for an issuer's subjects, by subject: concurrent first requests of one subject make one. */
  const making = new Map<string, Promise<number>>()

  /** The caller of an access token of the outside issuer: verified the first time it is sent, then kept as a token. */
  async function callerOfIssued(token: string): Promise<Caller> {
    const hash = hashToken(token)
    const kept = await callerOf(hash)
    if (kept !== undefined) return kept
    const identity = await issuer.verify(token)
    const userId = await userOf(identity)
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
  async function userOf(identity: IssuedIdentity): Promise<number> {
    const found = await repo.findIdentity(db, oidc.issuer, identity.subject)
    if (found === undefined) {
      let made = making.get(identity.subject)
      if (made === undefined) {
        made = makeUser(identity).finally(() => making.delete(identity.subject))
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

  async function makeUser(identity: IssuedIdentity): Promise<number> {
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
      const mapped = await repo.findIdentity(db, oidc.issuer, identity.subject)
      if (mapped !== undefined) return mapped
      throw new AppError(
        'CONFLICT',
        "Another user has the token's e-mail address: a user of the identity provider is never joined to an existing one by address",
      )
    }
    if (await repo.insertIdentity(db, { issuer: oidc.issuer, subject: identity.subject, user_id: userId, created_at: new Date().toISOString() })) return userId
    // Another instance mapped the subject first: its user is the one.
    await users.remove(OPERATOR, userId)
    const mapped = await repo.findIdentity(db, oidc.issuer, identity.subject)
    if (mapped === undefined) throw unauthenticated('The token is invalid, expired or revoked')
    return mapped
  }

  return { isIssued: (token) => issuer.isJwt(token), callerOf: callerOfIssued }
}
