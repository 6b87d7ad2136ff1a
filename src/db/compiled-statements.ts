// The hot reads, and the insert of a row and its update by id, built and compiled once per shape,
// then run with each request's values: Kysely's query builder and compiler (about a tenth of the
// CPU of a GraphQL read of one user, and of a PATCH, npm run bench:profile) run when a shape is
// first seen, not per request. A shape is what changes the SQL text (the columns read or set, how
// many ids, which visibility rule, whether a write transaction locks the rows read); the values
// are parameters.
//
// A statement is built with slots where its values go: the compiled query keeps each slot among
// its parameters, and a run puts the values in their places. Kysely passes a value it is given to
// the parameters as it is, so a slot lands exactly where the value would have.
import {
  BinaryOperationNode,
  ColumnNode,
  type Compilable,
  type InsertQueryNode,
  CompiledQuery,
  NoResultError,
  OperatorNode,
  type SelectQueryBuilder,
  type UpdateQueryNode,
  ValueNode,
  WhereNode,
} from 'kysely'
import type { Db } from './create-database.js'
import type { Columns } from './projection.js'
import { readRows } from './direct-reads.js'
import { nameStatement } from './statement-names.js'
import { isWriteTransaction, lockForWrite } from './write-transaction.js'
import { Slot, withValues } from './slots.js'
import type { Tables } from './tables.js'

/** A slot typed as the value it stands for, so that the builder takes it where that value goes. */
export type SlotOf<A> = <T>(take: (args: A) => T) => T

