// The kept answers of writes sent with an Idempotency-Key, added to the store's Tables (src/db/tables.ts) from here.
import type { Selectable } from 'kysely'
import type { Timestamp } from '../db/tables.js'

export interface IdempotencyKeysTable {
  /** Whose key it is: the rate limit's caller key (`user:<id>`, or `ip:<address>` for anonymous writes). */
  caller: string
  key: string
  /** SHA-256 of the method, the URL and the body: the request the key was first used for. */
  fingerprint: string
  /** The answer's status; null while the write runs. */
  status: number | null
  /** The answer's kept headers, as a JSON object. */
  headers: string | null
  body: string | null
  created_at: Timestamp
  expires_at: Timestamp
}

declare module '../db/tables.js' {
  interface Tables {
    idempotency_keys: IdempotencyKeysTable
  }
}

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>
