// The representation cache: the representations already sent, kept so that the next GET of the
// same resource is answered without the database, the serializer or the hash: its body (with a
// fresh meta.timestamp), ETag, Last-Modified, Cache-Control and Link, or its 304. The conventions
// are paid once per representation, not once per request (docs/decisions/0052-representation-cache.md); every hook
// before the handler (rate limit, access, the in-flight limit) still runs for every request.
//
// An entry is keyed by what the answer depends on besides the data: the URL (path and query), the
// Accept header (the API version of the unversioned paths) and the caller (drafts, private cache
// control). It stays valid while nothing it was read from has changed since it was read: the
// store tells every committed change (src/db/changes.ts: rows of a table by id, rows added, any
// row of a table, or everything), and the clock below keeps when each table and row last changed.
// What an entry was read from is its dependencies: one resource depends on its own row and on the
// other tables its representation shows (a comment shows its author's name), so a PATCH of user 7
// leaves user 8's entry, and every post's, as it was; a page depends on its tables as a whole (a
// row added or changed anywhere in them may enter, leave or move in it); an answer of unknown
// origin depends on every table. A change is told after its commit, and an entry is stored only
// if nothing it depends on changed since the request began, so an answer read across a write is
// never kept. On PostgreSQL the other instances' changes arrive over NOTIFY, a few milliseconds
// after their commit (docs/decisions/0052-representation-cache.md gives the staleness measured); while the listening
// connection is down nothing is kept or answered from here. Bounded by a byte budget, the oldest
// entry not used lately going first (RecentlyUsed: a hit never moves its entry in the map, and the
// rows' clock below moves a row only once it is in the older half, for the reason given there).
import type { Change } from '../db/changes.js'
import { RecentlyUsed } from '../recently-used.js'

/** What a cached answer was read from. */
export interface Dependencies {
  /** The one row it shows, in `table`: only a change of that row, or of its table as a whole, makes it stale. */
  readonly row?: { readonly table: string; readonly id: number }
  /** Tables any change of which makes it stale; absent: every table. */
  readonly tables?: readonly string[]
}

/**
 * When each table and row last changed, on a clock of its own that moves with every change told.
 * Rows are remembered up to MAX_REMEMBERED_ROWS; a forgotten row's change counts, from then on,
 * for every row (an entry read before it is stale). The row forgotten is the one that entered or
 * was moved up the longest ago; a row changed again is moved up only once it is in the older half
 * (in the newer half, its time is updated where it stands).
 */
export class ChangeClock {
  private now = 0
  private everything = 0
  private anyTable = 0
  private rowsForgotten = 0
  /** The last change of each table, whatever it was. */
  private readonly tableChanged = new Map<string, number>()
  /** The last change of each table that was not pinned to rows (any row may have changed). */
  private readonly tableRewritten = new Map<string, number>()
  /** The last change of each row, `table#id`, by when it entered or was last moved up (`order`), oldest first. */
  private readonly rowChanged = new Map<string, { at: number; order: number }>()
  /** Rows entered or moved up so far. */
  private rowMoves = 0

  constructor(private readonly maxRows = MAX_REMEMBERED_ROWS) {}

  /** The time now: what a request that begins reading now compares with. */
  get time(): number {
    return this.now
  }

  tell(changes: readonly Change[]): void {
    const at = ++this.now
    for (const change of changes) {
      if (change.kind === 'everything') {
        this.everything = at
        continue
      }
      this.anyTable = at
      this.tableChanged.set(change.table, at)
      if (change.kind === 'table') this.tableRewritten.set(change.table, at)
      else if (change.kind === 'rows') for (const id of change.ids) this.rowChangedAt(`${change.table}#${id}`, at)
    }
  }

  /** Whether nothing `dependencies` names has changed after `since`. */
  unchangedSince(dependencies: Dependencies, since: number): boolean {
    if (this.everything > since) return false
    const { row, tables } = dependencies
    if (tables === undefined) {
      if (this.anyTable > since) return false
    } else {
      for (const table of tables) if ((this.tableChanged.get(table) ?? 0) > since) return false
    }
    if (row === undefined) return true
    return (
      (this.tableRewritten.get(row.table) ?? 0) <= since && this.rowsForgotten <= since && (this.rowChanged.get(`${row.table}#${row.id}`)?.at ?? 0) <= since
    )
  }

  private rowChangedAt(key: string, at: number): void {
    const known = this.rowChanged.get(key)
    if (known !== undefined && this.rowMoves - known.order < this.maxRows / 2) {
      known.at = at
      return
    }
    if (known !== undefined) this.rowChanged.delete(key)
    this.rowChanged.set(key, { at, order: this.rowMoves++ })
    if (this.rowChanged.size <= this.maxRows) return
    const [oldest, { at: when }] = this.rowChanged.entries().next().value as [string, { at: number }]
    this.rowChanged.delete(oldest)
    this.rowsForgotten = Math.max(this.rowsForgotten, when)
  }
}

/** Rows whose last change the clock keeps (about 100 bytes each). */
const MAX_REMEMBERED_ROWS = 20_000

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
