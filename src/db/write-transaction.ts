// Every write of the services runs here: one transaction that checks and then writes (the parent
// exists, the caller may, the If-Match tag still holds, an admin remains) as if it ran alone; or,
// where the checks are conditions of the write itself, one statement that commits on its own
// (singleStatementWrite).
//
// SQLite runs one transaction at a time, so a check cannot go stale before its write. PostgreSQL
// runs them side by side at READ COMMITTED: two PUTs with the same If-Match would both pass, and a
// comment could be inserted for a post deleted a moment before. So, inside a write transaction, the
// rows a check reads are locked (`lockForWrite`: SELECT ... FOR UPDATE) until the commit: a second
// writer of the same row waits, then reads it as the first left it, and answers as SQLite would
// (412, 404, 409). Writers of different rows never wait for each other.
//
// SERIALIZABLE was tried first: it refused unrelated writes (a sequential scan of a small table
// locks all of it), and 10 of 30 concurrent PATCHes of 30 different todos came back 503.
//
// A layer above may ask, for the writes of one request, that something be written inside each of
// their transactions just before it commits (`withBeforeCommit`): what it writes commits with the
// write, or not at all. The hook is carried by the asynchronous context (AsyncLocalStorage), so the
// services stay as they are; this module knows nothing of what the hook means.
import { AsyncLocalStorage } from 'node:async_hooks'
import type { SelectQueryBuilder } from 'kysely'
import type { Db } from './create-database.js'
import { isDeadlock } from './database-errors.js'
import { dialectFactsOf } from './dialect-facts.js'

/** Attempts of one write that lost a deadlock before it is answered as a busy database (503). */
const MAX_ATTEMPTS = 3

const writing = new WeakSet<Db>()

/** Work run inside a write transaction, after the write's own, just before the commit. */
export type BeforeCommit = (trx: Db) => Promise<void>

const beforeCommit = new AsyncLocalStorage<BeforeCommit>()
/** Scopes of withBeforeCommit begun and not yet ended. */
let openScopes = 0

/**
 * Runs `run` so that every write transaction begun from it (in its asynchronous context, however
 * late) runs `hook` inside, just before its commit, until the scope ends: call the function
 * returned once the work that may write is done. A write that fails or is refused rolls the hook's
 * writes back with its own.
 *
 * An AsyncLocalStorage in use turns on Node's promise hooks for the whole process: every promise
 * of every request then costs more, and they stayed on for the rest of the process's life after
 * the first write with an Idempotency-Key (GraphQL user(id) took 18% more CPU a request,
 * docs/performance.md). So the storage is turned off again whenever no scope is open.
 */
export function withBeforeCommit(hook: BeforeCommit, run: () => void): () => void {
  openScopes++
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    if (--openScopes === 0) beforeCommit.disable()
  }
  try {
    beforeCommit.run(hook, run)
  } catch (error) {
    end()
    throw error
  }
  return end
}

/** Whether a scope of withBeforeCommit is open, and so the asynchronous context tracked. */
export const tracksWriteScopes = (): boolean => openScopes > 0

export async function writeTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  const hook = beforeCommit.getStore()
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        writing.add(trx)
        const result = await work(trx)
        await hook?.(trx)
        return result
      })
    } catch (error) {
      // Two writers locking the same rows in opposite orders: the server ends one; run it again. The
      // database handle has already put it in our words (a busy database), which keep the server's as the cause.
      if (attempt >= MAX_ATTEMPTS || !isDeadlock(error)) throw error
    }
  }
}

/**
 * A write that is one statement (its checks conditions of it, such as rowUpdateIfChanged's): run
 * committing itself where the store allows it (DialectFacts.writesAlone), else, and when a scope of
 * withBeforeCommit asks for its hook, in a write transaction as writeTransaction runs it (in the
 * one it is given, when `db` is one's). On SQLite that saves the transaction's BEGIN and COMMIT and
 * Kysely's hold on the connection between them, a fifth of a PATCH's CPU (docs/performance.md).
 * `work` resolving undefined says it wrote nothing: a transaction of its own then rolls back, and
 * a scope's hook does not run (nothing was done that a repeated request should be answered with).
 */
export async function singleStatementWrite<T>(db: Db, work: (db: Db) => Promise<T | undefined>): Promise<T | undefined> {
  if (writing.has(db) || (dialectFactsOf(db).writesAlone && beforeCommit.getStore() === undefined)) return work(db)
  try {
    return await writeTransaction(db, async (trx) => {
      const written = await work(trx)
      if (written === undefined) throw nothingWritten
      return written
    })
  } catch (error) {
    if (error === nothingWritten) return undefined
    throw error
  }
}

/** Thrown to roll back the transaction of a single statement that wrote nothing. */
const nothingWritten = new Error('nothing written')

/** Whether `db` is a write transaction's handle, whose checks lockForWrite locks. */
export const isWriteTransaction = (db: Db): boolean => writing.has(db)

/**
 * The query as a write transaction's check must run it: its rows (of `table` alone, when the query
 * joins others) locked until the commit, on the dialects that run writers side by side. Elsewhere,
 * and outside a write transaction (a GET), the query as it is.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any select, whatever its tables
export function lockForWrite<Q extends SelectQueryBuilder<any, any, any>>(db: Db, query: Q, table?: string): Q {
  return isWriteTransaction(db) ? dialectFactsOf(db).lockRows(query, table) : query
}
