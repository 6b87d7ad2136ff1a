// Aggregates over a collection, for any transport: PostgREST's `select=` words read into an
// Aggregation (docs/rest.md, Aggregates; docs/decisions/0063-aggregates.md). A `select` that names
// a function (`count()`, `age.avg()`) asks for groups instead of items: the plain fields named
// beside the functions are what the rows are grouped by, each name may be renamed with `alias:`,
// and `sort` orders the groups by the names the answer shows. The collection's filters and search
// narrow the rows as they narrow a list, under the same rights (the service's `from`).
//
// Bounded and metered: an aggregate reads at most MAX_AGGREGATED_ROWS matching rows and answers at
// most MAX_AGGREGATE_GROUPS groups (past either, BAD_REQUEST naming `select`), and costs the caller
// a rate-limit point per AGGREGATED_ROWS_PER_POINT rows it read past its request's own.
import { AppError, type ErrorDetail } from '../errors.js'
import { type CollectionQuery, isEmbeddedListParameter, parseCollectionQuery } from './collection-query.js'
import type { CollectionSpec, FieldSpec } from './collection-spec.js'
import { MAX_REPRESENTATION_NAMES } from './embedding.js'

/** The most groups an aggregate answers: past it, refused (filter, or group by fewer fields). */
export const MAX_AGGREGATE_GROUPS = 1_000
/** The most rows an aggregate reads, as many as a page's `total` counts: past it, refused (filter the rows). A few ms on SQLite. */
export const MAX_AGGREGATED_ROWS = 10_000
/** Rows an aggregate reads per rate-limit point past its request's first: the rate of embedding and of GraphQL's cost. */
export const AGGREGATED_ROWS_PER_POINT = 1_000

export const AGGREGATE_FUNCTIONS = ['count', 'sum', 'avg', 'min', 'max'] as const
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number]

/** A field the rows are grouped by, shown as `name` (its alias, or its own name). */
export interface GroupKey {
  readonly name: string
  readonly field: FieldSpec
}

/** A function over the rows of each group, shown as `name` (its alias, or the function's name, as PostgREST does). */
export interface Aggregate {
  readonly name: string
  readonly function: AggregateFunction
  /** Undefined for `count()`: the rows themselves. */
  readonly field: FieldSpec | undefined
}

/** An order of the groups, by a name the answer shows. */
export interface GroupOrder {
  readonly name: string
  readonly descending: boolean
}

export interface Aggregation {
  readonly groupBy: readonly GroupKey[]
  readonly aggregates: readonly Aggregate[]
  /** The sort asked for, then every group key not in it, ascending: a total order of the groups. */
  readonly order: readonly GroupOrder[]
}

/** An aggregate a request asks for: the rows (the list's filters and search) and what to compute over them. */
export interface AggregateQuery {
  readonly query: CollectionQuery
  readonly aggregation: Aggregation
}

/** One group: its keys and aggregates, by the names the answer shows. */
export type AggregateGroup = Readonly<Record<string, string | number | boolean | null>>

export interface AggregateResult {
  readonly groups: readonly AggregateGroup[]
  /** The names of the group keys, in the order `select` named them. */
  readonly groupedBy: readonly string[]
  /** The rows the aggregate read (matched by the filters): what it was charged for. */
  readonly rows: number
}

/** Takes what reading `rows` rows costs from the caller before the answer is given (the transport's charge), or refuses. */
export type AggregatePayment = (rows: number) => Promise<void>

/** The rate-limit points reading `rows` rows takes beyond the request's own: one per AGGREGATED_ROWS_PER_POINT. */
export const aggregatePoints = (rows: number): number => Math.floor(rows / AGGREGATED_ROWS_PER_POINT)

/** Which fields take which functions: count any field; min and max numbers and instants; sum and avg numbers. */
export function fitsFunction(fn: AggregateFunction, field: FieldSpec): boolean {
  if (fn === 'count') return true
  if (fn === 'min' || fn === 'max') return field.type === 'integer' || field.type === 'timestamp'
  return field.type === 'integer'
}

/** The fields the rows may be grouped by: those a list may filter on (long free text is searched, not compared). */
export const groupableFields = (spec: CollectionSpec): FieldSpec[] => [...spec.fields.values()].filter((field) => field.filterable)

/** Whether `select` names an aggregate function (`count()`, `age.avg()`): the answer is then groups, not items. */
export function asksForAggregate(select: unknown): boolean {
  const parts = Array.isArray(select) ? select : [select]
  return parts.some((part) => typeof part === 'string' && part.includes('('))
}

/** The parameters of a list that an aggregate has no use for: refused with it, rather than ignored. */
const NOT_WITH_AGGREGATES: ReadonlySet<string> = new Set(['page', 'limit', 'cursor', 'include'])
const isRefusedWithAggregates = (name: string): boolean => NOT_WITH_AGGREGATES.has(name) || isEmbeddedListParameter(name)

type RawQuery = Readonly<Record<string, unknown>>

/** `alias:` then a field, `field.fn()` or `fn()`. Names are letters, digits and underscores. */
const ITEM = /^(?:([A-Za-z_]\w*):)?(?:([A-Za-z_]\w*)(?:\.(\w+)\(\))?|(\w+)\(\))$/

/**
 * The aggregate a query string asks for (asksForAggregate(raw.select) holds), checked against the
 * collection: BAD_REQUEST with one detail per problem, each naming its parameter. `scope`: the
 * slice the path selects, as parseCollectionQuery takes it.
 */
