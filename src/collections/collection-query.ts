// The collection query language, one implementation for every collection: filters by equality
// (`?role=admin&role=user`) and by operator (`?age[gte]=30&age[lt]=50`), `sort=-age,name`,
// `page`/`limit`, opaque `cursor`s, and `q` search over `fields`. Parses the raw query string
// against a CollectionSpec into a CollectionQuery, or refuses it with BAD_REQUEST naming each bad
// parameter.
//
// Filters, as decided (docs/decisions/0018-one-collection-query-language.md):
// - Fastify's query parser hands keys over literally: `age[gte]` arrives as the key "age[gte]".
//   FILTER_KEY reads `field[op]` strictly; any other key is a field name (an unknown one, brackets
//   and all, "is not a field of this collection", named as given).
// - `field=v` and `field[eq]=v` are one thing: repeated, any of the values. `field[in]=a,b` is any
//   of a comma-separated list (at most MAX_VALUES; a value holding a comma takes the repeated
//   form); given as a list (a repeated `field[in]`, or GraphQL's `in: [...]`), each item is one
//   value, not split. `field[ne]=v`, repeated: none of the values. `gt gte lt lte`: once each.
//   `field[null]=true|false`: once, only on a field that may be missing.
// - Ranges fit integers, instants and free text (compared in code-point order on both stores:
//   PostgreSQL's text columns are `collate "C"`), not booleans or enumerations. eq, ne and in fit
//   every type. E-mail addresses (caseInsensitive) compare lower(column) with lower(value).
// - A missing value (NULL): never within a range (SQL's answer); `ne` matches it (null differs
//   from every value: "is distinct from"); `ne=null` means "is present"; `eq`/`in` with `null`
//   match it.
// - Every parameter is one condition, and all of them must hold (AND), normalized to Filter's
//   operators: eq and in are `in`, ne is `notIn`, null=true is `in [null]`, null=false
//   `notIn [null]`. The fingerprint holds them in a canonical order, so a cursor is bound to the
//   conditions, not to how the query string spelled them.
import { hash } from 'node:crypto'
import { AppError, type ErrorDetail } from '../errors.js'
import { parseInstant } from '../core/instant.js'
import { DEFAULT_PAGE_LIMIT, MAX_OFFSET_ITEMS, MAX_PAGE_LIMIT, pastOffsetWindow } from './pagination.js'
import { RecentlyUsed } from '../recently-used.js'
import type { CollectionSpec, FieldSpec } from './collection-spec.js'
import { badCursor, type Cursor, decodeCursor, type KeyValue } from './cursor.js'

export const RESERVED_PARAMETERS = ['page', 'limit', 'cursor', 'sort', 'q', 'fields', 'select', 'include'] as const
/** `comments.limit`: the size of an embedded list, read with `include` (src/collections/embedding.ts), not a filter. */
export const isEmbeddedListParameter = (name: string): boolean => name.endsWith('.limit')
/** The largest page number at the smallest limit; larger pages at larger limits are refused by MAX_OFFSET_ITEMS. */
export const MAX_PAGE = MAX_OFFSET_ITEMS
const MAX_VALUES = 100
export const MAX_SEARCH_LENGTH = 200

// The values both stores hold: PostgreSQL's `integer`, its `timestamptz` without year 0 (and
// ISO 8601's four-digit years), text without NUL. SQLite would take more, PostgreSQL refuses it
// (a 500), and no row could match it anyway.
const MIN_INTEGER = -2_147_483_648
const MAX_INTEGER = 2_147_483_647

/** How a Filter compares: eq, in and null=true read as `in`; ne and null=false as `notIn`. */
export type FilterOperator = 'in' | 'notIn' | 'gt' | 'gte' | 'lt' | 'lte'

/** One condition on one field; a query's filters must all hold. */
export interface Filter {
  readonly field: FieldSpec
  /**
   * `in`: any of the values, null matching a missing value. `notIn`: none of them; a missing value
   * matches unless null is among them. `gt`, `gte`, `lt`, `lte`: compared with the one value; a
   * missing value never matches.
   */
  readonly operator: FilterOperator
  /** Of the field's type; null (a missing value) only for `in` and `notIn`. */
  readonly values: readonly KeyValue[]
}

/** The operators of `field[op]=value`, in the order refusals list them. */
export const FILTER_OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'null'] as const
export type FilterOperatorName = (typeof FILTER_OPERATORS)[number]

const RANGES = new Set<string>(['gt', 'gte', 'lt', 'lte'])

/** The operators that fit the field: ranges where its values are ordered (not booleans or enumerations), null where it may be missing. */
export function operatorsOf(field: FieldSpec): FilterOperatorName[] {
  return FILTER_OPERATORS.filter((operator) => fits(field, operator))
}

