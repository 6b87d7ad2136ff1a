// The SQL texts of the compiled statements (compiled-statements.ts), each with a name of its own:
// on PostgreSQL a text so named is parsed and planned once per connection, then only bound and run
// (a named prepared statement), as a hand-written `pg` route does. Bounded by the shapes the
// compiled statements keep.
const names = new Map<string, string>()

/** Gives a compiled statement's SQL text its name, once. */
export function nameStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `threadline_${names.size + 1}`)
}

/** The name of a compiled statement's SQL text; undefined for any other SQL. */
export const statementNameOf = (sql: string): string | undefined => names.get(sql)
