// Runs a CollectionQuery: filters, search and order on any list query, then one page of it by
// OFFSET (page mode) or by keyset (cursor mode, never OFFSET), with the cursors for the pages
// around it and, when asked, the total.
//
// A page read in one statement carries its total, when asked, in that statement. A page of more
// statements (the tiers, a search's lookup, the count beside an empty page) runs them in one read
// transaction, so a write committed meanwhile cannot show a row twice or hide it.
//
// Order: NULL sorts as the smallest value (first ascending, last descending), as SQLite's indexes
// keep it. A keyset position is split into "tiers" of plain index ranges, taken in order until the
// page is full, instead of one OR of them: every tier is a range an index seeks to, so a page deep
// in the set costs what the first page costs. The filters (operators on the sort keys included)
// are ANDed into every tier: a tier narrows the filtered rows, so no page misses or repeats one.
import { type CompiledQuery, type Expression, type SelectQueryBuilder, type SqlBool, sql, type TableNode } from 'kysely'
import type { Db } from './create-database.js'
import { readRows } from './direct-reads.js'
import { Slot, withValues } from './slots.js'
import { type DialectFacts, dialectFactsOf, MIN_INDEXED_SEARCH, type WindowBuilder } from './dialect-facts.js'
import type { RowPage } from '../collections/collection-page.js'
import type { FieldSpec } from '../collections/collection-spec.js'
import type { CollectionQuery, Filter, SortKey } from '../collections/collection-query.js'
import { MAX_OFFSET_ITEMS, offsetOf } from '../collections/pagination.js'
import { type Cursor, encodeCursor, type KeyValue } from '../collections/cursor.js'
import { RecentlyUsed } from '../recently-used.js'

/**
 * A search the full-text index cannot narrow to a few rows (a term shorter than
 * MIN_INDEXED_SEARCH characters, or one in more than MAX_INDEXED_CANDIDATES rows) reads at most
 * this many rows: the newest the path and filters select. About 10 ms on SQLite.
 */
export const MAX_SEARCHED_ROWS = 10_000
/** The most rows a full-text index lookup may name for the search to use them (a few ms to read). */
export const MAX_INDEXED_CANDIDATES = 1_000
/**
 * `total` counts at most this many rows (then says this many, and `totalCapped`): as many as
 * pages by offset reach, and a count that stops there costs a few milliseconds whatever the table.
 */
export const MAX_COUNTED_TOTAL = MAX_OFFSET_ITEMS

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the list query's tables and joins vary by caller
export type AnySelect = SelectQueryBuilder<any, any, any>

/**
 * Where a page's rows come from: FROM, joins and the WHERE of the path's scope, on the executor
 * given; no selection, order or limit. A scope under a parent the path names (the user of
 * /users/{id}/posts) is given that parent's id beside the executor, where a page compiled once
 * gives the slot it goes in (PARENT_SLOT): `from` must put it where a value goes, nowhere else.
 */
export type ListScope = { from: (db: Db) => AnySelect; parentId?: undefined } | { from: (db: Db, parentId: number) => AnySelect; parentId: number }

export type ListPageOptions<Row> = ListScope & {
  /** Adds the selection of the rows to return. */
  select: (query: AnySelect) => SelectQueryBuilder<never, never, Row>
  query: CollectionQuery
  /**
   * A name for what `from` and `select` build, given to no other pair that builds other SQL. With
   * it, the first page of a query with no search is built and compiled once per shape (the name,
   * the query's sort and limit, its filters' fields, operators and values (how many, which are
   * null), where its total is read) instead of on every request, the filters' values put in each
   * time: Kysely's builder and compiler were 4-9 µs of a page with no filter, and a tenth of the
   * process's CPU for a filtered page with its total on PostgreSQL. A parent's id is put in the
   * same way; a statement with another value of its own is built every time all the same.
   */
  shape?: string
}

