// Every write of the services runs here: one transaction that checks and then writes (the parent
// exists, the caller may, the If-Match tag still holds, an admin remains) as if it ran alone.
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
import type { SelectQueryBuilder } from 'kysely'
import type { Db } from './create-database.js'
import { isDeadlock } from './database-errors.js'
import { dialectFactsOf } from './dialect-facts.js'

/** Attempts of one write that lost a deadlock before it is answered as a busy database (503). */
const MAX_ATTEMPTS = 3

const writing = new WeakSet<Db>()

export async function writeTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute((trx) => {
        writing.add(trx)
        return work(trx)
      })
    } catch (error) {
      // Two writers locking the same rows in opposite orders: the server ends one; run it again. The
      // database handle has already put it in our words (a busy database), which keep the server's as the cause.
      if (attempt >= MAX_ATTEMPTS || !isDeadlock(error)) throw error
    }
  }
}

/**
 * The query as a write transaction's check must run it: its rows (of `table` alone, when the query
 * joins others) locked until the commit, on the dialects that run writers side by side. Elsewhere,
 * and outside a write transaction (a GET), the query as it is.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any select, whatever its tables
export function lockForWrite<Q extends SelectQueryBuilder<any, any, any>>(db: Db, query: Q, table?: string): Q {
  return writing.has(db) ? dialectFactsOf(db).lockRows(query, table) : query
}
