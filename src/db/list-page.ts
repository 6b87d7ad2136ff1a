// Runs a CollectionQuery: filters, search and order on any list query, then one page of it by
// OFFSET (page mode) or by keyset (cursor mode, never OFFSET), with the cursors for the pages
// around it and, when asked, the total.
//
// All the statements of one page (the tiers, the count) run in one read transaction, so a write
// committed meanwhile cannot show a row twice or hide it.
//
// Order: NULL sorts as the smallest value (first ascending, last descending), as SQLite's indexes
// keep it. A keyset position is split into "tiers" of plain index ranges, taken in order until the
// page is full, instead of one OR of them: every tier is a range an index seeks to, so a page deep
// in the set costs what the first page costs.
import { type Expression, type SelectQueryBuilder, type SqlBool, sql } from 'kysely'
import type { Db } from './create-database.js'
import { type DialectFacts, factsOf } from './dialect-facts.js'
import type { FieldSpec } from '../collections/collection-spec.js'
import type { CollectionQuery, SortKey } from '../collections/collection-query.js'
import { type Cursor, encodeCursor, type KeyValue } from '../collections/cursor.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the list query's tables and joins vary by caller
type AnySelect = SelectQueryBuilder<any, any, any>

export interface RowPage<Row> {
  readonly rows: Row[]
  /** More rows follow this page in the query's order. */
  readonly hasMore: boolean
  /** Rows come before this page. */
  readonly hasPrevious: boolean
  /** Rows matching the query, when asked for. */
  readonly total: number | undefined
  readonly nextCursor: string | null
  readonly prevCursor: string | null
}

export interface ListPageOptions<Row> {
  /** FROM, joins and the WHERE of the path's scope, on the executor given; no selection, order or limit. */
  from: (db: Db) => AnySelect
  /** Adds the selection of the rows to return. */
  select: (query: AnySelect) => SelectQueryBuilder<never, never, Row>
  query: CollectionQuery
}

export async function listPage<Row extends object>(db: Db, options: ListPageOptions<Row>): Promise<RowPage<Row>> {
  const { query } = options
  const oneStatement = !query.withTotal && (query.mode === 'page' || query.cursor === undefined)
  if (oneStatement) return readPage(db, options)
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute((trx) => readPage(trx, options))
}

async function readPage<Row extends object>(db: Db, options: ListPageOptions<Row>): Promise<RowPage<Row>> {
  const { query } = options
  const facts = factsOf(db)
  const matching = () => narrow(options.from(db), query, facts)
  const total = query.withTotal ? await countRows(matching()) : undefined
  const cursorOf = (row: Row | undefined, direction: Cursor['direction']) =>
    row === undefined ? null : encodeCursor({ direction, values: keyValues(row, query.sort) }, query.fingerprint)

  if (query.mode === 'page') {
    const rows = (await options
      .select(ordered(matching(), query.sort, false))
      .limit(query.limit + 1)
      .offset((query.page - 1) * query.limit)
      .execute()) as Row[]
    const hasMore = rows.length > query.limit
    if (hasMore) rows.pop()
    return { rows, hasMore, hasPrevious: query.page > 1, total, nextCursor: hasMore ? cursorOf(rows.at(-1), 'after') : null, prevCursor: null }
  }

  const backwards = query.cursor?.direction === 'before'
  const rows = await readByKeyset(db, options, query, backwards)
  const hasBeyond = rows.length > query.limit
  if (hasBeyond) rows.pop()
  if (backwards) rows.reverse()
  // Reading forward from a cursor, rows lie before it; reading backward, the cursor's own row lies after.
  const hasMore = backwards ? true : hasBeyond
  const hasPrevious = backwards ? hasBeyond : query.cursor !== undefined
  return {
    rows,
    hasMore: hasMore && rows.length > 0,
    hasPrevious: hasPrevious && rows.length > 0,
    total,
    nextCursor: hasMore ? cursorOf(rows.at(-1), 'after') : null,
    prevCursor: hasPrevious ? cursorOf(rows.at(0), 'before') : null,
  }
}

/** Up to limit+1 rows past the cursor (or from the start), tier by tier. */
async function readByKeyset<Row>(db: Db, options: ListPageOptions<Row>, query: CollectionQuery, backwards: boolean): Promise<Row[]> {
  const wanted = query.limit + 1
  const base = () => ordered(narrow(options.from(db), query, factsOf(db)), query.sort, backwards)
  if (query.cursor === undefined) return (await options.select(base()).limit(wanted).execute())
  const rows: Row[] = []
  for (const tier of keysetTiers(query.sort, query.cursor.values, backwards)) {
    const found = (await options.select(base().where(tier)).limit(wanted - rows.length).execute()) as Row[]
    rows.push(...found)
    if (rows.length >= wanted) break
  }
  return rows
}

