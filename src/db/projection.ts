// Reads of only the columns a caller will show. A GraphQL operation names the fields it wants
// (`posts { id title }`): its reads select those fields' columns and no others, so a post's
// content is never read, copied or sorted for a list of titles. Each feature declares which column
// each field of its entity comes from; a read without a projection takes the whole row, as before.
import type { AnySelect } from './list-page.js'

/** Where one field of an entity comes from: its column, and how the stored value becomes the field's. */
export interface FieldSource<Row> {
  readonly column: keyof Row & string
  readonly read?: (value: never) => unknown
}

/**
 * A set of a table's columns to read, made by a Projection (one object per set, so it can key a
 * cache or a batch). A row read with it holds those columns only; `all` when it is the whole row.
 */
export interface Columns<Row> {
  readonly names: readonly (keyof Row & string)[]
  /** The names joined: the same set gives the same key, and the same SQL text. */
  readonly key: string
  readonly all: boolean
}

type FieldRead<Row, Entity> = readonly [keyof Entity & string, keyof Row & string, ((value: never) => unknown) | undefined]

interface ColumnsOf<Row, Entity> extends Columns<Row> {
  /** The entity's fields these columns give, and how each is read. */
  readonly fields: readonly FieldRead<Row, Entity>[]
  /** The entity of a row read with these columns: the whole mapping for every column, else entityOf's (or fieldByField's, past the bound). */
  readonly entity: (row: Row) => Entity
}

/** The most column sets a projection keeps (each is a few names): a document cannot make more than its fields allow. */
const MAX_SETS = 256

export class Projection<Row extends object, Entity extends object> {
  /** Every column, in the table's declared order. */
  readonly all: Columns<Row>
  private readonly order: readonly (keyof Row & string)[]
  private readonly sets = new Map<string, ColumnsOf<Row, Entity>>()

  /**
   * `sources`: each field's column; `always`: the columns every read takes (the id, and what the
   * feature's rules or batches need: a post's author to group it by); `toEntity`: the whole row's
   * mapping, used when every column is read.
   */
  constructor(
    private readonly sources: { readonly [F in keyof Entity & string]: FieldSource<Row> },
    private readonly always: readonly (keyof Row & string)[],
    private readonly toEntity: (row: Row) => Entity,
  ) {
    const fieldSources: FieldSource<Row>[] = Object.values(sources)
    this.order = [...new Set([...always, ...fieldSources.map((source) => source.column)])]
    this.all = this.columnSet(this.order)
  }

  /**
   * The columns of these fields, with the ones always read. A name that is no field of the
   * entity (a relation, `__typename`) needs no column of its own.
   */
  columnsFor(fields: Iterable<string>, extra: Iterable<string> = []): Columns<Row> {
    const wanted = new Set<string>(this.always)
    for (const field of fields) {
      const source = (this.sources as Record<string, FieldSource<Row> | undefined>)[field]
      if (source !== undefined) wanted.add(source.column)
    }
    for (const column of extra) wanted.add(column)
    return this.columnSet(this.order.filter((column) => wanted.has(column)))
  }

  /** The columns plus `extra` ones (a list's sort keys, which its cursors are made of). */
  plus(columns: Columns<Row>, extra: Iterable<string>): Columns<Row> {
    if (columns.all) return columns
    const wanted = new Set<string>([...columns.names, ...extra])
    return this.columnSet(this.order.filter((column) => wanted.has(column)))
  }

  /** The entity of a row read with `columns`: whole when every column was read, else only the fields they give. */
  read(row: Row, columns: Columns<Row>): Entity {
    return (columns as ColumnsOf<Row, Entity>).entity(row)
  }

  private columnSet(names: readonly (keyof Row & string)[]): ColumnsOf<Row, Entity> {
    const key = names.join(',')
    const known = this.sets.get(key)
    if (known !== undefined) return known
    const read = new Set(names)
    const fields = Object.entries(this.sources as Record<string, FieldSource<Row>>)
      .filter(([, source]) => read.has(source.column))
      .map(([field, source]) => [field as keyof Entity & string, source.column, source.read] as const)
    const all = names.length === this.order.length
    const kept = this.sets.size < MAX_SETS
    // A set past the bound is made for one read: it is not worth a function of its own.
    const entity = all ? this.toEntity : kept ? entityOf(fields) : fieldByField(fields)
    const set: ColumnsOf<Row, Entity> = { names, key, all, fields, entity }
    if (kept) this.sets.set(key, set)
    return set
  }
}

/**
 * The entity of a row, made by a function written for the fields: one object literal, so every
 * entity of the set has the same shape from its first property, where storing the fields one by
 * one through a key held in a variable went through V8's slowest stores (the same code serves
 * every entity and every set). The names are the features' own field and column names, each
 * written as a JSON string; nothing a caller sends reaches the function's text.
 */
function entityOf<Row, Entity>(fields: readonly FieldRead<Row, Entity>[]): (row: Row) => Entity {
  const reads = fields.map(([, , read]) => read)
  const properties = fields.map(([field, column, read], index) => {
    const value = `row[${JSON.stringify(column)}]`
    return `${JSON.stringify(field)}: ${read === undefined ? value : `(value = ${value}) === null ? value : reads[${index}](value)`}`
  })
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the text is made of the features' declared names (above)
  const make = new Function('reads', `return (row) => { let value; return { ${properties.join(', ')} } }`) as (reads: unknown[]) => (row: Row) => Entity
  return make(reads)
}

/** The entity of a row, field by field: for a set read once. */
const fieldByField =
  <Row, Entity>(fields: readonly FieldRead<Row, Entity>[]) =>
  (row: Row): Entity => {
    const entity: Record<string, unknown> = {}
    for (const [field, column, read] of fields) {
      const value = row[column]
      entity[field] = read === undefined || value === null ? value : read(value as never)
    }
    return entity as Entity
  }

/** The columns a list's cursors are made of: its sort keys' (unqualified). */
export const sortColumns = (query: { readonly sort: readonly { readonly field: { readonly column: string } }[] }): string[] =>
  query.sort.map((key) => key.field.column.split('.').at(-1) as string)

/**
 * Selects `columns` (of `table`, in a query that joins others): the whole row when they are not
 * given. The rows it reads hold those columns only; every column of the projection is not every
 * column of the table (a user's password hash is no field).
 */
export const selecting =
  <Row extends object>(columns: Columns<Row> | undefined, table?: string) =>
  (query: AnySelect): AnySelect => {
    if (columns === undefined) return table === undefined ? query.selectAll() : query.selectAll(table)
    return query.select(table === undefined ? columns.names : columns.names.map((column) => `${table}.${column}`))
  }
