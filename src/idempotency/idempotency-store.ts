// The kept answers of writes sent with an Idempotency-Key, in the database: so a retry finds the
// answer after a restart, and on PostgreSQL from any instance. A key is claimed by inserting its
// row without an answer (the primary key lets one request win, whichever instance it reached);
// the write's own transaction marks it done as it commits (`markWriteDone`); it is completed with
// the answer, or released when no write was done.
//
// Bounded: a body past `maxBodyBytes`, or past what its caller may keep in all (`maxCallerBytes`,
// counted in `idempotency_callers`), is left out, and the status and headers are kept without it.
// Expired keys are purged in slices bounded by rows and by bytes.
import { setImmediate as nextLoopTurn } from 'node:timers/promises'
import type { Db } from '../db/create-database.js'
import { toIsoTimestamp } from '../db/tables.js'
import type { IdempotencyKeyRow } from './idempotency.table.js'

/** An answer as it is kept and replayed. */
export interface KeptAnswer {
  status: number
  /** The headers that are part of the answer (Location, ETag, Content-Type…), by lower-case name. */
  headers: Record<string, string>
  /** The serialized body; null for none (a 204), or when it was left out. */
  body: string | null
  /** The answer had a body, past the bounds: it was kept without it. */
  bodyOmitted?: true
}

/** What a claim of a key found. */
export type Claim =
  /** The key is this request's: run the write, then complete or release it. */
  | { readonly kind: 'claimed' }
  /** The key's write ran already: its answer. */
  | { readonly kind: 'answered'; readonly answer: KeptAnswer }
  /** The key's write is still running (another request, maybe on another instance), or its answer is being kept. */
  | { readonly kind: 'running' }
  /** The key's write was done, and its answer was never kept (its process stopped, or keeping it failed): the write must not run again. */
  | { readonly kind: 'answer-lost' }
  /** The key was used for another request (method, URL or body). */
  | { readonly kind: 'other-request' }

/** What one slice of the purge deleted. */
export interface PurgedSlice {
  rows: number
  /** The bytes of kept bodies those rows held. */
  bytes: number
}

export interface IdempotencyStore {
  claim(caller: string, key: string, fingerprint: string): Promise<Claim>
  /** Marks a claimed key's write done, inside that write's transaction (`trx`): the mark commits with the write, or not at all. */
  markWriteDone(trx: Db, caller: string, key: string): Promise<void>
  /** Keeps the answer of a claimed key whose write was done (nothing for one whose write was not), its body within the bounds. */
  complete(caller: string, key: string, answer: KeptAnswer): Promise<void>
  /** Lets a claimed key go whose request did no write: its retry runs. */
  release(caller: string, key: string): Promise<void>
  /** Deletes one slice of expired keys (at most PURGE_SLICE_ROWS rows and, but for a single row, PURGE_SLICE_BYTES of bodies). */
  purgeExpired(): Promise<PurgedSlice>
}

export interface IdempotencyStoreOptions {
  /** How long a key and its answer are kept from the key's first use. */
  ttlMs: number
  /** How long a claim without an answer holds before another request may take the key (its process may have died). */
  leaseMs: number
  /** The largest body kept with an answer, in bytes (UTF-8). @default MAX_KEPT_BODY_BYTES */
  maxBodyBytes?: number
  /** The bytes of bodies one caller may keep in all, until their keys expire. @default MAX_KEPT_BYTES_PER_CALLER */
  maxCallerBytes?: number
  now?: () => number
}

/** The largest body kept with an answer: a post of 100,000 characters with its envelope fits, twice over. */
export const MAX_KEPT_BODY_BYTES = 256 * 1024
/** What one caller may keep in bodies in all: 64 of the largest, or thousands of ordinary answers. */
export const MAX_KEPT_BYTES_PER_CALLER = 16 * 1024 * 1024
/** Rows one slice of the purge deletes at most. */
export const PURGE_SLICE_ROWS = 200
/** Bytes of bodies one slice of the purge deletes at most (a single row past it is a slice of its own): a few milliseconds of SQLite's synchronous driver. */
export const PURGE_SLICE_BYTES = 4 * 1024 * 1024

/** Claims lost to a racing request are tried again this many times (a row purged or taken between two statements). */
const CLAIM_ATTEMPTS = 3

