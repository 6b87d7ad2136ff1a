// CSV as RFC 4180 writes it, for spreadsheets: CRLF after every record, a field quoted when it holds
// a comma, a quote or a line break, its quotes doubled. A text cell a spreadsheet would run as a
// formula is neutralized as OWASP's "CSV Injection" page advises: one that starts with `=`, `+`,
// `-`, `@`, a tab or a carriage return is written after a single quote (`'=1+1`), which makes the
// spreadsheet show it as text. Numbers are written as they are, never prefixed: a number cannot
// carry a formula, and `-5` must stay the number −5.

/** The characters that make a spreadsheet read a cell as a formula when it starts with one (OWASP). */
const FORMULA_START = /^[=+\-@\t\r]/
/** What obliges a field to be quoted (RFC 4180 §2.6). */
const NEEDS_QUOTES = /[",\r\n]/

/**
 * One value as a CSV field: null (or a field left out) an empty field; a boolean `true`/`false`;
 * a number as JSON writes it; text neutralized; an object or a list as its JSON text, neutralized.
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  const neutralized = FORMULA_START.test(text) ? `'${text}` : text
  return NEEDS_QUOTES.test(neutralized) ? `"${neutralized.replaceAll('"', '""')}"` : neutralized
}

/** One record: its fields, comma-separated, and the CRLF that ends it. */
export const csvRecord = (values: readonly unknown[]): string => `${values.map(csvField).join(',')}\r\n`
