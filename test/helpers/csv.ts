// A CSV reader as RFC 4180 defines the format, for tests to read exports back as a spreadsheet
// would: records end with CRLF (a lone LF is taken too), a quoted field may hold commas, quotes
// (doubled) and line breaks. Strict where a writer could go wrong: a quote inside an unquoted field,
// or text after a closing quote, is an error, not a guess.

/** The records of a CSV text, each a list of its fields. */
export function readCsv(text: string): string[][] {
  const records: string[][] = []
  let record: string[] = []
  let field = ''
  let at = 0
  const endField = () => {
    record.push(field)
    field = ''
  }
  while (at < text.length) {
    if (text[at] === '"' && field === '') {
      const close = closingQuote(text, at + 1)
      field = text.slice(at + 1, close).replaceAll('""', '"')
      at = close + 1
      if (at < text.length && !/[,\r\n]/.test(text[at] as string)) throw new Error(`CSV: text after a closing quote at ${at}`)
      continue
    }
    const char = text[at] as string
    if (char === ',') endField()
    else if (char === '\r' || char === '\n') {
      endField()
      records.push(record)
      record = []
      if (char === '\r' && text[at + 1] === '\n') at++
    } else if (char === '"') throw new Error(`CSV: a quote inside an unquoted field at ${at}`)
    else field += char
    at++
  }
  if (field !== '' || record.length > 0) {
    endField()
    records.push(record)
  }
  return records
}

function closingQuote(text: string, from: number): number {
  for (let at = from; at < text.length; at++) {
    if (text[at] !== '"') continue
    if (text[at + 1] === '"') at++
    else return at
  }
  throw new Error('CSV: a quoted field is never closed')
}

/** The records after the header, as objects keyed by the header's names. */
export function csvObjects(text: string): { header: string[]; rows: Record<string, string>[] } {
  const [header = [], ...records] = readCsv(text)
  return { header, rows: records.map((record) => Object.fromEntries(header.map((name, i) => [name, record[i] ?? '']))) }
}