export async function listPage<Row extends object>(db: Db, options: ListPageOptions<Row>): Promise<RowPage<Row>> {
  const { query } = options
  // A page read in one statement (by offset, or the first by keyset) needs no transaction: its
  // total, when asked, is counted in that statement. An empty page has no row to carry the total:
  // it is read again with its count beside it, in one transaction.
  const oneRead = query.mode === 'page' || query.cursor === undefined
  if (oneRead && !query.withTotal) return readPage(db, options, 'none')
  if (oneRead && query.search === undefined) {
    const page = await readPage(db, options, 'in the rows')
    if (page.rows.length > 0) return page
  }
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute((trx) => readPage(trx, options, query.withTotal ? 'a statement' : 'none'))
}

/** Where a page's total is counted: not at all, in a statement of its own, or in a column of the page's rows. */
type TotalRead = 'none' | 'a statement' | 'in the rows'

/** The column that carries the total beside each row of a page read with it, taken off before the rows are returned. */
const TOTAL_COLUMN = 'threadline_page_total'

async function readPage<Row extends object>(db: Db, options: ListPageOptions<Row>, totalRead: TotalRead): Promise<RowPage<Row>> {
  const { query } = options
  const facts = dialectFactsOf(db)
  const from = scopeOf(options)
  const searching = await searchCondition(db, from, query, facts)
  // `slotted`: the parent's id and the filters' values as slots, for a statement compiled once (compiledOnce).
  const matching = (slotted = false) => narrow(from(db, slotted), query, facts, searching?.condition, slotted)
  const counting = (slotted = false) => narrow(from(db, slotted), query, facts, searching?.counted, slotted)
  let counted = totalRead === 'a statement' ? await countRows(db, counting()) : undefined
  const statement = (rows: AnySelect, slotted: boolean): CompiledQuery => {
    const selected = options.select(rows) as AnySelect
    return (totalRead === 'in the rows' ? selected.select(boundedCount(counting(slotted)).as(TOTAL_COLUMN)) : selected).compile()
  }
  /** The rows `rows()` selects; `first`: the page is the query's first, read in one statement. */
  const read = async (rows: (slotted: boolean) => AnySelect, first: boolean): Promise<Row[]> => {
    const shape = first ? firstPageShape(db, options, totalRead) : undefined
    const { sql: text, parameters } =
      shape === undefined ? statement(rows(false), false) : compiledOnce(db, shape, { query, parentId: options.parentId }, () => statement(rows(true), true))
    const found = await readRows<Row>(db, text, parameters)
    if (totalRead === 'in the rows') counted = takeTotal(found)
    return found
  }
  // Asked once the rows are read: the total may come with them.
  const totals = () => ({
    total: counted === undefined ? undefined : Math.min(counted, MAX_COUNTED_TOTAL),
    totalCapped: counted !== undefined && counted > MAX_COUNTED_TOTAL,
  })
  const cursorOf = (values: KeyValue[] | undefined, direction: Cursor['direction']) =>
    values === undefined ? null : encodeCursor({ direction, values }, query.fingerprint)

  if (query.mode === 'page') {
    const offset = offsetOf(query.page, query.limit)
    const rows = await read((slotted) => pageRows(db, from, query, matching(slotted), offset), offset === 0)
    const hasMore = rows.length > query.limit
    if (hasMore) rows.pop()
    const last = rows.at(-1)
    return {
      rows,
      hasMore,
      hasPrevious: query.page > 1,
      ...totals(),
      nextCursor: hasMore && last ? cursorOf(keyValues(last, query.sort), 'after') : null,
      prevCursor: null,
    }
  }

  const backwards = query.cursor?.direction === 'before'
  const rows = await readByKeyset(db, from, read, query, backwards, searching?.condition)
  const hasBeyond = rows.length > query.limit
  if (hasBeyond) rows.pop()
  const valuesOf = (row: Row | undefined) => (row === undefined ? undefined : keyValues(row, query.sort))
  // In reading order: where the next read goes on from (a search window read to its edge without
  // filling the page ends the page there, matches may lie beyond it), and where this page starts.
  const readEnd = hasBeyond ? valuesOf(rows.at(-1)) : searching?.edge
  const readStart = query.cursor === undefined ? undefined : (valuesOf(rows.at(0)) ?? searching?.edge)
  if (backwards) rows.reverse()
  const next = backwards ? readStart : readEnd
  const previous = backwards ? readEnd : readStart
  return {
    rows,
    hasMore: next !== undefined,
    hasPrevious: previous !== undefined,
    ...totals(),
    nextCursor: cursorOf(next, 'after'),
    prevCursor: cursorOf(previous, 'before'),
  }
}

