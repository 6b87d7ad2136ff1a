// The kept answers of writes sent with an Idempotency-Key, in the database: so a retry finds the
// answer after a restart, and on PostgreSQL from any instance. A key is claimed by inserting its
// row without an answer (the primary key lets one request win, whichever instance it reached), and
// completed with the answer, or released when the write failed on the server's side.
import type { Db } from '../db/create-database.js'
import { toIsoTimestamp } from '../db/tables.js'
import type { IdempotencyKeyRow } from './idempotency.table.js'

/** An answer as it is kept and replayed. */
export interface KeptAnswer {
  status: number
  /** The headers that are part of the answer (Location, ETag, Content-Type…), by lower-case name. */
  headers: Record<string, string>
  /** The serialized body; null for none (a 204). */
  body: string | null
}

/** What a claim of a key found. */
export type Claim =
  /** The key is this request's: run the write, then complete or release it. */
  | { readonly kind: 'claimed' }
  /** The key's write ran already: its answer. */
  | { readonly kind: 'answered'; readonly answer: KeptAnswer }
  /** The key's write is still running (another request, maybe on another instance). */
  | { readonly kind: 'running' }
  /** The key was used for another request (method, URL or body). */
  | { readonly kind: 'other-request' }

export interface IdempotencyStore {
  claim(caller: string, key: string, fingerprint: string): Promise<Claim>
  complete(caller: string, key: string, answer: KeptAnswer): Promise<void>
  release(caller: string, key: string): Promise<void>
  /** Deletes up to `batch` expired rows; how many it deleted. */
  purgeExpired(batch: number): Promise<number>
}

export interface IdempotencyStoreOptions {
  /** How long a key and its answer are kept from the key's first use. */
  ttlMs: number
  /** How long a claim without an answer holds before another request may take the key (its process may have died). */
  leaseMs: number
  now?: () => number
}

/** Claims lost to a racing request are tried again this many times (a row purged or taken between two statements). */
const CLAIM_ATTEMPTS = 3

export function createIdempotencyStore(db: Db, options: IdempotencyStoreOptions): IdempotencyStore {
  const now = options.now ?? Date.now
  const iso = (ms: number) => new Date(ms).toISOString()
  const row = (caller: string, key: string) => db.selectFrom('idempotency_keys').selectAll().where('caller', '=', caller).where('key', '=', key)

  /** Takes a key whose row has expired, or whose claim was left without an answer past its lease; false when another request took it first. */
  async function takeOver(found: IdempotencyKeyRow, fingerprint: string, at: number): Promise<boolean> {
    const result = await db
      .updateTable('idempotency_keys')
      .set({ fingerprint, status: null, headers: null, body: null, created_at: iso(at), expires_at: iso(at + options.ttlMs) })
      .where('caller', '=', found.caller)
      .where('key', '=', found.key)
      .where('created_at', '=', toIsoTimestamp(found.created_at))
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  async function claimOnce(caller: string, key: string, fingerprint: string): Promise<Claim | undefined> {
    const at = now()
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({ caller, key, fingerprint, status: null, headers: null, body: null, created_at: iso(at), expires_at: iso(at + options.ttlMs) })
      .onConflict((conflict) => conflict.columns(['caller', 'key']).doNothing())
      .executeTakeFirst()
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { kind: 'claimed' }
    const found = await row(caller, key).executeTakeFirst()
    if (found === undefined) return undefined
    if (Date.parse(toIsoTimestamp(found.expires_at)) <= at) return (await takeOver(found, fingerprint, at)) ? { kind: 'claimed' } : undefined
    if (found.fingerprint !== fingerprint) return { kind: 'other-request' }
    if (found.status === null) {
      const leaseOver = Date.parse(toIsoTimestamp(found.created_at)) + options.leaseMs <= at
      if (!leaseOver) return { kind: 'running' }
      return (await takeOver(found, fingerprint, at)) ? { kind: 'claimed' } : undefined
    }
    return { kind: 'answered', answer: { status: found.status, headers: JSON.parse(found.headers ?? '{}') as Record<string, string>, body: found.body } }
  }

  return {
    async claim(caller, key, fingerprint) {
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const claim = await claimOnce(caller, key, fingerprint)
        if (claim !== undefined) return claim
      }
      // Taken and let go again by others at every attempt: as good as running.
      return { kind: 'running' }
    },
    async complete(caller, key, answer) {
      await db
        .updateTable('idempotency_keys')
        .set({ status: answer.status, headers: JSON.stringify(answer.headers), body: answer.body })
        .where('caller', '=', caller)
        .where('key', '=', key)
        .where('status', 'is', null)
        .execute()
    },
    async release(caller, key) {
      await db.deleteFrom('idempotency_keys').where('caller', '=', caller).where('key', '=', key).where('status', 'is', null).execute()
    },
    async purgeExpired(batch) {
      const cutoff = iso(now())
      const expired = db.selectFrom('idempotency_keys').select(['caller', 'key']).where('expires_at', '<=', cutoff).limit(batch)
      const result = await db
        .deleteFrom('idempotency_keys')
        .where((eb) => eb(eb.refTuple('caller', 'key'), 'in', expired.$asTuple('caller', 'key')))
        .where('expires_at', '<=', cutoff)
        .executeTakeFirst()
      return Number(result.numDeletedRows)
    },
  }
}

/** Rows deleted per statement when expired keys are purged: a short statement, even on SQLite's synchronous driver. */
const PURGE_BATCH = 500

/**
 * Purges expired keys every `intervalMs`, off the request path: in batches, each after the event
 * loop has served what waits. Instances on one PostgreSQL may purge at once: each deletes what it
 * finds. Returns the function that stops it and waits for a purge under way.
 */
export function purgeExpiredKeys(
  store: IdempotencyStore,
  options: { intervalMs: number; log: { error(object: object, message: string): void } },
): () => Promise<void> {
  let running: Promise<void> | undefined
  let stopped = false
  async function purge(): Promise<void> {
    while (!stopped && (await store.purgeExpired(PURGE_BATCH)) === PURGE_BATCH) await new Promise((resolve) => setImmediate(resolve))
  }
  const timer = setInterval(() => {
    if (running !== undefined) return
    running = purge()
      .catch((error: unknown) => options.log.error({ err: error }, 'Expired Idempotency-Keys could not be purged'))
      .finally(() => (running = undefined))
  }, options.intervalMs)
  timer.unref()
  return async () => {
    stopped = true
    clearInterval(timer)
    await running
  }
}
