// The representation cache: the representations already sent, kept so that the next GET of the
// same resource is answered without the database, the serializer or the hash: its body (with a
// fresh meta.timestamp), ETag, Last-Modified, Cache-Control and Link, or its 304. The conventions
// are paid once per representation, not once per request (docs/architecture.md); every hook
// before the handler (rate limit, access, the in-flight limit) still runs for every request.
//
// An entry is keyed by what the answer depends on besides the data: the URL (path and query), the
// Accept header (the API version of the unversioned paths) and the caller (drafts, private cache
// control). It is valid while the store's data version has not moved since it was read
// (`Database.dataVersion`: every write of this process, and on SQLite every commit of another,
// such as the `threadline` commands); the version is read before the handler and again before the
// entry is stored, so an answer read across a write is never kept. Any write empties the cache in
// effect (the entries go stale at once), which is exact whatever a write touches (cascades, an
// embedded author) at the price of refilling after each write: it pays on reads, which is where
// the traffic is. On PostgreSQL there is no data version (other instances write unseen): nothing
// is cached there. Bounded by a byte budget, the least recently used entry going first.

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
  /** The data version it was read at. */
  readonly version: number
}

export interface RepresentationCache {
  /** The entry for `key`, if it was read at `version`; a stale one is dropped. */
  get(key: string, version: number): Representation | undefined
  set(key: string, representation: Representation): void
}

/** A representation's size in the budget: its strings (two bytes a character, as V8 may hold them) and the key. */
const sizeOf = (key: string, r: Representation) =>
  2 * (key.length + r.head.length + r.tail.length + r.etag.length + (r.lastModified?.length ?? 0) + r.cacheControl.length + (r.link?.length ?? 0)) + 200

export function createRepresentationCache(budgetBytes: number): RepresentationCache {
  const entries = new Map<string, Representation>()
  let bytes = 0
  const drop = (key: string, entry: Representation) => {
    entries.delete(key)
    bytes -= sizeOf(key, entry)
  }
  return {
    get(key, version) {
      const entry = entries.get(key)
      if (entry === undefined) return undefined
      if (entry.version !== version) {
        drop(key, entry)
        return undefined
      }
      // Most recently used last.
      entries.delete(key)
      entries.set(key, entry)
      return entry
    },
    set(key, representation) {
      const size = sizeOf(key, representation)
      if (size > budgetBytes / 16) return // one answer may not crowd out the rest
      const old = entries.get(key)
      if (old !== undefined) drop(key, old)
      for (const [oldest, entry] of entries) {
        if (bytes + size <= budgetBytes) break
        drop(oldest, entry)
      }
      entries.set(key, representation)
      bytes += size
    },
  }
}
