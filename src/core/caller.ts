// Who is calling: resolved from the bearer token by the transport, handed to every service call.
// Services decide what the caller may do; anonymous callers are `null`.
import { AppError, forbidden, unauthenticated } from '../errors.js'
import { type IdInput, parseId } from './ids.js'

export const ROLES = ['user', 'admin'] as const
export type Role = (typeof ROLES)[number]

/**
 * What a token lets its bearer do: `read` (GET, queries, subscriptions) or `write` (all its user
 * may do, reads included). A script is given the narrower one.
 */
export const SCOPES = ['read', 'write'] as const
export type Scope = (typeof SCOPES)[number]

export interface Caller {
  readonly userId: number
  readonly role: Role
  /** The token the caller presented, so it can be revoked. */
  readonly tokenId: number
  /** The token's scope. */
  readonly scope: Scope
}

/**
 * The caller an Authorization header names; UNAUTHENTICATED for a header that is not a Bearer
 * token, or a token that is invalid, expired or revoked. The transports are given it (the tokens
 * feature provides it), so that they know no feature.
 */
export type Authenticate = (authorization: string) => Promise<Caller>

/**
 * The callers of these tokens as they stand now (live tokens only; a revoked, expired or orphaned
 * one is missing from the map), keyed by token id. Long-lived connections re-judge their callers
 * with it; the tokens feature provides it.
 */
export type CurrentCallers = (tokenIds: readonly number[]) => Promise<Map<number, Caller>>

export const isAdmin = (caller: Caller | null): boolean => caller?.role === 'admin'

/** The caller, or UNAUTHENTICATED when there is none. */
export function requireSignedIn(caller: Caller | null): Caller {
  if (caller === null) throw unauthenticated()
  return caller
}

/** The caller when an admin; UNAUTHENTICATED when anonymous, FORBIDDEN otherwise. */
export function requireAdmin(caller: Caller | null, action: string): Caller {
  const signedIn = requireSignedIn(caller)
  if (signedIn.role !== 'admin') throw forbidden(`Only an admin may ${action}`)
  return signedIn
}

/** The caller when they own the thing (`ownerId`) or are an admin; UNAUTHENTICATED or FORBIDDEN otherwise. */
export function requireOwnerOrAdmin(caller: Caller | null, ownerId: number, action: string): Caller {
  const signedIn = requireSignedIn(caller)
  if (signedIn.userId !== ownerId && signedIn.role !== 'admin') throw forbidden(`Only the owner or an admin may ${action}`)
  return signedIn
}

/**
 * What a user's row must hold for `caller` to change it without reading it first (its checks made
 * conditions of the write): its owner (`user_id`) the caller, for anyone but an admin; for an
 * admin, the user the path names (`pathUserId`), when it names one. Undefined when the right
 * cannot be told so: no caller, or a path naming another user than the caller, or none that
 * parses. The write then reads the row first, to answer NOT_FOUND or FORBIDDEN as it should.
 */
export function ownerToMatch(caller: Caller | null, pathUserId: IdInput | undefined): { readonly user_id?: number } | undefined {
  if (caller === null) return undefined
  const named = pathUserId === undefined ? undefined : parseId(pathUserId)
  if (pathUserId !== undefined && named === undefined) return undefined
  if (caller.role === 'admin') return named === undefined ? {} : { user_id: named }
  return named === undefined || named === caller.userId ? { user_id: caller.userId } : undefined
}

/** Whether the caller's token grants `needed`: a write token grants reads too. */
export const grants = (caller: Caller, needed: Scope): boolean => caller.scope === 'write' || needed === 'read'

/**
 * FORBIDDEN for a token without the scope `needed` (RFC 6750's insufficient_scope): a signed-in
 * caller whose token may only read, refused a write.
 */
export const insufficientScope = (needed: Scope): AppError =>
  new AppError('FORBIDDEN', `The token's scope does not allow this: it needs the "${needed}" scope`, undefined, { requiredScope: needed })

/** The operator at the command line (`threadline users create`): acts with an admin's rights. */
export const OPERATOR: Caller = Object.freeze({ userId: 0, role: 'admin', tokenId: 0, scope: 'write' })
