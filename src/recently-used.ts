// A map bounded by a budget (a count of entries, or what each costs: its bytes), whose entry to go
// first is the oldest not used since it was last passed over: CLOCK, LRU's approximation. A hit
// marks its entry and never moves it. LRU on a Map moves the entry to the end on every hit (delete,
// then set), and V8's hash table keeps a deleted entry in its bucket's chain until the table is
// rebuilt: with thousands of entries kept, a hot key's chain grew by one each hit, to thousands,
// and each lookup walked it (the representation cache: a cached GET one user fell from about
// 19,000 to 11,000 requests/s once the 10,000 users were kept; docs/performance.md). Here an entry
// moves only when it is passed over, once per eviction that reaches it.

export class RecentlyUsed<K, V> {
  /** Each entry, and whether it was used since it was kept or last passed over; oldest first. */
  private readonly entries = new Map<K, { value: V; cost: number; used: boolean }>()
  private spent = 0

  /**
   * @param budget What the entries may cost together.
   * @param costOf What an entry costs (1 by default: the budget is a count).
   * @param maxEntries Entries kept at most, whatever their cost.
   */
  constructor(
    private readonly budget: number,
    private readonly costOf: (key: K, value: V) => number = () => 1,
    private readonly maxEntries = Number.POSITIVE_INFINITY,
  ) {}

  get size(): number {
    return this.entries.size
  }

  /** The value kept for `key`, marked as used. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    entry.used = true
    return entry.value
  }

  /** The value kept for `key`, leaving it as it was (for a caller that may yet find it stale). */
  peek(key: K): V | undefined {
    return this.entries.get(key)?.value
  }

  has(key: K): boolean {
    return this.entries.has(key)
  }

  /** Keeps `value` (in place of any kept for `key`), letting others go while the budget is exceeded. */
  set(key: K, value: V): void {
    this.delete(key)
    const cost = this.costOf(key, value)
    if (cost > this.budget) return
    // Oldest first: one used since is passed over once (moved to the end, unmarked); the first unused goes.
    for (const [oldest, entry] of this.entries) {
      if (this.spent + cost <= this.budget && this.entries.size < this.maxEntries) break
      this.entries.delete(oldest)
      if (entry.used) {
        entry.used = false
        this.entries.set(oldest, entry)
      } else {
        this.spent -= entry.cost
      }
    }
    this.entries.set(key, { value, cost, used: false })
    this.spent += cost
  }

  delete(key: K): boolean {
    const entry = this.entries.get(key)
    if (entry === undefined) return false
    this.entries.delete(key)
    this.spent -= entry.cost
    return true
  }

  clear(): void {
    this.entries.clear()
    this.spent = 0
  }
}
