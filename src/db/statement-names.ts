// Names for SQL texts: on PostgreSQL a text so named is parsed once per connection, and planned
// once too when its generic plan is as good as the one made for each run's values (a named
// prepared statement), then only bound and run, as a hand-written `pg` route does. The compiled
// reads (compiled-statements.ts) are named as they are compiled, bounded by the shapes they keep;
// not those of write transactions, nor the compiled writes (a write's transaction cannot run a
// statement again unnamed when its table has changed shape). The other reads run past Kysely (a
// collection's page: direct-reads.ts) are named the second time their text is run, up to
// MAX_NAMED_READS texts in a process: a text run once costs no prepared statement on each
// connection, and texts past the bound (a caller trying every filter and sort) run unnamed, parsed
// and planned every time, as every read did before.
const names = new Map<string, string>()

/** The most texts of reads named besides the compiled statements' (each becomes a prepared statement on each connection of the pool). */
const MAX_NAMED_READS = 256

/** Texts of reads run once and not named yet, forgotten when there are as many as the bound. */
const seenOnce = new Set<string>()
let namedReads = 0

/** Gives a compiled statement's SQL text its name, once. */
export function nameStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `threadline_${names.size + 1}`)
}

/** The name of a compiled statement's SQL text; undefined for any other SQL. */
export const statementNameOf = (sql: string): string | undefined => names.get(sql)

/** The name of a read's SQL text: its own once it has been run before (within the bound), undefined until then. */
export function readNameOf(sql: string): string | undefined {
  const named = names.get(sql)
  if (named !== undefined || namedReads >= MAX_NAMED_READS) return named
  if (!seenOnce.delete(sql)) {
    if (seenOnce.size >= MAX_NAMED_READS) seenOnce.clear()
    seenOnce.add(sql)
    return undefined
  }
  namedReads++
  nameStatement(sql)
  return names.get(sql)
}
