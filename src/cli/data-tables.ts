// What the data commands ask of a section's table, whichever it is: its rows in id order, how many
// there are, which ids and unique values it holds, emptying it and moving its id sequence. The
// tables are named by the sections (src/data-section.ts), so the queries are built over a
// table Kysely knows only by name.
import { type Kysely, sql } from 'kysely'
import type { DataSection, Fields, UniqueField } from '../data-section.js'
import type { Db } from '../db/create-database.js'
import { dialectFactsOf } from '../db/dialect-facts.js'

/** Values per `in (...)` when asking the database what it already holds. */
const LOOKUP_BATCH = 500

/** The store as a set of tables known by name, each with an integer `id`. */
type AnyTables = Kysely<Record<string, { id: number } & Fields>>
const byName = (db: Db) => db as unknown as AnyTables

/**
 * At most `limit` rows of the section with ids above `afterId`, in id order: its `read`, or every
 * column of its table. Keyset batches: `id > last` in id order uses the primary key, so the
 * thousandth batch costs what the first does.
 */
export function readBatch(db: Db, section: DataSection, afterId: number, limit: number): Promise<{ id: number }[]> {
  if (section.read !== undefined) return section.read(db, afterId, limit)
  return byName(db).selectFrom(section.name).selectAll().where('id', '>', afterId).orderBy('id').limit(limit).execute() as Promise<{ id: number }[]>
}

export async function countRows(db: Db, table: string): Promise<number> {
  const { n } = await byName(db)
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(n)
}

export async function insertRows(db: Db, table: string, rows: Fields[]): Promise<void> {
  await byName(db).insertInto(table).values(rows).execute()
}

/** Runs `lookUp` on `values` a batch at a time. */
async function inBatches<T>(values: Iterable<T>, lookUp: (batch: T[]) => Promise<void>): Promise<void> {
  let batch: T[] = []
  for (const value of values) {
    batch.push(value)
    if (batch.length === LOOKUP_BATCH) {
      await lookUp(batch)
      batch = []
    }
  }
  if (batch.length > 0) await lookUp(batch)
}

/** Of `ids`, those the table already holds. */
export async function existingIds(db: Db, table: string, ids: Iterable<number>): Promise<Set<number>> {
  const found = new Set<number>()
  await inBatches(ids, async (batch) => {
    for (const row of await byName(db).selectFrom(table).select('id').where('id', 'in', batch).execute()) found.add(row.id)
  })
  return found
}

/** Of `values` of a unique field (lowercased, if its case is ignored), the rows that hold them in the database: value → id. */
export async function existingValues(db: Db, table: string, unique: UniqueField, values: Iterable<string>): Promise<Map<string, number>> {
  const found = new Map<string, number>()
  const column = sql.ref(unique.column)
  await inBatches(values, async (batch) => {
    const rows = await byName(db)
      .selectFrom(table)
      .select(['id', sql<string>`${column}`.as('value')])
      .where(unique.ignoreCase ? sql<string>`lower(${column})` : column, 'in', batch)
      .execute()
    for (const row of rows) found.set(unique.ignoreCase ? row.value.toLowerCase() : row.value, row.id)
  })
  return found
}

/**
 * Empties the sections' tables, children first (`sections` parents first), and the answers kept
 * for Idempotency-Keys: they describe rows that are gone, and a retry must not replay them.
 */
export async function emptyTables(db: Db, sections: readonly DataSection[]): Promise<void> {
  for (const { name } of sections.toReversed()) await byName(db).deleteFrom(name).execute()
  await db.deleteFrom('idempotency_keys').execute()
  await db.deleteFrom('idempotency_callers').execute()
}

/**
 * The next id of each section's table is the highest one's successor: PostgreSQL's sequences are
 * not moved by explicit ids at all, and SQLite's AUTOINCREMENT remembers ids of rows a --replace deleted.
 */
export async function moveSequences(db: Db, sections: readonly DataSection[]): Promise<void> {
  for (const { name: table } of sections) {
    const highest = sql`coalesce((select max(id) from ${sql.table(table)}), 0)`
    if (dialectFactsOf(db).dialect === 'postgres') await sql`select setval(pg_get_serial_sequence(${table}, 'id'), ${highest} + 1, false)`.execute(db)
    else await sql`update sqlite_sequence set seq = ${highest} where name = ${table}`.execute(db)
  }
}
