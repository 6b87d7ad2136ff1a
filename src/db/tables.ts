// The store's tables as Kysely sees them, and the column types they share. Each feature declares its
// own tables beside its code (src/users/users.table.ts, …) and adds them to Tables by declaration
// merging, the way Fastify's decorators extend FastifyInstance: this layer names no feature, and a
// new feature's table is typed everywhere the moment its file is compiled. Row types (UserRow) are
// what the store returns; the API types (User) are mapped from them in each feature's service.
import type { ColumnType } from 'kysely'

/** Timestamps are ISO 8601 text on SQLite (sortable as text) and timestamptz on PostgreSQL. */
export type Timestamp = ColumnType<string | Date, string, string>
/** Booleans are 0/1 on SQLite and boolean on PostgreSQL; both accept 0/1 when written. */
export type BooleanColumn = ColumnType<boolean | number, number, number>

/** Every table of the store, by name: empty here, filled in by the features' `*.table.ts`. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging fills it
export interface Tables {}

/** Timestamps as the API shows them: ISO 8601 UTC with milliseconds, whatever the dialect returned. */
export function toIsoTimestamp(value: string | Date): string {
  return typeof value === 'string' ? value : value.toISOString()
}