function fits(field: FieldSpec, operator: string): boolean {
  if (RANGES.has(operator)) return field.type !== 'boolean' && field.values === undefined
  return operator === 'null' ? field.nullable === true : true
}

/** `field[op]`: a field name and an operator in brackets, nothing else. */
const FILTER_KEY = /^([^[\]]+)\[([^[\]]*)\]$/

export interface SortKey {
  readonly field: FieldSpec
  readonly descending: boolean
}

export interface Search {
  /** The text searched for, as given. */
  readonly term: string
  /** A LIKE pattern, compared as lower(column) LIKE lower(pattern): the term with %, _ and \ escaped, wrapped in %. */
  readonly pattern: string
  readonly fields: readonly FieldSpec[]
  /** The collection's table (its full-text index is named after it) and id column. */
  readonly table: string
  readonly id: FieldSpec
}

export interface CollectionQuery {
  readonly filters: readonly Filter[]
  /** Total order: the id is always the last key. */
  readonly sort: readonly SortKey[]
  readonly search: Search | undefined
  /** Items per page, capped at MAX_PAGE_LIMIT. */
  readonly limit: number
  readonly mode: 'page' | 'cursor'
  /** 1-based; meaningful in page mode. */
  readonly page: number
  readonly cursor: Cursor | undefined
  /** Binds cursors to this query: the collection, its scope, filters, sort and search. */
  readonly fingerprint: string
  /** Count the matching items too. */
  readonly withTotal: boolean
}

export interface CollectionQueryOptions {
  /** How to page when the query names neither `page` nor `cursor`. */
  readonly defaultMode: 'page' | 'cursor'
  /** The slice of the collection the path selects (`user:3`), part of the fingerprint. */
  readonly scope: string
  /** Whether the answer reports the total (API v1) or not (v2, where counting is the costly part). */
  readonly withTotal: boolean
}

type RawQuery = Readonly<Record<string, unknown>>

export function parseCollectionQuery(spec: CollectionSpec, raw: RawQuery, options: CollectionQueryOptions): CollectionQuery {
  const problems: ErrorDetail[] = []
  const problem = (field: string, message: string) => problems.push({ field, message })

  const filters: Filter[] = []
  for (const [name, value] of Object.entries(raw)) {
    if ((RESERVED_PARAMETERS as readonly string[]).includes(name) || isEmbeddedListParameter(name)) continue
    const key = name.endsWith(']') ? FILTER_KEY.exec(name) : null
    const field = spec.fields.get(key === null ? name : (key[1] as string))
    if (field === undefined) {
      problem(name, 'is not a field of this collection')
    } else if (!field.filterable) {
      problem(name, 'cannot be filtered on; search it with q')
    } else {
      const filter = parseFilter(field, key === null ? 'eq' : (key[2] as string), value, (message) => void problem(name, message))
      if (filter !== undefined) filters.push(filter)
    }
  }

  const page = single(raw, 'page', problem)
  const limit = single(raw, 'limit', problem)
  const cursorText = single(raw, 'cursor', problem)
  const sortText = single(raw, 'sort', problem)
  const q = single(raw, 'q', problem)
  const fieldsText = single(raw, 'fields', problem)

  // Any positive integer is a limit, capped below; only the page is refused past the offset window.
  const limitNumber = limit === undefined ? DEFAULT_PAGE_LIMIT : parsePositiveInteger(limit, MAX_PAGE_LIMIT)
  if (limitNumber === null) problem('limit', 'must be an integer of at least 1')
  const pageNumber = page === undefined ? undefined : parsePositiveInteger(page, Number.MAX_SAFE_INTEGER)
  if (pageNumber === null) problem('page', 'must be an integer of at least 1')
  else if (pageNumber !== undefined && pageNumber * (limitNumber ?? DEFAULT_PAGE_LIMIT) > MAX_OFFSET_ITEMS) {
    problem('page', pastOffsetWindow(limitNumber ?? DEFAULT_PAGE_LIMIT))
  }
  if (page !== undefined && cursorText !== undefined) problem('cursor', 'cannot be combined with page')

  const sort = parseSort(spec, sortText, problem)
  const search = parseSearch(spec, q, fieldsText, problem)

  if (problems.length > 0) throw new AppError('BAD_REQUEST', 'The query parameters are not valid', problems)

  const fingerprint = fingerprintOf(spec, options.scope, filters, sort, search)
  const cursor = cursorText === undefined ? undefined : checkedCursor(decodeCursor(cursorText, fingerprint), sort)
  const mode = cursor !== undefined ? 'cursor' : pageNumber !== undefined && pageNumber !== null ? 'page' : options.defaultMode
  return {
    filters,
    sort,
    search,
    limit: limitNumber ?? DEFAULT_PAGE_LIMIT,
    mode,
    page: pageNumber ?? 1,
    cursor,
    fingerprint,
    withTotal: options.withTotal,
  }
}

