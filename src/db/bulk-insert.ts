// Many rows inserted in one write transaction, as few statements as the event loop allows: one
// INSERT of many rows is far cheaper than one per row (one round trip to PostgreSQL, one statement
// for SQLite to prepare), but better-sqlite3 runs each statement synchronously, so a thousand rows
// in one would hold every other request for its whole time. The rows go in chunks, the event loop
// let go between them; the transaction stays open across the chunks (on SQLite other writers wait
// for it, as for any write; readers on PostgreSQL see none of the rows until the commit).
import { setImmediate as nextLoopTurn } from 'node:timers/promises'

/**
 * Rows per INSERT. Measured on SQLite, posts of a title and a sentence: 1,000 rows in one statement
 * held the loop 35 to 60 ms, 250 rows 10 ms, 100 rows 2 to 3 ms. And 100 rows of a few columns
 * are far under either store's bound parameters.
 */
export const ROWS_PER_INSERT = 100

/** `insert` run over `rows` a chunk at a time, the event loop let go between chunks; the rows it returns, in the order of the chunks. */
export async function insertInChunks<Row, Inserted>(
  rows: readonly Row[],
  insert: (chunk: readonly Row[]) => Promise<readonly Inserted[]>,
): Promise<Inserted[]> {
  const inserted: Inserted[] = []
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    if (start > 0) await nextLoopTurn()
    inserted.push(...(await insert(rows.slice(start, start + ROWS_PER_INSERT))))
  }
  return inserted
}

/**
 * The rows of one multi-row INSERT's RETURNING, in the order of its VALUES: neither store promises
 * RETURNING's order, but each gives the rows their ids in the order it inserts them.
 */
export const inInsertOrder = <Row extends { readonly id: number }>(rows: readonly Row[]): Row[] => [...rows].sort((a, b) => a.id - b.id)
