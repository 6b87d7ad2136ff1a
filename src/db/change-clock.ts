// When each table and row of the store last changed, as its change feed tells (changes.ts): what
// keeps answers or callers read from the store asks whether what it read them from has changed since.
import type { Change } from './changes.js'

/** What something kept was read from. */
export interface Dependencies {
  /** The one row it was read from, in `table`: only a change of that row, or of its table as a whole, makes it stale. */
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
