// A named statement's run on `pg`, without the work `pg` redoes on every run of it.
//
// `pg` copies a query given as an object (its name, text and values) property by property, through
// descriptors, and on every answer turns the columns' description into a new set of value parsers
// and a new empty row to copy for each row, although a named statement's columns cannot change
// while it stays prepared (PostgreSQL refuses to run it instead: "cached plan must not change
// result type"). Together that was about 8% of the CPU of GET one user on PostgreSQL. A named run
// here is given its text as a string (nothing to copy) and its name after, and an answer whose
// columns are the ones the same name described last time reuses that time's parsers and empty row.
// The columns are compared, name, type and format, before anything is reused: a statement prepared
// again under its name after its table changed shape gets parsers of its own.
import type pgModule from 'pg'

/** The columns of a RowDescription, as `pg-protocol` parses them. */
interface Field {
  name: string
  dataTypeID: number
  format: string
}

/** What `pg`'s Result derives from a RowDescription (its own fields, as Result.addFields sets them). */
interface Shape {
  fields: Field[]
  _parsers: unknown[]
  _prebuiltEmptyResultObject: object
}

/** The parts of `pg`'s Query a named run uses beyond its typings. */
interface QueryInternals {
  name?: string
  _result: Shape
  _accumulateRows: boolean
  handleRowDescription(message: { fields: Field[] }): void
}

/** A read to run under a name of its own (a text named by statement-names.ts's readNameOf). */
export class ReadByName {
  constructor(
    readonly name: string,
    readonly text: string,
  ) {}
}

export type NamedQuery = new (
  name: string,
  text: string,
  values: unknown[],
  callback: (error: Error | null, result: pgModule.QueryResult) => void,
) => pgModule.Query

const sameColumns = (kept: Field[], fields: Field[]): boolean => {
  if (kept.length !== fields.length) return false
  for (let i = 0; i < fields.length; i++) {
    const a = kept[i]!
    const b = fields[i]!
    if (a.name !== b.name || a.dataTypeID !== b.dataTypeID || a.format !== b.format) return false
  }
  return true
}

/** The named-run Query class of a loaded `pg`; the shapes it keeps are the process's, one per statement name. */
export function namedQueryOf(pg: typeof pgModule): NamedQuery {
  const shapes = new Map<string, Shape>()
  const Query = pg.Query as unknown as new (
    text: string,
    values: unknown[],
    callback: (error: Error | null, result: pgModule.QueryResult) => void,
  ) => QueryInternals
  class Named extends Query {
    constructor(name: string, text: string, values: unknown[], callback: (error: Error | null, result: pgModule.QueryResult) => void) {
      super(text, values, callback)
      this.name = name
    }

    override handleRowDescription(message: { fields: Field[] }): void {
      const name = this.name!
      const kept = shapes.get(name)
      if (kept === undefined || !sameColumns(kept.fields, message.fields)) {
        super.handleRowDescription(message)
        const { fields, _parsers, _prebuiltEmptyResultObject } = this._result
        shapes.set(name, { fields, _parsers, _prebuiltEmptyResultObject })
        return
      }
      // What Query's own handler does, with Result.addFields's work taken from the kept shape. A
      // named statement is one statement: one description, so no second result to start; and the
      // run has a callback, so its rows are gathered.
      const result = this._result
      result.fields = message.fields
      result._parsers = kept._parsers
      result._prebuiltEmptyResultObject = kept._prebuiltEmptyResultObject
      this._accumulateRows = true
    }
  }
  return Named as unknown as NamedQuery
}
