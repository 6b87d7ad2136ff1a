// The hot reads built and compiled once per shape, then run with each request's values: Kysely's
// query builder and compiler (about a tenth of the CPU of a GraphQL read of one user, npm run
// bench:profile) run when a shape is first seen, not per request. A shape is what changes the SQL
// text (the columns read, how many ids, which visibility rule); the values are parameters.
//
// A statement is built with slots where its values go: the compiled query keeps each slot among
// its parameters, and a run puts the values in their places. Kysely passes a value it is given to
// the parameters as it is, so a slot lands exactly where the value would have.
import type { Compilable, SelectQueryBuilder } from 'kysely'
import type { Db } from './create-database.js'
import type { Columns } from './projection.js'
import { readRows } from './direct-reads.js'
import { nameStatement } from './statement-names.js'
import { lockForWrite } from './write-transaction.js'
import { Slot, withValues } from './slots.js'

/** A slot typed as the value it stands for, so that the builder takes it where that value goes. */
export type SlotOf<A> = <T>(take: (args: A) => T) => T

interface Compiled {
  readonly sql: string
  /** Each parameter: a constant of the shape, or the slot its value comes from. */
  readonly parameters: readonly unknown[]
  readonly slots: boolean
}

/** The most shapes one statement keeps compiled (a shape is a few hundred bytes of SQL). */
const MAX_SHAPES = 200

export interface CompiledStatement<Row, A> {
  /** The rows of this statement with these arguments. */
  all(db: Db, args: A): Promise<Row[]>
  /** The first row, or undefined. */
  first(db: Db, args: A): Promise<Row | undefined>
}

/**
 * A read compiled once per `shapeKey(args)` on each database handle. `build` must put every value
 * that varies within a shape through `slot` (a value not slotted would stay the first run's); a
 * transaction's reads are built each time, as they may lock rows (lockForWrite).
 */
export function compiledStatement<Row, A>(
  shapeKey: (args: A) => string,
  build: (db: Db, args: A, slot: SlotOf<A>) => Compilable<Row>,
): CompiledStatement<Row, A> {
  const byDatabase = new WeakMap<Db, Map<string, Compiled>>()
  const slot: SlotOf<A> = <T>(take: (args: A) => T) => new Slot<A>(take) as unknown as T

  function compiledFor(db: Db, args: A): Compiled {
    let shapes = byDatabase.get(db)
    if (shapes === undefined) {
      shapes = new Map()
      byDatabase.set(db, shapes)
    }
    const shape = shapeKey(args)
    let compiled = shapes.get(shape)
    if (compiled === undefined) {
      const query = build(db, args, slot).compile()
      compiled = { sql: query.sql, parameters: query.parameters, slots: query.parameters.some((p) => p instanceof Slot) }
      nameStatement(query.sql)
      if (shapes.size >= MAX_SHAPES) shapes.delete(shapes.keys().next().value as string)
      shapes.set(shape, compiled)
    }
    return compiled
  }

  async function run(db: Db, args: A): Promise<Row[]> {
    if (db.isTransaction) return (await db.executeQuery(build(db, args, (take) => take(args)).compile())).rows
    const compiled = compiledFor(db, args)
    const parameters = compiled.slots ? withValues(compiled.parameters, args) : compiled.parameters
    return readRows<Row>(db, compiled.sql, parameters)
  }

  return {
    all: run,
    first: async (db, args) => (await run(db, args))[0],
  }
}

/**
 * One row by its id, compiled once per set of columns: `rows` is the FROM (and joins) with the
 * selection of those columns (the whole row without them), `column` the id's. In a write's
 * transaction the row is locked as lockForWrite locks it (of `table` alone, when the query joins others).
 */
export function rowById<Row>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any select, whatever its tables
  rows: (db: Db, columns: Columns<Row> | undefined) => SelectQueryBuilder<any, any, Row>,
  column = 'id',
  table?: string,
): (db: Db, id: number, columns?: Columns<Row>) => Promise<Row | undefined> {
  const statement = compiledStatement<Row, { id: number; columns: Columns<Row> | undefined }>(
    ({ columns }) => columns?.key ?? '*',
    (db, { columns }, slot) =>
      lockForWrite(
        db,
        rows(db, columns).where(
          column,
          '=',
          slot((args) => args.id),
        ),
        table,
      ),
  )
  return (db, id, columns) => statement.first(db, { id, columns })
}
