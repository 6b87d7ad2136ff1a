// What a valid instant is, for every transport: ISO 8601 date-time text with an offset, on a real
// day, in the years 0001 to 9999 (PostgreSQL's timestamptz holds no year 0, ISO 8601 no
// five-digit year). The timestamp filters of the collection query language and GraphQL's DateTime both read instants here.

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/
const EARLIEST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z')
const LATEST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z')

/** What a refused instant should have been, in the words of the query language's refusals. */
export const INSTANT_DESCRIPTION = 'an ISO 8601 date-time with an offset (Z or ±hh:mm) in the years 0001 to 9999'

/** The instant as ISO 8601 in UTC with milliseconds (`2024-01-21T00:00:00.000Z`), or undefined if the text names no real one both stores hold. */
export function parseInstant(text: string): string | undefined {
  const match = ISO_DATE_TIME.exec(text)
  if (match === null) return undefined
  // Date.parse takes 2024-02-31 for March 2nd.
  const [year, month, day] = match.slice(1, 4).map(Number) as [number, number, number]
  if (day > daysInMonth(year, month)) return undefined
  // The instant, not the text, must be in range: 0001-01-01T00:30+01:00 is in year 0.
  const ms = Date.parse(text)
  return ms >= EARLIEST_INSTANT && ms <= LATEST_INSTANT ? new Date(ms).toISOString() : undefined
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

let nowMs = Number.NaN
let nowText = ''

/**
 * The time now as ISO 8601 in UTC with milliseconds (every answer's meta.timestamp): formatted
 * once per millisecond, not once per answer (the formatting was 1.8% of GET one user's CPU).
 */
export function isoNow(): string {
  const ms = Date.now()
  if (ms !== nowMs) {
    nowMs = ms
    nowText = new Date(ms).toISOString()
  }
  return nowText
}
