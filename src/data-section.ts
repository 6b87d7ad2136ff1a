// What a feature declares about its section of the data files: `threadline export` writes each
// section's rows under its name, `threadline import` checks them and loads them into its table, and
// `import --replace` and `threadline reset` empty that table and start its ids again. The machinery
// (src/cli) is the same for every section; a section says what is its own: its rows in each format
// (how export writes one, what import accepts, how import turns one into the table's columns), the
// sections it references (parents are written first and emptied last), and the fields no two of its
// rows share.
import { type TSchema, Type } from 'typebox'
import type { Db } from './db/create-database.js'
import { MAX_ID } from './core/ids.js'
import { parseInstant } from './core/instant.js'
import { Id } from './core/schema-types.js'

/** A row as a data file holds it, or as its table's columns: field → value. */
export type Fields = Record<string, unknown>

/** An id a row may be written with: one the API can name (parseId's range). */
export const StoredId = Type.Integer({ ...Id, maximum: MAX_ID })

/**
 * A checked instant as the store keeps it, as parseInstant writes it (UTC), so that sorting and
 * cursors work whatever offset the file gave; null stays null.
 */
export const storedInstant = (text: unknown): string | null => (text === null ? null : (parseInstant(text as string) as string))

/** A field of a row that names a row of a section (its parent) by id; null names none. */
export interface Reference {
  readonly field: string
  /** The section whose row it names; one of the section's `references`. */
  readonly section: string
}

/** A field no two rows of a section share, in a file or in the database. */
export interface UniqueField {
  /** The field, the same in every format. */
  readonly field: string
  readonly column: string
  /** One value in words ('e-mail'), as the import's messages name it. */
  readonly noun: string
  /** Whether values that differ in case only are the same value (e-mails are). */
  readonly ignoreCase: boolean
}

/** What import hands `toColumns` besides the row. */
export interface ColumnsContext {
  /** When the import started (ISO 8601): the time of rows whose format carries none. */
  readonly now: string
}

/** A section's rows in one format. `R` is a row as the section's `read` gives it. */
export interface DataFormat<R> {
  /** Export: a row in this format, its keys in the order the file shows them. */
  write(this: void, row: R): Fields
  /** Import: what a row must be, a TypeBox object (its date-time fields read as src/core/instant.ts reads them). */
  readonly schema: TSchema
  /** Import: the problems of a row its schema passed that a schema cannot say, each as [field, message]. */
  problems?(this: void, row: Fields): Iterable<readonly [string, string]>
  /** Import: the fields that name other rows, each checked against the file and the database. */
  readonly references?: readonly Reference[]
  /** Import: a checked row as its table's columns. */
  toColumns(this: void, row: Fields, context: ColumnsContext): Fields
}

export interface DataFormats<R> {
  /** Threadline's own: everything an import needs to load the rows back as they were. */
  readonly threadline: DataFormat<R>
  /** JSONPlaceholder's /db document's, for a resource JSONPlaceholder has. */
  readonly jsonplaceholder?: DataFormat<R>
}

export type DataFormatName = keyof DataFormats<unknown>

export interface DataSection<R extends { readonly id: number } = { readonly id: number }> {
  /** Its key in a data file, and its table. */
  readonly name: string
  /** One of its rows in words ('user'); `name` is several. */
  readonly noun: string
  /** The sections its rows reference: written before it, emptied after it. */
  readonly references?: readonly string[]
  readonly unique?: readonly UniqueField[]
  /** Export: at most `limit` rows with ids above `afterId`, in id order. @default every column of its table */
  read?(this: void, db: Db, afterId: number, limit: number): Promise<R[]>
  /** Its rows in each format. A section without (tokens) is in no file: it is only emptied, and its ids started again, with the others. */
  readonly formats?: DataFormats<R>
}