export function createIdempotencyStore(db: Db, options: IdempotencyStoreOptions): IdempotencyStore {
  const now = options.now ?? Date.now
  const maxBodyBytes = options.maxBodyBytes ?? MAX_KEPT_BODY_BYTES
  const maxCallerBytes = options.maxCallerBytes ?? MAX_KEPT_BYTES_PER_CALLER
  const iso = (ms: number) => new Date(ms).toISOString()
  const row = (caller: string, key: string) => db.selectFrom('idempotency_keys').selectAll().where('caller', '=', caller).where('key', '=', key)

  /** Takes back `bytes` of what `caller` keeps, in the transaction that dropped them. */
  async function uncount(trx: Db, caller: string, bytes: number): Promise<void> {
    if (bytes <= 0) return
    await trx
      .updateTable('idempotency_callers')
      .set((eb) => ({ kept_bytes: eb('kept_bytes', '-', bytes) }))
      .where('caller', '=', caller)
      .execute()
    await trx.deleteFrom('idempotency_callers').where('caller', '=', caller).where('kept_bytes', '<=', 0).execute()
  }

  /** Counts `bytes` more for `caller` when they stay within their bound; whether they did. */
  async function count(trx: Db, caller: string, bytes: number): Promise<boolean> {
    const counted = await trx
      .insertInto('idempotency_callers')
      .values({ caller, kept_bytes: bytes })
      .onConflict((conflict) =>
        conflict
          .column('caller')
          .doUpdateSet((eb) => ({ kept_bytes: eb('idempotency_callers.kept_bytes', '+', bytes) }))
          .where('idempotency_callers.kept_bytes', '<=', maxCallerBytes - bytes),
      )
      .executeTakeFirst()
    return Number(counted.numInsertedOrUpdatedRows ?? 0) === 1
  }

  /** Takes a key whose row has expired, or whose claim was left without a write past its lease; false when another request took it first. */
  async function takeOver(found: IdempotencyKeyRow, fingerprint: string, at: number): Promise<boolean> {
    return db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('idempotency_keys')
        .set({
          fingerprint,
          status: null,
          headers: null,
          body: null,
          created_at: iso(at),
          expires_at: iso(at + options.ttlMs),
          write_done_at: null,
          kept_bytes: 0,
          body_omitted: 0,
        })
        .where('caller', '=', found.caller)
        .where('key', '=', found.key)
        .where('created_at', '=', toIsoTimestamp(found.created_at))
        .executeTakeFirst()
      if (Number(result.numUpdatedRows) !== 1) return false
      await uncount(trx, found.caller, found.kept_bytes)
      return true
    })
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
      // Its write committed: running it again would write twice.
      if (found.write_done_at !== null) return { kind: 'answer-lost' }
      return (await takeOver(found, fingerprint, at)) ? { kind: 'claimed' } : undefined
    }
    const answer: KeptAnswer = { status: found.status, headers: JSON.parse(found.headers ?? '{}') as Record<string, string>, body: found.body }
    return { kind: 'answered', answer: found.body_omitted === 1 ? { ...answer, bodyOmitted: true } : answer }
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
    async markWriteDone(trx, caller, key) {
      await trx
        .updateTable('idempotency_keys')
        .set({ write_done_at: iso(now()) })
        .where('caller', '=', caller)
        .where('key', '=', key)
        .where('write_done_at', 'is', null)
        .execute()
    },
    async complete(caller, key, answer) {
      const bytes = answer.body === null ? 0 : Buffer.byteLength(answer.body)
      await db.transaction().execute(async (trx) => {
        const kept = await trx
          .updateTable('idempotency_keys')
          .set({ status: answer.status, headers: JSON.stringify(answer.headers), body: null, kept_bytes: 0, body_omitted: bytes > 0 ? 1 : 0 })
          .where('caller', '=', caller)
          .where('key', '=', key)
          .where('status', 'is', null)
          .where('write_done_at', 'is not', null)
          .executeTakeFirst()
        if (Number(kept.numUpdatedRows) !== 1 || bytes === 0 || bytes > Math.min(maxBodyBytes, maxCallerBytes) || !(await count(trx, caller, bytes))) return
        await trx
          .updateTable('idempotency_keys')
          .set({ body: answer.body, kept_bytes: bytes, body_omitted: 0 })
          .where('caller', '=', caller)
          .where('key', '=', key)
          .execute()
      })
    },
    async release(caller, key) {
      await db
        .deleteFrom('idempotency_keys')
        .where('caller', '=', caller)
        .where('key', '=', key)
        .where('status', 'is', null)
        .where('write_done_at', 'is', null)
        .execute()
    },
    async purgeExpired() {
      const cutoff = iso(now())
      const expired = await db
        .selectFrom('idempotency_keys')
        .select(['caller', 'key', 'kept_bytes'])
        .where('expires_at', '<=', cutoff)
        .orderBy('expires_at')
        .limit(PURGE_SLICE_ROWS)
        .execute()
      const slice: typeof expired = []
      let sliceBytes = 0
      for (const found of expired) {
        if (slice.length > 0 && sliceBytes + found.kept_bytes > PURGE_SLICE_BYTES) break
        slice.push(found)
        sliceBytes += found.kept_bytes
      }
      if (slice.length === 0) return { rows: 0, bytes: 0 }
      return db.transaction().execute(async (trx) => {
        // Another instance may have purged some of them meanwhile: what this one deleted is what it uncounts.
        const deleted = await trx
          .deleteFrom('idempotency_keys')
          .where((eb) => eb.or(slice.map((found) => eb.and([eb('caller', '=', found.caller), eb('key', '=', found.key)]))))
          .where('expires_at', '<=', cutoff)
          .returning(['caller', 'kept_bytes'])
          .execute()
        const byCaller = new Map<string, number>()
        for (const gone of deleted) byCaller.set(gone.caller, (byCaller.get(gone.caller) ?? 0) + gone.kept_bytes)
        for (const [caller, bytes] of byCaller) await uncount(trx, caller, bytes)
        return { rows: deleted.length, bytes: deleted.reduce((sum, gone) => sum + gone.kept_bytes, 0) }
      })
    },
  }
}

/**
 * Purges expired keys every `intervalMs`, off the request path: slice after slice, each after the
 * event loop has served what waits. Instances on one PostgreSQL may purge at once: each deletes
 * what it finds. Returns the function that stops it and waits for a purge under way.
 */
export function purgeExpiredKeys(
  store: IdempotencyStore,
  options: { intervalMs: number; log: { error(object: object, message: string): void } },
): () => Promise<void> {
  let running: Promise<void> | undefined
  let stopped = false
  async function purge(): Promise<void> {
    while (!stopped && (await store.purgeExpired()).rows > 0) await nextLoopTurn()
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