/**
 * The rows of `from` the query's filters and search select, with nothing selected, ordered or
 * limited: what an aggregate reads (src/db/aggregate-page.ts). A search reads as a page's `total`
 * counts it: bounded, the same whatever the page.
 */
export async function matchingRows(db: Db, from: (db: Db) => AnySelect, query: CollectionQuery): Promise<AnySelect> {
  const facts = dialectFactsOf(db)
  const searching = await searchCondition(db, from, query, facts)
  return narrow(from(db), query, facts, searching?.counted)
}

/** A page's rows as a scope builds them, its parent's id in place or, `slotted`, in its slot. */
type Scoped = (db: Db, slotted?: boolean) => AnySelect

function scopeOf(scope: ListScope): Scoped {
  if (scope.parentId === undefined) return scope.from
  const { from, parentId } = scope
  return (db, slotted = false) => from(db, slotted ? (PARENT_SLOT as unknown as number) : parentId)
}

/**
 * The page at `offset` of the matching rows, limit+1 of them. The first page is read as it is
 * ordered. Past it, the offset is skipped over the sort keys and ids alone, then the page's rows
 * read by id: a sort no index serves sorts narrow records instead of whole rows (page 100 of 100
 * under sort=-age,name on 200,000 users: about half the time); at offset 0 there is nothing to
 * skip, and the extra lookup by id cost the first page more than the narrow sort saved (PostgreSQL
 * and SQLite alike, whether an index serves the sort or not).
 */
function pageRows(db: Db, from: Scoped, query: CollectionQuery, matching: AnySelect, offset: number): AnySelect {
  const wanted = literal(query.limit + 1)
  if (offset === 0) return ordered(matching, query.sort, false).limit(wanted)
  const id = sql.ref((query.sort.at(-1) as SortKey).field.column)
  const pageIds = ordered(matching, query.sort, false).select(id.as('page_id')).limit(wanted).offset(offset)
  return ordered(from(db).where(sql<SqlBool>`${id} in (${pageIds})`), query.sort, false)
}

/** Up to limit+1 rows past the cursor (or from the start), tier by tier. */
async function readByKeyset<Row>(
  db: Db,
  from: Scoped,
  read: (rows: (slotted: boolean) => AnySelect, first: boolean) => Promise<Row[]>,
  query: CollectionQuery,
  backwards: boolean,
  searching: Expression<SqlBool> | undefined,
): Promise<Row[]> {
  const wanted = query.limit + 1
  const base = (slotted = false) => ordered(narrow(from(db, slotted), query, dialectFactsOf(db), searching, slotted), query.sort, backwards)
  if (query.cursor === undefined) return await read((slotted) => base(slotted).limit(literal(wanted)), true)
  const rows: Row[] = []
  for (const tier of keysetTiers(query.sort, query.cursor.values, backwards)) {
    const limit = literal(wanted - rows.length)
    rows.push(...(await read(() => base().where(tier).limit(limit), false)))
    if (rows.length >= wanted) break
  }
  return rows
}

/** What a first page compiled once is run with: the request's query, and the parent the path names. */
interface PageValues {
  readonly query: CollectionQuery
  readonly parentId: number | undefined
}

