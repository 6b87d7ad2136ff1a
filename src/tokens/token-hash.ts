import { createHash } from 'node:crypto'

/** A token's stored form: its SHA-256, so that a leaked database holds no usable credential. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}
