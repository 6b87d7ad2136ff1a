// Runs an AggregateQuery (src/collections/aggregation.ts) over the rows a list would read: the
// list's `from` (its path and visibility), its filters and search, read up to one row past
// MAX_AGGREGATED_ROWS, then grouped and computed by the database, one statement:
//
//   select c0, count(*) as matched_rows, max(c1) as v0 ... from
//     (select 1 as one, <group column> as c0, <aggregated column> as c1 from <the list's rows> limit 10001) as matched
//   group by c0 order by c0 limit 1001
//
// The inner read is the list's (an index the filters or path name serves it; a count reads the
// index alone); the groups are at most its rows. The rows matched are the groups' counts summed:
// what the caller pays for (before the bounds are judged), without a second read.
import { type Expression, type RawBuilder, sql } from 'kysely'
import {
  type AggregateFunction,
  type AggregateGroup,
  type AggregatePayment,
  type AggregateQuery,
  type AggregateResult,
  checkAggregateBounds,
  MAX_AGGREGATE_GROUPS,
  MAX_AGGREGATED_ROWS,
} from '../collections/aggregation.js'
import type { FieldSpec } from '../collections/collection-spec.js'
import type { Db } from './create-database.js'
import { type AnySelect, matchingRows } from './list-page.js'
import { toIsoTimestamp } from './tables.js'

export interface AggregatePageOptions {
  /** FROM, joins and the WHERE of the path's scope and the reader's rights: a list's own (ListPageOptions.from). */
  readonly from: (db: Db) => AnySelect
  readonly request: AggregateQuery
  /** Charged for the rows read, before the bounds are judged and the groups answered; absent, nothing is charged. */
  readonly pay?: AggregatePayment | undefined
}

const SQL_FUNCTIONS: Record<AggregateFunction, (column: Expression<unknown>) => RawBuilder<unknown>> = {
  count: (column) => sql`count(${column})`,
  sum: (column) => sql`sum(${column})`,
  avg: (column) => sql`avg(${column})`,
  min: (column) => sql`min(${column})`,
  max: (column) => sql`max(${column})`,
}

export async function aggregatePage(db: Db, { from, request, pay }: AggregatePageOptions): Promise<AggregateResult> {
  const { groupBy, aggregates, order } = request.aggregation
  // Each column read once, under a name of our own: aliases never reach SQL as text.
  const columns = new Map<string, string>()
  const inner = (field: FieldSpec) => {
    let name = columns.get(field.column)
    if (name === undefined) columns.set(field.column, (name = `c${columns.size}`))
    return name
  }
  const keys = groupBy.map((key) => ({ ...key, column: inner(key.field) }))
  const values = aggregates.map((aggregate, at) => ({ ...aggregate, column: aggregate.field === undefined ? undefined : inner(aggregate.field), as: `v${at}` }))

  const matching = (await matchingRows(db, from, request.query))
    .select([sql.lit(1).as('one'), ...[...columns].map(([column, name]) => sql.ref(column).as(name))])
    .limit(MAX_AGGREGATED_ROWS + 1)
  const outputOf = new Map<string, { as: string; nullable: boolean }>([
    ...keys.map((key) => [key.name, { as: key.column, nullable: key.field.nullable === true }] as const),
    ...values.map((value) => [value.name, { as: value.as, nullable: value.function !== 'count' }] as const),
  ])
  let grouped = db
    .selectFrom(matching.as('matched'))
    .select([
      ...keys.map((key) => sql.ref(key.column).as(key.column)),
      sql<number | string>`count(*)`.as('matched_rows'),
      ...values.map((value) => SQL_FUNCTIONS[value.function](value.column === undefined ? sql`*` : sql.ref(value.column)).as(value.as)),
    ])
  if (keys.length > 0) grouped = grouped.groupBy(keys.map((key) => sql.ref(key.column)))
  for (const { name, descending } of order) {
    const output = outputOf.get(name) as { as: string; nullable: boolean }
    // NULL is the smallest value, as a list sorts it (src/db/list-page.ts).
    grouped = grouped.orderBy(sql.ref(output.as), (o) => {
      const direction = descending ? o.desc() : o.asc()
      return output.nullable ? (descending ? direction.nullsLast() : direction.nullsFirst()) : direction
    })
  }
  const found = (await grouped.limit(MAX_AGGREGATE_GROUPS + 1).execute()) as Record<string, unknown>[]

  const rows = found.reduce((sum, row) => sum + Number(row.matched_rows), 0)
  await pay?.(Math.min(rows, MAX_AGGREGATED_ROWS + 1))
  checkAggregateBounds(rows, found.length)
  const groups = found.map((row): AggregateGroup => {
    const group: Record<string, string | number | boolean | null> = {}
    for (const key of keys) group[key.name] = valueOf(key.field, row[key.column])
    for (const value of values) group[value.name] = aggregateValueOf(value.function, value.field, row[value.as])
    return group
  })
  // Without grouping, one group even over no rows (a count of 0), as SQL answers.
  return { groups, groupedBy: keys.map((key) => key.name), rows }
}

/** A stored value as the field's type: SQLite's 0/1 booleans, PostgreSQL's Date and bigint text. */
function valueOf(field: FieldSpec, value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null
  switch (field.type) {
    case 'boolean':
      return Boolean(Number(value))
    case 'integer':
      return Number(value)
    case 'timestamp':
      return toIsoTimestamp(value as string | Date)
    case 'string':
      return value as string
  }
}

/** An aggregate's value: counts and sums as integers, averages as numbers, min and max as their field's type. */
function aggregateValueOf(fn: AggregateFunction, field: FieldSpec | undefined, value: unknown): string | number | boolean | null {
  if (fn === 'count') return Number(value ?? 0)
  if (value === null || value === undefined || field === undefined) return null
  if (fn === 'avg' || fn === 'sum') return Number(value)
  return valueOf(field, value)
}
