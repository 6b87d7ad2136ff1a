// The Accept header (RFC 9110 §12.5.1) read once into media ranges, for every place that
// negotiates: REST's API version, the GraphQL endpoint's answer type and the SSE stream. Each
// decides what to do with the ranges; the reading (lists, parameters, quoting, q) is done here.

/** One media range of an Accept header, as `type/subtype;name=value;q=0.5`. */
export interface MediaRange {
  /** Lower-cased; `*` for a wildcard. */
  readonly type: string
  /** Lower-cased; `*` for a wildcard, '' when the range names no subtype. */
  readonly subtype: string
  /** Parameters other than q, names lower-cased, values unquoted and as written. */
  readonly params: Readonly<Record<string, string>>
  /** The quality: 1 when not given, NaN when not a number; 0 (or less, or NaN) means "not this one". */
  readonly q: number
}

/**
 * The ranges of an Accept header in the order written; empty list elements are skipped (RFC 9110
 * §5.6.1), so an absent or blank header gives none. Commas and semicolons inside quoted values
 * do not split.
 */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined) return []
  const ranges: MediaRange[] = []
  for (const element of splitOutsideQuotes(header, ',')) {
    const [mediaType = '', ...parameters] = splitOutsideQuotes(element, ';').map((part) => part.trim())
    if (mediaType === '' && parameters.every((p) => p === '')) continue
    const [type = '', subtype = ''] = mediaType
      .toLowerCase()
      .split('/', 2)
      .map((part) => part.trim())
    const params: Record<string, string> = {}
    let q = 1
    for (const parameter of parameters) {
      const equals = parameter.indexOf('=')
      if (equals === -1) continue
      const name = parameter.slice(0, equals).trim().toLowerCase()
      const value = unquote(parameter.slice(equals + 1).trim())
      if (name === 'q') q = value === '' ? Number.NaN : Number(value)
      else params[name] ??= value
    }
    ranges.push({ type, subtype, params, q })
  }
  return ranges
}

/** The range admits something: its quality is above 0. */
export const isAcceptable = (range: MediaRange): boolean => range.q > 0

/** The range is `type/subtype`, exactly (a wildcard matches only a wildcard). */
export const isMediaType = (range: MediaRange, mediaType: string): boolean => `${range.type}/${range.subtype}` === mediaType

function splitOutsideQuotes(text: string, separator: ',' | ';'): string[] {
  const parts: string[] = []
  let start = 0
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (quoted && char === '\\')
      i++ // a quoted-pair: the next character is taken as it is
    else if (char === '"') quoted = !quoted
    else if (!quoted && char === separator) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts
}

const unquote = (value: string): string =>
  value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value
