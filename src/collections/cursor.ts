// Cursors are opaque to clients: base64url of the keyset position (the sort values of the row at
// the page's edge), the direction, and a fingerprint of the query they belong to. A cursor that
// does not decode, does not fit the sort, or belongs to another query is a bad request.
import { AppError } from '../errors.js'

export type CursorDirection = 'after' | 'before'
export type KeyValue = string | number | boolean | null

export interface Cursor {
  readonly direction: CursorDirection
  /** One value per sort key, the id last. */
  readonly values: readonly KeyValue[]
}

interface CursorPayload {
  d: 'a' | 'b'
  k: KeyValue[]
  f: string
}

const MAX_CURSOR_LENGTH = 2048

export function encodeCursor(cursor: Cursor, fingerprint: string): string {
  const payload: CursorPayload = { d: cursor.direction === 'after' ? 'a' : 'b', k: [...cursor.values], f: fingerprint }
  return Buffer.from(JSON.stringify(payload)).toString('base64url')
}

/** The cursor's direction and raw values; the caller checks the values against the sort. */
export function decodeCursor(text: string, fingerprint: string): Cursor {
  const payload = parse(text)
  if (payload.f !== fingerprint) {
    throw badCursor('The cursor belongs to another query: its sort, filters or search differ')
  }
  return { direction: payload.d === 'a' ? 'after' : 'before', values: payload.k }
}

function parse(text: string): CursorPayload {
  if (text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw badCursor()
  let payload: unknown
  try {
    payload = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
  } catch {
    throw badCursor()
  }
  if (!isPayload(payload)) throw badCursor()
  return payload
}

function isPayload(value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const { d, k, f } = value as Record<string, unknown>
  return (
    (d === 'a' || d === 'b') && typeof f === 'string' && Array.isArray(k) && k.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
  )
}

export function badCursor(message = 'The cursor is not valid: use nextCursor or a Link from an earlier page'): AppError {
  return new AppError('BAD_REQUEST', message, [{ field: 'cursor', message: 'is not valid for this query' }])
}
