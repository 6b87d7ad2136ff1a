// The callers of the tokens seen, by token hash, each kept while the store's data version has not
// moved and the token has not expired: a revocation, a role changed, a user deleted are writes, by
// this process or (on SQLite) another, so a right is still checked as it stands when it is used.
// The lookup was half of a signed-in GET one user served from the representation cache
// (docs/decisions/0052-representation-cache.md). Without a data version (PostgreSQL, the CLI) every call looks its token up.
import type { Caller } from '../core/caller.js'
import type { Db } from '../db/create-database.js'
import { RecentlyUsed } from '../recently-used.js'
import * as repo from './tokens.repository.js'

/** Callers of tokens kept at most (one not seen lately goes first). */
const KNOWN_CALLERS_MAX = 10_000

/** The caller of the live token with a hash, if there is one. */
export type CallerOfHash = (hash: string) => Promise<Caller | undefined>

export function knownCallers(db: Db, dataVersion: (() => number) | undefined): CallerOfHash {
  const known = new RecentlyUsed<string, { caller: Caller; expiresAtMs: number; version: number }>(KNOWN_CALLERS_MAX)
  return async function callerOf(hash) {
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
}
