// Every write of the services runs here: one transaction that checks and then writes (the parent
// exists, the caller may, the If-Match tag still holds, an admin remains) as if it ran alone.
//
// SQLite runs one transaction at a time, so a check cannot go stale before its write. PostgreSQL
// runs them side by side: at its default READ COMMITTED, two PUTs with the same If-Match would both
// pass, and a comment could be inserted for a post deleted a moment before. SERIALIZABLE makes the
// server refuse one of two such transactions (40001); it is run again from the start, where its
// check now sees the other's write and answers as SQLite would (412, 404, 409).
import type { Db } from './create-database.js'

/** Attempts of one write before the conflict is answered as a busy database (503). */
const MAX_ATTEMPTS = 5

const SERIALIZATION_FAILURE = '40001'
const DEADLOCK_DETECTED = '40P01'

export async function writeTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().setIsolationLevel('serializable').execute(work)
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isConflict(error)) throw error
      // A little apart, so the same two do not collide again at once.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt))
    }
  }
}

function isConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === SERIALIZATION_FAILURE || code === DEADLOCK_DETECTED
}