const INVALID = Symbol('invalid')
const OPERATOR_NAMES = new Set<string>(FILTER_OPERATORS)

/** One parameter as a Filter, or undefined once `refuse` has said why not. */
function parseFilter(field: FieldSpec, operator: string, value: unknown, refuse: (message: string) => undefined): Filter | undefined {
  const fitting = () => `these fit ${field.name}: ${operatorsOf(field).join(', ')}`
  if (!OPERATOR_NAMES.has(operator)) return refuse(`is not an operator; ${fitting()}`)
  if (!fits(field, operator)) {
    const kind = operator === 'null' ? 'a field that is never missing' : field.type === 'boolean' ? 'a boolean field' : 'an enumeration'
    return refuse(`does not fit ${kind}; ${fitting()}`)
  }
  switch (operator) {
    case 'eq':
    case 'ne': {
      const texts = Array.isArray(value) ? value : [value]
      if (texts.length > MAX_VALUES) return refuse(`may be given at most ${MAX_VALUES} times`)
      return listFilter(field, operator === 'eq' ? 'in' : 'notIn', texts, refuse)
    }
    case 'in': {
      // A list (GraphQL's, or a repeated parameter) holds one value per item; text is split at commas.
      const texts = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [value]
      if (texts.length > MAX_VALUES) return refuse(`may name at most ${MAX_VALUES} values`)
      return listFilter(field, 'in', texts, refuse)
    }
    case 'null':
      if (Array.isArray(value)) return refuse('may be given only once')
      if (value !== 'true' && value !== 'false') return refuse('must be true or false')
      return { field, operator: value === 'true' ? 'in' : 'notIn', values: [null] }
    default: {
      if (Array.isArray(value)) return refuse('may be given only once')
      if (field.nullable && value === 'null') return refuse(`cannot be compared with null; use ${field.name}[null]`)
      const parsed = parseValue(field, value)
      if (parsed === INVALID) return refuse(describeType(field, false))
      return { field, operator: operator as FilterOperator, values: [parsed] }
    }
  }
}

function listFilter(field: FieldSpec, operator: 'in' | 'notIn', texts: readonly unknown[], refuse: (message: string) => undefined): Filter | undefined {
  const values: KeyValue[] = []
  for (const text of texts) {
    const value = parseValue(field, text)
    if (value === INVALID) return refuse(describeType(field))
    values.push(value)
  }
  return { field, operator, values }
}

/** A filter value as the field's type; 'null' matches a missing value of a nullable field. */
function parseValue(field: FieldSpec, value: unknown): KeyValue | typeof INVALID {
  if (typeof value !== 'string') return INVALID
  if (field.nullable && value === 'null') return null
  switch (field.type) {
    case 'integer': {
      const n = /^-?\d+$/.test(value) ? Number(value) : NaN
      return isStorableInteger(n) ? n : INVALID
    }
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : INVALID
    case 'timestamp':
      return parseInstant(value) ?? INVALID
    case 'string':
      if (field.values !== undefined && !field.values.includes(value)) return INVALID
      return isStorableText(value) ? value : INVALID
  }
}

function isStorableInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= MIN_INTEGER && value <= MAX_INTEGER
}

function isStorableText(text: string): boolean {
  return !text.includes('\0')
}

function describeType(field: FieldSpec, orNullable = field.nullable): string {
  const orNull = orNullable ? ' (or null)' : ''
  if (field.values !== undefined) return `must be one of: ${field.values.join(', ')}${orNull}`
  const words = {
    integer: `an integer from ${MIN_INTEGER} to ${MAX_INTEGER}`,
    boolean: 'true or false',
    timestamp: 'an ISO 8601 date-time in the years 0001 to 9999',
    string: 'text without NUL characters',
  }
  return `must be ${words[field.type]}${orNull}`
}

function single(raw: RawQuery, name: string, problem: (field: string, message: string) => void): string | undefined {
  const value = raw[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string') {
    problem(name, 'may be given only once')
    return undefined
  }
  return value
}

/** A decimal integer of at least 1 (however many digits), capped at `max`; null otherwise. */
function parsePositiveInteger(text: string, max: number): number | null {
  if (!/^\d+$/.test(text) || /^0+$/.test(text)) return null
  return Math.min(Number(text), max)
}