/**
 * Where a filter's value goes among the parameters of a first page compiled once: the value of
 * each request's query at the same place (the same filter, the same value), bound as valueOf binds it.
 */
const filterSlot = (filter: number, value: number) =>
  new Slot<PageValues>(({ query }) => bindable(query.filters[filter]?.values[value] as string | number | boolean))

/** Where the parent's id goes among the parameters of a first page compiled once. */
const PARENT_SLOT = new Slot<PageValues>(({ parentId }) => parentId)

/**
 * The first pages compiled once, by database handle and shape (firstPageShape). A statement with a
 * value of its own, one that is neither a filter's slot nor the parent's, is kept as null, and built each time.
 */
const firstPages = new WeakMap<Db, RecentlyUsed<string, CompiledQuery | null>>()

/** The most first-page shapes a handle keeps (a shape is a few hundred bytes of SQL). */
const MAX_FIRST_PAGES = 200

/**
 * The key a first page is compiled once under, or undefined when it is built each time: no shape
 * given, a search (what it reads depends on the term's rows: searchCondition), or a transaction (a
 * handle of its own, gone when it ends). The sort is spelt out: a connection read from its end
 * reverses it and keeps the query's fingerprint. Each filter is its field, its operator and which
 * of its values are null (a null is written into the SQL, the others are parameters).
 */
function firstPageShape(db: Db, options: ListPageOptions<object>, totalRead: TotalRead): string | undefined {
  const { query, shape } = options
  if (shape === undefined || query.search !== undefined || db.isTransaction) return undefined
  let key = `${shape}|${query.limit}|${totalRead}|`
  for (const sortKey of query.sort) key += `${sortKey.descending ? '-' : ''}${sortKey.field.name},`
  for (const filter of query.filters) {
    key += `|${filter.field.name} ${filter.operator} `
    for (const value of filter.values) key += value === null ? '0' : '1'
  }
  return key
}

/** The statement kept for `shape`, with the parent's id and the query's filter values in their slots; compiled by `compile` when none is kept. */
function compiledOnce(db: Db, shape: string, values: PageValues, compile: () => CompiledQuery): Pick<CompiledQuery, 'sql' | 'parameters'> {
  let shapes = firstPages.get(db)
  if (shapes === undefined) {
    shapes = new RecentlyUsed(MAX_FIRST_PAGES)
    firstPages.set(db, shapes)
  }
  let compiled = shapes.get(shape)
  if (compiled === undefined) {
    compiled = compile()
    shapes.set(shape, compiled.parameters.every((parameter) => parameter instanceof Slot) ? compiled : null)
  } else if (compiled === null) compiled = compile()
  if (compiled.parameters.length === 0) return compiled
  return { sql: compiled.sql, parameters: withValues(compiled.parameters, values) }
}

/**
 * A page's bound written into its SQL text rather than bound as a parameter. PostgreSQL plans a
 * named statement once for all runs only when that generic plan costs no more than the plans made
 * for each run's values, and it prices an unknown LIMIT as a tenth of the table: `limit $1` was
 * planned again on every run (and a first page's `offset 0` the same way, so it is left out). A
 * few texts more (one per page size) for a plan made once per connection.
 */
const literal = (n: number) => sql.lit(n)

/** The query's filters, and the search's condition when it has one; `slotted`: the filters' values as slots (filterSlot). */
function narrow(select: AnySelect, query: CollectionQuery, facts: DialectFacts, searching?: Expression<SqlBool>, slotted = false): AnySelect {
  let narrowed = select
  query.filters.forEach((filter, index) => {
    narrowed = narrowed.where(conditionOf(filter, slotted ? (value) => filterSlot(index, value) : undefined))
  })
  return searching === undefined ? narrowed : narrowed.where(searching)
}

const COMPARISONS = { gt: sql`>`, gte: sql`>=`, lt: sql`<`, lte: sql`<=` }

