// Fills the database with generated data: each feature's seed section (src/seed-section.ts) in the
// order of the features, in batched multi-row inserts, all in one transaction, so a seed lands
// whole or not at all. Used for the demo data on first start and by `threadline seed`.
import type { Db } from '../db/create-database.js'
import { dialectFactsOf } from '../db/dialect-facts.js'
import { createRandom } from '../fake-data.js'
import { FEATURES } from '../features.js'
import { MAX_BATCH_SIZE, type SeedContext, type SeedSection } from '../seed-section.js'

import type { SeededFeature } from './seed-flags.js'

export { MAX_BATCH_SIZE } from '../seed-section.js'

/** Rows to add, by feature (`users: 10`). */
export type SeedCounts = Readonly<Record<SeededFeature, number>>

/** The features that generate rows, in the order they are seeded. */
const SECTIONS: readonly (readonly [name: string, section: SeedSection])[] = FEATURES.flatMap(({ name, seed }) =>
  seed === undefined ? [] : [[name, seed] as const],
)

/** The demo data: what a new database starts with, and `threadline seed` without flags. */
export const DEMO_COUNTS = Object.fromEntries(SECTIONS.map(([name, { demo }]) => [name, demo])) as SeedCounts

/** From this many rows, a seed's search indexing is done once at the end (dialect-facts bulkLoad). */
const BULK_LOAD_ROWS = 10_000

export interface SeedOptions {
  /** Rows per INSERT statement. @default 500 */
  batchSize?: number
  /** PRNG seed: the same seed on an empty database gives the same data. @default 1 */
  seed?: number
  /** Called after every batch with the rows written so far and the rows to write in all. */
  onProgress?: (done: number, total: number) => void
}

/** Adds the rows `counts` asks for (none of a feature it leaves out); returns how many of each it wrote. */
export async function seedDatabase(db: Db, counts: Partial<SeedCounts>, options: SeedOptions = {}): Promise<SeedCounts> {
  const unknown = Object.keys(counts).filter((name) => !SECTIONS.some(([section]) => section === name))
  if (unknown.length > 0) throw new Error(`No feature generates ${unknown.join(', ')}`)
  const batchSize = Math.min(options.batchSize ?? 500, MAX_BATCH_SIZE)
  const random = createRandom(options.seed ?? 1)
  const countOf = (name: string) => (counts as Readonly<Record<string, number | undefined>>)[name] ?? 0
  const total = SECTIONS.reduce((sum, [name]) => sum + countOf(name), 0)
  let done = 0

  await db.transaction().execute(async (trx) => {
    const written = new Map<string, readonly number[]>()
    const context: SeedContext = {
      db: trx,
      random,
      written: (section) => written.get(section) ?? [],
      async inBatches(count, make, insert) {
        for (let start = 0; start < count; start += batchSize) {
          const rows = []
          for (let i = start; i < Math.min(start + batchSize, count); i++) rows.push(make(i))
          await insert(rows)
          done += rows.length
          options.onProgress?.(done, total)
        }
      },
    }
    const fill = async () => {
      for (const [name, section] of SECTIONS) written.set(name, await section.write(countOf(name), context))
    }
    // A large seed indexes its text for search once, at the end, rather than row by row.
    await (total >= BULK_LOAD_ROWS ? dialectFactsOf(trx).bulkLoad(trx, fill) : fill())
  })
  return Object.fromEntries(SECTIONS.map(([name]) => [name, countOf(name)])) as SeedCounts
}