function parseSort(spec: CollectionSpec, text: string | undefined, problem: (f: string, m: string) => void): SortKey[] {
  const keys: SortKey[] = []
  for (const part of text === undefined ? [] : text.split(',')) {
    const descending = part.startsWith('-')
    const name = descending ? part.slice(1) : part
    const field = spec.fields.get(name)
    if (field === undefined) problem('sort', `"${name}" is not a field of this collection`)
    else if (!field.sortable) problem('sort', `"${name}" cannot be sorted on`)
    else if (keys.some((key) => key.field === field)) problem('sort', `"${name}" is named twice`)
    else keys.push({ field, descending })
  }
  // The id makes the order total, so pages never skip or repeat a row. It follows the direction
  // of the last key, so one index scanned one way serves the whole order.
  if (!keys.some((key) => key.field === spec.id)) {
    keys.push({ field: spec.id, descending: keys.at(-1)?.descending ?? false })
  }
  return keys
}

function parseSearch(spec: CollectionSpec, q: string | undefined, fieldsText: string | undefined, problem: (f: string, m: string) => void): Search | undefined {
  if (fieldsText !== undefined && (q === undefined || q === '')) problem('fields', 'is only used with q')
  if (q === undefined || q === '') return undefined
  if (q.length > MAX_SEARCH_LENGTH) problem('q', `must be at most ${MAX_SEARCH_LENGTH} characters long`)
  else if (!isStorableText(q)) problem('q', 'must not contain NUL characters')
  let fields = spec.defaultSearchFields
  if (fieldsText !== undefined) {
    // Each field once: a name repeated a thousand times would make a thousand ORs.
    const names = [...new Set(fieldsText.split(','))]
    const named: FieldSpec[] = []
    if (names.length > MAX_VALUES) problem('fields', `may name at most ${MAX_VALUES} fields`)
    for (const name of names.slice(0, MAX_VALUES)) {
      const field = spec.fields.get(name)
      if (field?.searchable) named.push(field)
      else problem('fields', `"${name}" is not a searchable field; these are: ${spec.defaultSearchFields.map((f) => f.name).join(', ')}`)
    }
    fields = named
  }
  const escaped = q.replace(/[\\%_]/g, (c) => `\\${c}`)
  return { term: q, pattern: `%${escaped}%`, fields, table: spec.name, id: spec.id }
}

/**
 * The fingerprints of the queries with no filter and no search, by resource, sort and scope: most
 * lists, and the ones read most (a SHA-256 of the canonical form was 2 µs of a GraphQL `users`).
 * At most 1,000 (each scope is one: a user's posts).
 */
const plainFingerprints = new RecentlyUsed<string, string>(1000)

function fingerprintOf(spec: CollectionSpec, scope: string, filters: Filter[], sort: SortKey[], search: Search | undefined): string {
  if (filters.length > 0 || search !== undefined) return fingerprintOfCanonical(spec, scope, filters, sort, search)
  // Names and sort keys hold no line break: the scope, last, is the only free text.
  const key = `${spec.name}\n${sort.map((k) => `${k.descending ? '-' : ''}${k.field.name}`).join(',')}\n${scope}`
  let fingerprint = plainFingerprints.get(key)
  if (fingerprint === undefined) {
    fingerprint = fingerprintOfCanonical(spec, scope, filters, sort, search)
    plainFingerprints.set(key, fingerprint)
  }
  return fingerprint
}

function fingerprintOfCanonical(spec: CollectionSpec, scope: string, filters: Filter[], sort: SortKey[], search: Search | undefined): string {
  // Canonical: the conditions in one order, each list's values as a set, so that only what is
  // asked counts (`age[gte]=3&age[lt]=9` in either order, `age=null` and `age[null]=true` alike).
  const conditions = filters.map(({ field, operator, values }) => {
    const set = [...new Set(values.map((value) => JSON.stringify(value)))].sort()
    return JSON.stringify([field.name, operator, set])
  })
  const canonical = JSON.stringify([
    spec.name,
    scope,
    [...new Set(conditions)].sort(),
    sort.map((key) => `${key.descending ? '-' : ''}${key.field.name}`),
    search === undefined ? null : [search.pattern, search.fields.map((f) => f.name)],
  ])
  return hash('sha256', canonical, 'base64url').slice(0, 16)
}

/** The cursor's values must fit the sort: one per key, each of the key's type. */
function checkedCursor(cursor: Cursor, sort: readonly SortKey[]): Cursor {
  if (cursor.values.length !== sort.length) throw badCursor()
  sort.forEach((key, i) => {
    if (!fitsType(key.field, cursor.values[i] as KeyValue)) throw badCursor()
  })
  return cursor
}

function fitsType(field: FieldSpec, value: KeyValue): boolean {
  if (value === null) return field.nullable === true
  switch (field.type) {
    case 'integer':
      return isStorableInteger(value)
    case 'boolean':
      return typeof value === 'boolean'
    case 'timestamp':
      return typeof value === 'string' && parseInstant(value) === value
    case 'string':
      return typeof value === 'string' && isStorableText(value)
  }
}
