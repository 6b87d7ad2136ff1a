// CSV read back as a spreadsheet would, by a parser of its own (csv-parse), not by the code that
// writes it: RFC 4180's quoting (commas, doubled quotes and line breaks inside quotes), strict
// where a writer could go wrong: a quote inside an unquoted field, text after a closing quote, or a
// record of another length than the header is an error, not a guess.
import { parse } from 'csv-parse/sync'

/** The records of a CSV text, each a list of its fields. */
export function readCsv(text: string): string[][] {
  const records: string[][] = parse(text, { relax_quotes: false, relax_column_count: false, skip_empty_lines: false })
  return records
}

/** The records after the header, as objects keyed by the header's names. */
export function csvObjects(text: string): { header: string[]; rows: Record<string, string>[] } {
  const [header = [], ...records] = readCsv(text)
  return { header, rows: records.map((record) => Object.fromEntries(header.map((name, i) => [name, record[i] ?? '']))) }
}
