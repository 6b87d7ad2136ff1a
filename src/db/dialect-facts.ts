// What differs between the SQL dialects, as named facts. Migrations and repositories ask these
// instead of branching on the dialect's name. PostgreSQL gets its own set with the scale-out work.
import type { ColumnDataType, ColumnDefinitionBuilder } from 'kysely'

export interface DialectFacts {
  readonly dialect: 'sqlite'
  /** Column type for instants. SQLite has none: ISO 8601 text sorts and compares correctly. */
  readonly timestampType: ColumnDataType
  /** Makes an integer column the primary key, with ids that are never reused after a delete. */
  autoIncrementPrimaryKey(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder
}

export const sqliteFacts: DialectFacts = {
  dialect: 'sqlite',
  timestampType: 'text',
  autoIncrementPrimaryKey: (column) => column.primaryKey().autoIncrement(),
}