/**
 * One filter as SQL, on the column its FieldSpec names, with the values bound (or, given `slotOf`,
 * the slot of each value). A missing value (NULL) never falls within a range; it differs from every
 * value, so `notIn` matches it unless null is among the values (`is distinct from`, spelled so that
 * an index serves it).
 */
function conditionOf(filter: Filter, slotOf?: (value: number) => Slot<PageValues>): Expression<SqlBool> {
  const { field, operator, values } = filter
  const column = columnOf(field)
  const bound = (index: number) => slotOf?.(index) ?? bindable(values[index] as string | number | boolean)
  if (operator !== 'in' && operator !== 'notIn') return sql<SqlBool>`${column} ${COMPARISONS[operator]} ${valueOf(field, bound(0))}`
  const present: Expression<unknown>[] = []
  values.forEach((value, index) => {
    if (value !== null) present.push(valueOf(field, bound(index)))
  })
  const missing = values.includes(null)
  if (operator === 'in') {
    const conditions: Expression<SqlBool>[] = []
    if (present.length > 0) conditions.push(sql<SqlBool>`${column} in (${sql.join(present)})`)
    if (missing) conditions.push(sql<SqlBool>`${column} is null`)
    return or(conditions)
  }
  const differing = present.length === 0 ? [] : [sql<SqlBool>`${column} not in (${sql.join(present)})`]
  if (missing) return and([...differing, sql<SqlBool>`${column} is not null`])
  return field.nullable && differing.length > 0 ? or([...differing, sql<SqlBool>`${column} is null`]) : and(differing)
}

/** A search as SQL: the rows a page reads, the rows `total` counts, and where a bounded read stops. */
interface SearchCondition {
  readonly condition: Expression<SqlBool>
  /** The same on every page of a list, so that `total` does not move with the cursor. */
  readonly counted: Expression<SqlBool>
  /** The sort values of the last row the condition lets the page read, when rows lie beyond it: a page it does not fill ends there. */
  readonly edge?: KeyValue[]
}

/**
 * The search's condition, chosen so that it reads a bounded number of rows:
 * - a term the full-text index names at most MAX_INDEXED_CANDIDATES rows for: those rows, each
 *   matched as `matches` says (the index may name a few more: it folds case beyond ASCII);
 * - where the dialect's `matches` uses its index itself (PostgreSQL): `matches`;
 * - otherwise (a term shorter than a trigram, or one so common the index names more rows than
 *   that): `matches` over MAX_SEARCHED_ROWS rows that the path and filters select. Sorted by id
 *   alone, a cursor page reads the MAX_SEARCHED_ROWS rows past its cursor (from the start of the
 *   order without one) and ends at the last of them if it does not fill, so that the next page
 *   reads on from there and every match is reached; other pages read the newest MAX_SEARCHED_ROWS.
 * Queried once per page, in the page's transaction; the rows it names are bound to every statement.
 */
