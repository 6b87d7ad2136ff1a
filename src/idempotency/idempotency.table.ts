// The kept answers of writes sent with an Idempotency-Key, added to the store's Tables (src/db/tables.ts) from here.
import type { Generated, Selectable } from 'kysely'
import type { Timestamp } from '../db/tables.js'

export interface IdempotencyKeysTable {
  /** Whose key it is: the rate limit's caller key (`user:<id>`: only a caller who can write keeps answers). */
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
  /** When the write committed: set inside the write's own transaction; null while it has not. */
  write_done_at: Timestamp | null
  /** The bytes of `body` (UTF-8), counted in the caller's total. */
  kept_bytes: Generated<number>
  /** 1 when the answer had a body that was past the bounds, and was kept without it. */
  body_omitted: Generated<number>
}

/** The bytes of kept bodies each caller holds in all, so that their bound costs one row. */
export interface IdempotencyCallersTable {
  caller: string
  kept_bytes: number
}

declare module '../db/tables.js' {
  interface Tables {
    idempotency_keys: IdempotencyKeysTable
    idempotency_callers: IdempotencyCallersTable
  }
}

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>
