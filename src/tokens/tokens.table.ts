// The tokens table as Kysely sees it, added to the store's Tables (src/db/tables.ts) from here.
import type { Generated } from 'kysely'
import type { Timestamp } from '../db/tables.js'

export interface TokensTable {
  id: Generated<number>
  user_id: number
  /** SHA-256 of the bearer token, hex. The token itself is never stored. */
  token_hash: string
  created_at: Timestamp
  expires_at: Timestamp
  revoked_at: Timestamp | null
}

declare module '../db/tables.js' {
  interface Tables {
    tokens: TokensTable
  }
}