async function searchCondition(db: Db, from: (db: Db) => AnySelect, query: CollectionQuery, facts: DialectFacts): Promise<SearchCondition | undefined> {
  const search = query.search
  if (search === undefined) return undefined
  const everywhere = (condition: Expression<SqlBool>): SearchCondition => ({ condition, counted: condition })
  // Case-insensitive (ASCII) on every dialect, each in its own words (dialect-facts.ts).
  const matching = or(search.fields.map((field) => facts.matches(sql.ref(field.column), search.pattern)))
  const id = sql.ref(search.id.column)
  if ([...search.term].length >= MIN_INDEXED_SEARCH) {
    const columns = search.fields.map((field) => field.column.split('.').at(-1) as string)
    const candidates = facts.searchCandidates({ table: search.table, columns, term: search.term }, MAX_INDEXED_CANDIDATES + 1)
    if (candidates === undefined) return everywhere(matching)
    const ids = (await candidates.execute(db)).rows.map((row) => row.id)
    if (ids.length === 0) return everywhere(sql<SqlBool>`1 = 0`)
    if (ids.length <= MAX_INDEXED_CANDIDATES) return everywhere(and([sql<SqlBool>`${id} in (${sql.join(ids)})`, matching]))
  }
  const selected = () => narrow(from(db), query, facts).clearSelect().select(id.as('id'))
  const newest = selected()
    .orderBy(id, 'desc')
    .limit(1)
    .offset(MAX_SEARCHED_ROWS - 1)
  const inNewest = and([sql<SqlBool>`${id} >= coalesce((${newest}), 0)`, matching])
  const key = query.sort[0] as SortKey
  if (query.mode === 'page' || query.sort.length > 1 || key.field !== search.id) return everywhere(inNewest)
  const descending = key.descending !== (query.cursor?.direction === 'before')
  const past = query.cursor?.values[0]
  const ahead = past === undefined ? selected() : selected().where(sql<SqlBool>`${id} ${descending ? sql`<` : sql`>`} ${past}`)
  const last = await ahead
    .orderBy(id, descending ? 'desc' : 'asc')
    .limit(1)
    .offset(MAX_SEARCHED_ROWS - 1)
    .executeTakeFirst()
  if (last === undefined) return { condition: matching, counted: inNewest }
  const edge = Number(last.id)
  return { condition: and([sql<SqlBool>`${id} ${descending ? sql`>=` : sql`<=`} ${edge}`, matching]), counted: inNewest, edge: [edge] }
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
  if (!descending) return [sql<SqlBool>`${column} > ${valueOf(field, bindable(value))}`]
  const below = sql<SqlBool>`${column} < ${valueOf(field, bindable(value))}`
  return field.nullable ? [below, sql<SqlBool>`${column} is null`] : [below]
}

function equalTo(field: FieldSpec, value: KeyValue): Expression<SqlBool> {
  const column = columnOf(field)
  return value === null ? sql<SqlBool>`${column} is null` : sql<SqlBool>`${column} = ${valueOf(field, bindable(value))}`
}

function columnOf(field: FieldSpec) {
  return field.caseInsensitive ? sql`lower(${sql.ref(field.column)})` : sql.ref(field.column)
}

/** A value as it is bound: booleans as 1/0 (SQLite cannot bind a boolean; PostgreSQL reads '1'/'0'). */
const bindable = (value: string | number | boolean): string | number => (typeof value === 'boolean' ? (value ? 1 : 0) : value)

/** A bound value (or its slot) to compare with a column: folded by the database's lower() where the column is, so both sides fold alike. */
function valueOf(field: FieldSpec, bound: unknown) {
  return field.caseInsensitive ? sql`lower(${bound})` : sql`${bound}`
}

function and(conditions: Expression<SqlBool>[]): Expression<SqlBool> {
  return conditions.length === 0 ? sql<SqlBool>`1 = 1` : sql<SqlBool>`(${sql.join(conditions, sql` and `)})`
}

function or(conditions: Expression<SqlBool>[]): Expression<SqlBool> {
  return conditions.length === 0 ? sql<SqlBool>`1 = 0` : sql<SqlBool>`(${sql.join(conditions, sql` or `)})`
}

/** Which children of each parent a window reads: their table, the column naming their parent, and what narrows them. */
export interface PerParentWindow {
  /** The children's table (`comments`) and the column that names their parent (`post_id`). */
  readonly table: string
  readonly parentColumn: string
  /** Narrows the children, aliased `child` (a join and a where, for a visibility rule). */
  readonly narrow?: (children: AnySelect) => AnySelect
  readonly order?: 'asc' | 'desc' | undefined
  readonly limit: number
  readonly offset: number
}

/**
 * The same window of each parent's children, in one statement: for each row `parents` selects
 * (aliased `parent`), the window by the (parent column, id) index (its ids, then those children by
 * key on SQLite; its rows on PostgreSQL: the dialect's joinWindow), ordered by id as the window
 * is. The cost follows the window, never the size of a parent's whole list. The caller selects and
 * filters the parents.
 */