interface Compiled {
  readonly sql: string
  /** Each parameter: a constant of the shape, or the slot its value comes from. */
  readonly parameters: readonly unknown[]
  readonly slots: boolean
  /** What Kysely built, the slots among its values. */
  readonly query: CompiledQuery['query']
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
 * A read compiled once per `shapeKey(args)` for each database handle and its transactions (they
 * share its compiler). `build` must put every value that varies within a shape through `slot` (a
 * value not slotted would stay the first run's); in a write transaction the shape is compiled apart,
 * as its reads may lock rows (lockForWrite).
 */
export function compiledStatement<Row, A>(
  shapeKey: (args: A) => string,
  build: (db: Db, args: A, slot: SlotOf<A>) => Compilable<Row>,
): CompiledStatement<Row, A> {
  const shapes = new CompiledShapes()
  const slot: SlotOf<A> = <T>(take: (args: A) => T) => new Slot<A>(take) as unknown as T

  async function run(db: Db, args: A): Promise<Row[]> {
    // A write transaction's shape, not named (below), is kept apart from the others.
    const writing = isWriteTransaction(db)
    const compiled = shapes.of(db, writing ? `locked ${shapeKey(args)}` : shapeKey(args), () => build(db, args, slot), !writing)
    const parameters = compiled.slots ? withValues(compiled.parameters, args) : compiled.parameters
    return readRows<Row>(db, compiled.sql, parameters)
  }

  return {
    all: run,
    first: async (db, args) => (await run(db, args))[0],
  }
}

/**
 * The shapes of one statement compiled, by shape, for each handle (its transactions with it: a
 * handle's compiler, and so the SQL it writes, is its adapter's, which they share). A shape `named`
 * has its text named (statement-names.ts: on PostgreSQL, prepared once per connection). The texts
 * of write transactions are not: a prepared statement whose table has changed shape since (another
 * instance's migration) fails, and a read outside a transaction can run again unnamed, a write's
 * transaction not.
 */
class CompiledShapes {
  private readonly byAdapter = new WeakMap<object, Map<string, Compiled>>()

  of(db: Db, shape: string, build: () => Compilable<unknown>, named: boolean): Compiled {
    const adapter = db.getExecutor().adapter
    let shapes = this.byAdapter.get(adapter)
    if (shapes === undefined) {
      shapes = new Map()
      this.byAdapter.set(adapter, shapes)
    }
    let compiled = shapes.get(shape)
    if (compiled === undefined) {
      const query = build().compile()
      compiled = { sql: query.sql, parameters: query.parameters, slots: query.parameters.some((p) => p instanceof Slot), query: query.query }
      if (named) nameStatement(query.sql)
      if (shapes.size >= MAX_SHAPES) shapes.delete(shapes.keys().next().value as string)
      shapes.set(shape, compiled)
    }
    return compiled
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

/** The arguments of a compiled update of one row: its id, the columns set and the columns matched, with their values. */
interface RowChange {
  readonly id: number
  readonly values: Readonly<Record<string, unknown>>
  readonly matched: Readonly<Record<string, unknown>>
}

/**
 * The UPDATE of one row of `table` by its id, setting the columns `changes` gives, the row as it is
 * then returned: compiled once per set of columns (in the order given), its text not named (it
 * runs in a write transaction: CompiledShapes). Kysely's executor runs it, so that what it changed
 * is told as any write's (changes.ts reads the row's id from the WHERE of the node it is given:
 * here the compiled one, with the id in the place of its slot). A column given as undefined is
 * left out, as Kysely's set() leaves it.
 */
export function rowUpdate<Row, Changes extends object>(table: keyof Tables): (db: Db, id: number, changes: Changes) => Promise<Row> {
  const update = oneRowUpdate(table)
  return async (db, id, changes) => {
    const { row, node } = await update<Row>(db, id, { compared: {}, stamp: changes as Record<string, unknown>, matched: {} })
    if (row === undefined) throw new NoResultError(node)
    return row
  }
}

/** What a conditional update of one row sets besides its changes, and what the row must hold. */
export interface RowChangeConditions<Changes> {
  /** Columns set with any change and never compared, such as its time. */
  readonly stamp: Changes
  /** Columns the row must hold, with their values, for the write to be made (its owner, say). */
  readonly matched?: Readonly<Record<string, unknown>>
}

/**
 * The UPDATE of one row of `table` by its id that writes only a change: it sets the columns of
 * `changes` and of `stamp` where the row holds the values of `matched` and another value in one of
 * `changes`, and returns the row as it is then. Undefined when it wrote nothing: there is no such
 * row, it holds other values of `matched`, or there is nothing to change (a read tells which).
 * Being one statement, its checks and its write are one: it may commit on its own
 * (singleStatementWrite), and no writer can come between them. Compiled once per set of columns
 * and run as rowUpdate's.
 */
export function rowUpdateIfChanged<Row, Changes extends object>(
  table: keyof Tables,
): (db: Db, id: number, changes: Changes, conditions: RowChangeConditions<Changes>) => Promise<Row | undefined> {
  const update = oneRowUpdate(table)
  return async (db, id, changes, { stamp, matched = {} }) => {
    const compared = changes as Record<string, unknown>
    if (!Object.keys(compared).some((column) => compared[column] !== undefined)) return undefined
    return (await update<Row>(db, id, { compared, stamp: stamp as Record<string, unknown>, matched })).row
  }
}

/** The columns of one row update: set and compared (one must change), set only, and matched. */
interface UpdateColumns {
  readonly compared: Readonly<Record<string, unknown>>
  readonly stamp: Readonly<Record<string, unknown>>
  readonly matched: Readonly<Record<string, unknown>>
}

/**
 * The update of rowUpdate and rowUpdateIfChanged, compiled once per set of columns: those of
 * `compared` and `stamp` set, the row only where it holds `matched` and, when any are compared, where
 * one of `compared` changes. The first row it returns, and the node it is told as.
 */
function oneRowUpdate(table: keyof Tables) {
  const shapes = new CompiledShapes()
  const slot = (take: (args: RowChange) => unknown) => new Slot<RowChange>(take) as never
  const value = (column: string) => slot((args) => args.values[column])
  const build = (db: Db, compared: readonly string[], stamped: readonly string[], matched: readonly string[]) =>
    db
      .updateTable(table)
      .set(Object.fromEntries([...compared, ...stamped].map((column) => [column, value(column)])) as never)
      .where((eb) =>
        eb.and([
          eb(
            'id',
            '=',
            slot((args) => args.id),
          ),
          ...matched.map((column) =>
            eb(
              column as never,
              '=',
              slot((args) => args.matched[column]),
            ),
          ),
          ...(compared.length === 0 ? [] : [eb.or(compared.map((column) => eb(column as never, 'is distinct from', value(column))))]),
        ]),
      )
      .returningAll()
  const given = (values: Readonly<Record<string, unknown>>) => Object.keys(values).filter((column) => values[column] !== undefined)
  return async <Row>(db: Db, id: number, { compared, stamp, matched }: UpdateColumns) => {
    const [comparing, stamping, matching] = [given(compared), given(stamp), given(matched)]
    const compiled = shapes.of(db, `${comparing.join(',')}|${stamping.join(',')}|${matching.join(',')}`, () => build(db, comparing, stamping, matching), false)
    const node: UpdateQueryNode = {
      ...(compiled.query as UpdateQueryNode),
      where: WhereNode.create(BinaryOperationNode.create(ColumnNode.create('id'), OperatorNode.create('='), ValueNode.create(id))),
    }
    const args: RowChange = { id, values: { ...compared, ...stamp }, matched }
    return { row: await firstRowWritten<Row>(db, compiled, args, node), node }
  }
}

/**
 * The INSERT of one row into `table`, the row as stored returned (its id, the defaults): compiled
 * once per set of columns (in the order given), its text not named (it runs in a write
 * transaction: CompiledShapes). Kysely's executor runs it, so that what it changed is told as any
 * write's (rows added: changes.ts reads the table from the compiled node). A column given as
 * undefined is left out, as Kysely's values() leaves it.
 */
export function rowInsert<Row, NewRow extends object>(table: keyof Tables): (db: Db, row: NewRow) => Promise<Row> {
  const shapes = new CompiledShapes()
  const build = (db: Db, columns: readonly string[]) =>
    db
      .insertInto(table)
      .values(Object.fromEntries(columns.map((column) => [column, new Slot<Readonly<Record<string, unknown>>>((values) => values[column])])))
      .returningAll()
  return async (db, row) => {
    const values = row as Readonly<Record<string, unknown>>
    const columns = Object.keys(values).filter((column) => values[column] !== undefined)
    const compiled = shapes.of(db, columns.join(','), () => build(db, columns), false)
    const node = compiled.query as InsertQueryNode
    const inserted = await firstRowWritten<Row>(db, compiled, values, node)
    if (inserted === undefined) throw new NoResultError(node)
    return inserted
  }
}

/**
 * The first row a compiled write returns, if any, run through Kysely's executor with `args` in its
 * slots and `node` as the statement Kysely is told it runs (what changes.ts reads the change from).
 */
async function firstRowWritten<Row>(db: Db, compiled: Compiled, args: unknown, node: InsertQueryNode | UpdateQueryNode): Promise<Row | undefined> {
  const query: CompiledQuery = { ...CompiledQuery.raw(compiled.sql, withValues(compiled.parameters, args) as unknown[]), query: node }
  return (await db.executeQuery<Row>(query)).rows[0]
}
