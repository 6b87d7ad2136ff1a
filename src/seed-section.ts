// What a feature declares about the generated data (`threadline seed`, and the demo data a new
// database starts with): how many rows the demo has, the seed command's words for its flag, and how
// its rows are made. src/seed/seed-database.ts runs every feature's section in the order of the
// features, in one transaction, each drawing from the one PRNG in turn, so the same seed gives the
// same data; a section reads what the sections before it wrote (a post's owner among the users).
import { sql } from 'kysely'
import type { Db } from './db/create-database.js'
import type { Tables } from './db/tables.js'
import type { Random } from './fake-data.js'

/**
 * The most rows one INSERT may carry: SQLite binds at most 32,766 parameters per statement, and
 * a user row has 8 columns.
 */
export const MAX_BATCH_SIZE = 4000

/** What a section's `write` is given. */
export interface SeedContext {
  /** The transaction the whole seed runs in. */
  readonly db: Db
  /** The seed's one PRNG. */
  readonly random: Random
  /** Writes `count` rows made by `make`, a batch (the seed's batch size) per call of `insert`, counting them in the progress. */
  inBatches<T>(this: void, count: number, make: (i: number) => T, insert: (rows: T[]) => Promise<void>): Promise<void>
  /** The ids an earlier section's `write` returned in this seed (none for a section not run yet). */
  written(this: void, section: string): readonly number[]
}

export interface SeedSection {
  /** Its rows in the demo data. */
  readonly demo: number
  /** What its flag of `threadline seed` (`--<feature> <n>`) does, in words. */
  readonly help: string
  /**
   * Adds `count` rows; returns the ids of the rows the sections after it may reference, in id
   * order (its new rows, as a rule).
   */
  write(this: void, count: number, seed: SeedContext): Promise<readonly number[]>
}

/** The tables a seed writes: those with an id. */
type SeededTable = { [T in keyof Tables]: Tables[T] extends { id: unknown } ? T : never }[keyof Tables]

/** The highest id of a table, 0 when it is empty. */
export async function highestId(db: Db, table: SeededTable): Promise<number> {
  const { rows } = await sql<{ max: number | string | null }>`select max(id) as max from ${sql.table(table)}`.execute(db)
  return Number(rows[0]?.max ?? 0)
}

/** The ids of a table above `after`, in order. */
export async function idsAfter(db: Db, table: SeededTable, after: number): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`select id from ${sql.table(table)} where id > ${after} order by id`.execute(db)
  return rows.map((row) => Number(row.id))
}

/** The i-th of `count` rows' share of `ids`, in blocks as the fake APIs have them: the first id's rows first. */
export const inBlocks = (ids: readonly number[], i: number, count: number): number => ids[Math.floor((i * ids.length) / count)] as number
