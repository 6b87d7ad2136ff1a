// The representation cache: the representations already sent, kept so that the next GET of the
// same resource is answered without the database, the serializer or the hash: its body (with a
// fresh meta.timestamp), ETag, Last-Modified, Cache-Control and Link, or its 304. The conventions
// are paid once per representation, not once per request (docs/decisions/0052-representation-cache.md); every hook
// before the handler (rate limit, access, the in-flight limit) still runs for every request.
//
// An entry is keyed by what the answer depends on besides the data: the URL (path and query), the
// Accept header (the API version of the unversioned paths) and the caller (drafts, private cache
// control). It stays valid while nothing it was read from has changed since it was read: the store
// tells every committed change (src/db/changes.ts: rows of a table by id, rows added, any row of a
// table, or everything), and a ChangeClock (src/db/change-clock.ts) keeps when each table and row
// last changed. What an entry was read from is its dependencies: one resource depends on its own
// row and on the other tables its representation shows (a comment shows its author's name), so a
// PATCH of user 7 leaves user 8's entry, and every post's, as it was; a page depends on its tables
// as a whole (a row added or changed anywhere in them may enter, leave or move in it); an answer of
// unknown origin depends on every table. A change is told after its commit, and an entry is stored
// only if nothing it depends on changed since the request began, so an answer read across a write
// is never kept. On PostgreSQL the other instances' changes arrive over NOTIFY, a few milliseconds
// after their commit (docs/decisions/0052-representation-cache.md gives the staleness measured);
// while the listening connection is down nothing is kept or answered from here. Bounded by a byte
// budget, the oldest entry not used lately going first (RecentlyUsed: a hit never moves its entry
// in the map, and the rows' clock moves a row only once it is in the older half: change-clock.ts).
import { ChangeClock, type Dependencies } from '../db/change-clock.js'
import { RecentlyUsed } from '../recently-used.js'

/** What a cached GET answers with, apart from meta.timestamp. */
export interface Representation {
  /** The serialized envelope up to meta.timestamp's value, and after it. */
  readonly head: string
  readonly tail: string
  readonly etag: string
  readonly lastModifiedMs: number | null
  /** Last-Modified, as sent. */
  readonly lastModified: string | undefined
  readonly isCollection: boolean
  readonly cacheControl: string
  readonly link: string | undefined
  /** What it was read from, and when (ChangeClock.time as its request began). */
  readonly dependencies: Dependencies
  readonly readAt: number
}

export interface RepresentationCache {
  /** The entry for `key`, if nothing it depends on has changed since it was read; a stale one is dropped. */
  get(key: string): Representation | undefined
  /** Keeps `representation`, unless something it depends on has changed since it was read. */
  set(key: string, representation: Representation): void
  /** The time now, to be kept as `readAt` by what a request reads from here on. */
  readonly clock: ChangeClock
}

/** A representation's size in the budget: its strings (two bytes a character, as V8 may hold them) and the key. */
const sizeOf = (key: string, r: Representation) =>
  2 * (key.length + r.head.length + r.tail.length + r.etag.length + (r.lastModified?.length ?? 0) + r.cacheControl.length + (r.link?.length ?? 0)) + 200

export function createRepresentationCache(budgetBytes: number, clock = new ChangeClock()): RepresentationCache {
  const entries = new RecentlyUsed<string, Representation>(budgetBytes, sizeOf)
  return {
    clock,
    get(key) {
      const entry = entries.peek(key)
      if (entry === undefined) return undefined
      if (!clock.unchangedSince(entry.dependencies, entry.readAt)) {
        entries.delete(key)
        return undefined
      }
      return entries.get(key)
    },
    set(key, representation) {
      if (!clock.unchangedSince(representation.dependencies, representation.readAt)) return
      if (sizeOf(key, representation) > budgetBytes / 16) return // one answer may not crowd out the rest
      entries.set(key, representation)
    },
  }
}
