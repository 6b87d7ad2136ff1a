// How many subscription connections (WebSockets and event streams together) each caller holds,
// and the instance in all: a caller past its share, or an instance past its capacity, is refused
// a new one (a WebSocket with 1013, an event stream with 429 or 503) until one of theirs closes.

/** Open connections per caller (user, or client address when anonymous). */
export class ConnectionCounter {
  private readonly open = new Map<string, number>()
  total = 0

  constructor(
    private readonly maxPerCaller: number,
    private readonly maxTotal: number,
  ) {}

  /**
   * Takes a slot for `key`; the returned release frees it (once, however often it is called), or
   * which limit is reached: the caller's, or the instance's.
   */
  acquire(key: string): (() => void) | 'caller' | 'instance' {
    if (this.total >= this.maxTotal) return 'instance'
    const count = this.open.get(key) ?? 0
    if (count >= this.maxPerCaller) return 'caller'
    this.open.set(key, count + 1)
    this.total++
    let released = false
    return () => {
      if (released) return
      released = true
      const left = (this.open.get(key) ?? 1) - 1
      if (left <= 0) this.open.delete(key)
      else this.open.set(key, left)
      this.total--
    }
  }

  /** What a connection refused by `limit` is told. */
  refusal(limit: 'caller' | 'instance'): string {
    return limit === 'caller'
      ? `At most ${this.maxPerCaller} connections per caller`
      : `This instance holds its most subscription connections (${this.maxTotal}); try again later`
  }
}
