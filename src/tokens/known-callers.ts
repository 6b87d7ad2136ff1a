// The callers of the tokens seen, by token hash, each kept while neither its token's row nor its
// user's row has changed (as the store's change feed tells) and the token has not expired: a
// revocation, a role changed, a user deleted are writes, by this process or (on SQLite) another,
// so a right is still checked as it stands when it is used. The lookup was half of a signed-in GET
// one user served from the representation cache (docs/decisions/0052-representation-cache.md).
// Kept by the rows they were read from, not by the store's data version: with writes going on, a
// version that moved with every write sent every signed-in request back to the tokens table.
// Without a feed (PostgreSQL, where another instance's revocation would arrive a few milliseconds
// late over NOTIFY; the CLI) every call looks its token up.
import type { Caller } from '../core/caller.js'
import { ChangeClock, type Dependencies } from '../db/change-clock.js'
import type { ChangeFeed } from '../db/change-feed.js'
import type { Db } from '../db/create-database.js'
import { RecentlyUsed } from '../recently-used.js'
import * as repo from './tokens.repository.js'

/** Callers of tokens kept at most (one not seen lately goes first). */
const KNOWN_CALLERS_MAX = 10_000

/** The caller of the live token with a hash, if there is one. */
export type CallerOfHash = (hash: string) => Promise<Caller | undefined>

/** Where the changes of the store are heard, for what keeps what it read. */
export type HeardChanges = Pick<ChangeFeed, 'listen' | 'heard'>

interface Known {
  readonly caller: Caller
  readonly expiresAtMs: number
  /** Its token's row, and its user's row. */
  readonly rows: readonly [Dependencies, Dependencies]
  /** The clock's time as its lookup began. */
  readonly readAt: number
}

export function knownCallers(db: Db, changes: HeardChanges | undefined): CallerOfHash {
  if (changes === undefined) return async (hash) => (await lookUp(db, hash))?.caller
  const clock = new ChangeClock()
  changes.listen((told) => clock.tell(told))
  const known = new RecentlyUsed<string, Known>(KNOWN_CALLERS_MAX)
  const unchanged = (rows: Known['rows'], since: number) => clock.unchangedSince(rows[0], since) && clock.unchangedSince(rows[1], since)
  return async function callerOf(hash) {
    // Hears another process's commit first (told as everything).
    const heard = changes.heard()
    const readAt = clock.time
    const seen = known.peek(hash)
    if (seen !== undefined) {
      if (heard && Date.now() < seen.expiresAtMs && unchanged(seen.rows, seen.readAt)) return known.get(hash)?.caller
      known.delete(hash)
    }
    const found = await lookUp(db, hash)
    if (found === undefined) return undefined
    const { caller } = found
    const rows = [
      { row: { table: 'tokens', id: caller.tokenId }, tables: [] },
      { row: { table: 'users', id: caller.userId }, tables: [] },
    ] as const
    // Kept only when nothing it was read from was written while it was read.
    if (heard && unchanged(rows, readAt)) known.set(hash, { caller, expiresAtMs: found.expiresAtMs, rows, readAt })
    return caller
  }
}

async function lookUp(db: Db, hash: string): Promise<{ caller: Caller; expiresAtMs: number } | undefined> {
  const found = await repo.findActiveToken(db, hash, new Date().toISOString())
  if (found === undefined) return undefined
  return { caller: { userId: found.user_id, role: found.role, tokenId: found.id, scope: found.scope }, expiresAtMs: new Date(found.expires_at).getTime() }
}