export function parseAggregateQuery(spec: CollectionSpec, raw: RawQuery, scope: string): AggregateQuery {
  const problems: ErrorDetail[] = []
  const problem = (field: string, message: string) => void problems.push({ field, message })
  for (const name of Object.keys(raw)) if (isRefusedWithAggregates(name)) problem(name, 'does not apply to an aggregate')
  const aggregation = parseAggregation(spec, raw.select, raw.sort, problem)
  // The filters and search, read as a list reads them (its own refusals joined to these).
  const rows = Object.fromEntries(Object.entries(raw).filter(([name]) => name !== 'select' && name !== 'sort' && !isRefusedWithAggregates(name)))
  let query: CollectionQuery | undefined
  try {
    query = parseCollectionQuery(spec, rows, { defaultMode: 'page', withTotal: false, scope })
  } catch (error) {
    if (!(error instanceof AppError) || error.details === undefined) throw error
    problems.push(...error.details)
  }
  if (problems.length > 0 || query === undefined || aggregation === undefined) throw new AppError('BAD_REQUEST', 'The query parameters are not valid', problems)
  return { query, aggregation }
}

function parseAggregation(spec: CollectionSpec, select: unknown, sort: unknown, problem: (field: string, message: string) => void): Aggregation | undefined {
  const parts = (Array.isArray(select) ? select : [select]).flatMap((part) => (typeof part === 'string' ? part.split(',') : ['']))
  if (parts.length > MAX_REPRESENTATION_NAMES) return void problem('select', `may name at most ${MAX_REPRESENTATION_NAMES} names`)
  const groupBy: GroupKey[] = []
  const aggregates: Aggregate[] = []
  const fieldsOf = (fits: (field: FieldSpec) => boolean) =>
    [...spec.fields.values()]
      .filter(fits)
      .map((field) => field.name)
      .join(', ')
  for (const text of parts.map((part) => part.trim())) {
    const match = ITEM.exec(text)
    if (match === null) {
      problem('select', `\`${text}\` is not a field, \`field.function()\` or \`count()\` (each may be renamed: \`alias:count()\`)`)
      continue
    }
    const [, alias, fieldName, fieldFunction, bareFunction] = match
    const fn = fieldFunction ?? bareFunction
    const field = fieldName === undefined ? undefined : spec.fields.get(fieldName)
    if (fieldName !== undefined && field === undefined) {
      problem('select', `\`${fieldName}\` is not a field of this collection; these are: ${[...spec.fields.keys()].join(', ')}`)
    } else if (fn === undefined) {
      if (field?.filterable === true) groupBy.push({ name: alias ?? field.name, field })
      else problem('select', `\`${fieldName}\` cannot be grouped by; these can: ${fieldsOf((f) => f.filterable)}`)
    } else if (!(AGGREGATE_FUNCTIONS as readonly string[]).includes(fn)) {
      problem('select', `\`${fn}()\` is not an aggregate function; these are: ${AGGREGATE_FUNCTIONS.join(', ')}`)
    } else if (field === undefined && fn !== 'count') {
      problem('select', `\`${fn}()\` needs a field: \`field.${fn}()\``)
    } else if (field !== undefined && !fitsFunction(fn as AggregateFunction, field)) {
      problem(
        'select',
        `\`${field.name}.${fn}()\`: ${fn} takes ${fn === 'min' || fn === 'max' ? 'a number or a date-time' : 'a number'}; these fit: ${fieldsOf((f) => fitsFunction(fn as AggregateFunction, f))}`,
      )
    } else {
      aggregates.push({ name: alias ?? fn, function: fn as AggregateFunction, field })
    }
  }
  const names = [...groupBy, ...aggregates].map((item) => item.name)
  const twice = [...new Set(names.filter((name, at) => names.indexOf(name) !== at))]
  if (twice.length > 0) problem('select', `names ${twice.map((name) => `\`${name}\``).join(', ')} twice; rename with \`alias:\` (\`oldest:createdAt.min()\`)`)
  const order = parseGroupOrder(sort, names, problem)
  if (order === undefined) return undefined
  for (const key of groupBy) if (!order.some((o) => o.name === key.name)) order.push({ name: key.name, descending: false })
  return { groupBy, aggregates, order }
}

/** `sort=-count,userId`: names the answer shows, each once; undefined once refused. */
function parseGroupOrder(sort: unknown, names: readonly string[], problem: (field: string, message: string) => void): GroupOrder[] | undefined {
  if (sort === undefined) return []
  if (typeof sort !== 'string') return void problem('sort', 'may be given only once')
  const order: GroupOrder[] = []
  for (const part of sort.split(',')) {
    const descending = part.startsWith('-')
    const name = descending ? part.slice(1) : part
    if (!names.includes(name)) problem('sort', `\`${name}\` is not a name of this aggregate's answer; these are: ${names.join(', ')}`)
    else if (order.some((o) => o.name === name)) problem('sort', `\`${name}\` is named twice`)
    else order.push({ name, descending })
  }
  return order
}

/** Refuses an aggregate past its bounds, after it has been charged for the rows it read. */
export function checkAggregateBounds(rows: number, groups: number): void {
  if (rows > MAX_AGGREGATED_ROWS) {
    throw new AppError('BAD_REQUEST', 'The aggregate matches too many rows', [
      { field: 'select', message: `an aggregate reads at most ${MAX_AGGREGATED_ROWS} rows and more match; narrow them with filters` },
    ])
  }
  if (groups > MAX_AGGREGATE_GROUPS) {
    throw new AppError('BAD_REQUEST', 'The aggregate has too many groups', [
      { field: 'select', message: `an aggregate answers at most ${MAX_AGGREGATE_GROUPS} groups and there are more; filter the rows or group by fewer fields` },
    ])
  }
}