export function listWindowPerParent(
  db: Db,
  parents: AnySelect,
  { table, parentColumn, narrow = (children) => children, order = 'asc', limit, offset }: PerParentWindow,
): AnySelect {
  const windowIds = (eb: WindowBuilder) =>
    narrow(eb.selectFrom(`${table} as child`).select('child.id').whereRef(`child.${parentColumn}`, '=', 'parent.id'))
      .orderBy('child.id', order)
      .limit(limit)
      .offset(offset)
  return dialectFactsOf(db).joinWindow(parents, table, windowIds).orderBy(`${table}.id`, order)
}

/**
 * For each row `parents` selects (aliased `parent`), the rows `children` selects for it, each
 * counted up to `atMost`, in one statement: by parent id. (count is a bigint, text, on PostgreSQL.)
 */
export async function countPerParent(parents: AnySelect, children: (eb: WindowBuilder) => AnySelect, atMost: number): Promise<Map<number, number>> {
  const rows = (await parents
    .select('parent.id as parent_id')
    .select((eb) => boundedCount(children(eb), atMost).as('count'))
    .execute()) as { parent_id: number; count: number | string }[]
  return new Map(rows.map((row) => [Number(row.parent_id), Number(row.count)]))
}

/** The rows of `select`, counted up to one more than MAX_COUNTED_TOTAL: bounded work, whatever the table's size. */
export async function countRows(db: Db, select: AnySelect): Promise<number> {
  const row = await db.selectNoFrom(boundedCount(select).as('count')).executeTakeFirst()
  return Number(row?.count ?? 0)
}

/**
 * The count of `select`'s rows up to `atMost`, as a scalar subquery (a bigint, text, on
 * PostgreSQL). A count that stops at a bound reads its rows through a LIMIT, which costs SQLite
 * twice what a plain count costs a row (9,999 users of 10,000: 540 against 260 µs). So when
 * `select` reads one table alone, no join, and that table's ids span fewer than `atMost` values,
 * the table cannot hold more rows than the bound and they are counted plainly. The span is read
 * from the two ends of the id index, and each store runs only the count it chooses.
 */
function boundedCount(select: AnySelect, atMost = MAX_COUNTED_TOTAL + 1) {
  const counted = select.select(sql<number>`1`.as('one'))
  const bounded = sql<number | string>`(select count(*) from (${counted.limit(literal(atMost))}) as counted)`
  const table = soleTableOf(select)
  if (table === undefined) return bounded
  // Each end alone: SQLite seeks an index's end only for a query of one min() or max().
  const end = (which: 'min' | 'max') => sql`(select ${sql.raw(which)}(id) from ${sql.table(table)})`
  return sql<
    number | string
  >`(case when ${end('max')} - ${end('min')} < ${literal(atMost)} then (select count(*) from (${counted}) as counted) else ${bounded} end)`
}

/**
 * The table `select` reads when it reads one by its own name and joins nothing: each of its rows
 * is one row of that table, whose key is `id` (an integer, as every table of the service has).
 */
function soleTableOf(select: AnySelect): string | undefined {
  const node = select.toOperationNode()
  const [table, ...others] = node.from?.froms ?? []
  if (node.joins !== undefined || table?.kind !== 'TableNode' || others.length > 0) return undefined
  return (table as TableNode).table.identifier.name
}

/** The total a page's rows carry in TOTAL_COLUMN (undefined without a row), taken off each row. */
function takeTotal(rows: object[]): number | undefined {
  const total = (rows[0] as Record<string, unknown> | undefined)?.[TOTAL_COLUMN]
  for (const row of rows) delete (row as Record<string, unknown>)[TOTAL_COLUMN]
  return total === undefined ? undefined : Number(total)
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