function narrow(select: AnySelect, query: CollectionQuery, facts: DialectFacts): AnySelect {
  let narrowed = select
  for (const filter of query.filters) {
    const column = columnOf(filter.field)
    const values = filter.values.filter((v) => v !== null).map((v) => valueOf(filter.field, v))
    const matchesNull = filter.values.includes(null)
    const conditions: Expression<SqlBool>[] = []
    if (values.length > 0) conditions.push(sql<SqlBool>`${column} in (${sql.join(values)})`)
    if (matchesNull) conditions.push(sql<SqlBool>`${column} is null`)
    narrowed = narrowed.where(or(conditions))
  }
  const search = query.search
  if (search !== undefined) {
    // Case-insensitive (ASCII) on every dialect, each in its own words (dialect-facts.ts).
    narrowed = narrowed.where(or(search.fields.map((field) => facts.matches(sql.ref(field.column), search.pattern))))
  }
  return narrowed
}

function ordered(select: AnySelect, sort: readonly SortKey[], backwards: boolean): AnySelect {
  let sorted = select
  for (const key of sort) {
    const descending = key.descending !== backwards
    sorted = sorted.orderBy(columnOf(key.field), (order) => {
      const direction = descending ? order.desc() : order.asc()
      // NULL is the smallest value; said aloud for PostgreSQL, whose default is the opposite.
      return key.field.nullable ? (descending ? direction.nullsLast() : direction.nullsFirst()) : direction
    })
  }
  return sorted
}

/** Rows after `values` in the order of `sort`, as index ranges in the order their rows come. */
function keysetTiers(sort: readonly SortKey[], values: readonly KeyValue[], backwards: boolean): Expression<SqlBool>[] {
  const tiers: Expression<SqlBool>[] = []
  for (let i = sort.length - 1; i >= 0; i--) {
    const key = sort[i] as SortKey
    const equalBefore = sort.slice(0, i).map((k, j) => equalTo(k.field, values[j] as KeyValue))
    for (const after of afterValue(key.field, values[i] as KeyValue, key.descending !== backwards)) {
      tiers.push(and([...equalBefore, after]))
    }
  }
  return tiers
}

function afterValue(field: FieldSpec, value: KeyValue, descending: boolean): Expression<SqlBool>[] {
  const column = columnOf(field)
  if (value === null) return descending ? [] : [sql<SqlBool>`${column} is not null`]
  if (!descending) return [sql<SqlBool>`${column} > ${valueOf(field, value)}`]
  const below = sql<SqlBool>`${column} < ${valueOf(field, value)}`
  return field.nullable ? [below, sql<SqlBool>`${column} is null`] : [below]
}

function equalTo(field: FieldSpec, value: KeyValue): Expression<SqlBool> {
  const column = columnOf(field)
  return value === null ? sql<SqlBool>`${column} is null` : sql<SqlBool>`${column} = ${valueOf(field, value)}`
}

function columnOf(field: FieldSpec) {
  return field.caseInsensitive ? sql`lower(${sql.ref(field.column)})` : sql.ref(field.column)
}

/**
 * A value to compare with a column: folded by the database's lower() where the column is (so both
 * sides fold alike); booleans bound as 1/0 (SQLite cannot bind a boolean; PostgreSQL reads '1'/'0').
 */
function valueOf(field: FieldSpec, value: string | number | boolean) {
  const bound = typeof value === 'boolean' ? (value ? 1 : 0) : value
  return field.caseInsensitive ? sql`lower(${bound})` : sql`${bound}`
}

function and(conditions: Expression<SqlBool>[]): Expression<SqlBool> {
  return conditions.length === 0 ? sql<SqlBool>`1 = 1` : sql<SqlBool>`(${sql.join(conditions, sql` and `)})`
}

function or(conditions: Expression<SqlBool>[]): Expression<SqlBool> {
  return conditions.length === 0 ? sql<SqlBool>`1 = 0` : sql<SqlBool>`(${sql.join(conditions, sql` or `)})`
}

async function countRows(select: AnySelect): Promise<number> {
  const row = (await select.select(sql<number | string>`count(*)`.as('count')).executeTakeFirst()) as { count: number | string } | undefined
  return Number(row?.count ?? 0)
}

/** The row's values for the sort keys, as the cursor keeps them. */
function keyValues(row: object, sort: readonly SortKey[]): KeyValue[] {
  return sort.map(({ field }) => {
    const value = (row as Record<string, unknown>)[field.column.split('.').at(-1) as string]
    if (value === null || value === undefined) return null
    if (field.type === 'boolean') return Boolean(value)
    if (value instanceof Date) return value.toISOString()
    return value as KeyValue
  })
}
