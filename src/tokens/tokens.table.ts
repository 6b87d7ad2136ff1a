// The tokens table as Kysely sees it, added to the store's Tables (src/db/tables.ts) from here.
import type { Generated } from 'kysely'
import type { Scope } from '../core/caller.js'
import type { Timestamp } from '../db/tables.js'

export interface TokensTable {
  id: Generated<number>
  user_id: number
  /** SHA-256 of the bearer token, hex. The token itself is never stored. */
  token_hash: string
  created_at: Timestamp
  expires_at: Timestamp
  revoked_at: Timestamp | null
  /** `read` or `write` (all its user may do). */
  scope: Scope
}

/** A subject of an outside OpenID Connect issuer, and the user its first token made. */
export interface IdentitiesTable {
  issuer: string
  subject: string
  user_id: number
  created_at: Timestamp
}

declare module '../db/tables.js' {
  interface Tables {
    tokens: TokensTable
    identities: IdentitiesTable
  }
}
