// The REST collection query language as GraphQL arguments: `users(filter: {role: [admin]},
// where: {age: {gte: 30}}, sort: "-age", q: "ann", limit: 5, cursor: "...")` reads the same
// CollectionQuery as `/users?role=admin&age[gte]=30&sort=-age&q=ann&limit=5&cursor=...`, so both
// are parsed and refused by one parser. Nested lists (a user's posts) take a window: `limit` and
// `page`.
import type { CollectionPage } from '../collections/collection-page.js'
import type { CollectionSpec, FieldSpec } from '../collections/collection-spec.js'
import { type CollectionQuery, parseCollectionQuery } from '../collections/collection-query.js'
import { pageMetaOf } from '../collections/page-meta.js'
import { AppError, type ErrorDetail } from '../errors.js'
import { DEFAULT_PAGE_LIMIT, type ListWindow, MAX_OFFSET_ITEMS, MAX_PAGE_LIMIT, offsetOf, pastOffsetWindow } from '../collections/pagination.js'

/** The REST query language as arguments (filters, sort, search): `filterType` is the input filterInputSdl writes, `whereType` whereInputSdl's. */
export const queryLanguageArgsSdl = (filterType: string, whereType: string): string => `
    "Equality filters; a list means any of its values."
    filter: ${filterType}
    "Conditions by operator, as REST's field[op]=value; all must hold, and so must filter's."
    where: ${whereType}
    "Comma-separated field names; a leading - sorts descending. The id always breaks ties."
    sort: String
    "Free-text search (case-insensitive substring)."
    q: String
    "The fields q searches; by default every searchable field."
    fields: [String!]`

/** Arguments of a top-level collection field: the query language, and pages by limit, page or cursor. */
export const collectionArgsSdl = (filterType: string, whereType: string): string =>
  `(${queryLanguageArgsSdl(filterType, whereType)}
    "Page size (default ${DEFAULT_PAGE_LIMIT}, at most ${MAX_PAGE_LIMIT})."
    limit: Int
    "1-based page number; pages by offset, up to page × limit = ${MAX_OFFSET_ITEMS} (cursor goes further)."
    page: Int
    "Opaque position from pageInfo.nextCursor; pages by keyset."
    cursor: String
  )`

/** When a top-level collection field (`users`, `usersPage`) answers BAD_REQUEST: its Errors line's words. */
export const COLLECTION_ARGS_REFUSAL = 'an argument is not valid: filter, where, sort, q, fields, limit, page or cursor, one detail each'

/** Arguments of a nested list field. */
export const WINDOW_ARGS_SDL = `(
    "Items per parent (default ${DEFAULT_PAGE_LIMIT}, at most ${MAX_PAGE_LIMIT})."
    limit: Int
    "1-based page of limit items, in id order, up to page × limit = ${MAX_OFFSET_ITEMS}."
    page: Int
  )`

const GRAPHQL_TYPES = { integer: 'Int', boolean: 'Boolean', timestamp: 'DateTime', string: 'String' } as const

/**
 * `input UserFilter { role: [Role!] ... }`: every filterable field of the collection, as a list of
 * "any of" values; `enums` names the GraphQL enum of a field with fixed values.
 */
export function filterInputSdl(name: string, spec: CollectionSpec, enums: Readonly<Record<string, string>> = {}): string {
  const fields = filterableFields(spec).map((field) => `  ${field.name}: [${itemType(valueType(spec, field, enums), field.nullable)}]`)
  const description = `Equality filters on ${spec.name}: each field given must match one of its values; null matches a missing value.`
  return `"${description}"\ninput ${name} {\n${fields.join('\n')}\n}`
}

/**
 * `input UserWhere { age: NullableIntFilter, role: RoleFilter ... }`: every filterable field of the
 * collection, with the operator input of its type (OPERATOR_INPUTS_SDL; an enum's from
 * enumFilterSdl, declared beside the enum).
 */
export function whereInputSdl(name: string, spec: CollectionSpec, enums: Readonly<Record<string, string>> = {}): string {
  const fields = filterableFields(spec).map((field) => `  ${field.name}: ${filterTypeName(valueType(spec, field, enums), field.nullable)}`)
  const description = `Conditions on ${spec.name}: every operator given on every field given must hold.`
  return `"${description}"\ninput ${name} {\n${fields.join('\n')}\n}`
}

/** `input RoleFilter { eq: Role, ne: Role, in: [Role!] }`: the operators of an enumeration (no ranges), for whereInputSdl. */
export const enumFilterSdl = (enumType: string, options: { nullable?: boolean } = {}): string =>
  operatorInputSdl(enumType, { ranges: false, nullable: options.nullable ?? false }, `one of the values of ${enumType}`)

const filterableFields = (spec: CollectionSpec): FieldSpec[] => [...spec.fields.values()].filter((field) => field.filterable)

/** The GraphQL type of one value of the field: its enum, ID for ids (the id and *Id fields), else its scalar. */
export function valueType(spec: CollectionSpec, field: FieldSpec, enums: Readonly<Record<string, string>>): string {
  return enums[field.name] ?? (field === spec.id || field.name.endsWith('Id') ? 'ID' : GRAPHQL_TYPES[field.type])
}

const itemType = (type: string, nullable: boolean | undefined): string => (nullable ? type : `${type}!`)

/** `IntFilter`, or `NullableIntFilter` (with `null`) for a field that may be missing. */
const filterTypeName = (type: string, nullable: boolean | undefined): string => `${nullable ? 'Nullable' : ''}${type}Filter`

/** Which operators fit, as the parser decides (operatorsOf in collections/collection-query.ts): eq, ne and in always. */
interface Operators {
  /** gt, gte, lt, lte: where values are ordered (not booleans or enumerations). */
  ranges: boolean
  /** null: whether the value is missing. */
  nullable: boolean
}

/** One operator input: its description says what is compared, the operators' say what each matches. */
function operatorInputSdl(type: string, operators: Operators, what: string): string {
  const missing = (words: string) => (operators.nullable ? `; ${words}` : '')
  const lines = [`  "Equal to."\n  eq: ${type}`, `  "Not equal to${missing('a missing value matches too')}."\n  ne: ${type}`]
  if (operators.ranges) {
    const ranges = { gt: 'Greater than', gte: 'Greater than or equal to', lt: 'Less than', lte: 'Less than or equal to' }
    for (const [name, words] of Object.entries(ranges)) lines.push(`  "${words}${missing('a missing value never matches')}."\n  ${name}: ${type}`)
  }
  lines.push(`  "Any of these${missing('null matches a missing value')}."\n  in: [${itemType(type, operators.nullable)}]`)
  if (operators.nullable) lines.push(`  "true: the value is missing; false: it is present."\n  null: Boolean`)
  const description = `Compares ${what}${operators.nullable ? ', on a field that may be missing' : ''}; every operator given must hold. The same operators as REST's field[op]=value.`
  return `"${description}"\ninput ${filterTypeName(type, operators.nullable)} {\n${lines.join('\n')}\n}`
}

/** The operator inputs of the scalar types, each with a variant for fields that may be missing (with `null`); declared once in the schema. */
export const OPERATOR_INPUTS_SDL = [
  { type: 'Int', ranges: true, what: 'an integer' },
  { type: 'ID', ranges: true, what: 'an id (ids are integers: ranges compare them as numbers)' },
  { type: 'String', ranges: true, what: 'text (ranges in code-point order)' },
  { type: 'DateTime', ranges: true, what: 'an instant (whatever offset it is written with)' },
  { type: 'Boolean', ranges: false, what: 'true or false' },
]
  .flatMap(({ type, ranges, what }) => [false, true].map((nullable) => operatorInputSdl(type, { ranges, nullable }, what)))
  .join('\n\n')

/** An operator's value, as GraphQL hands it over (an enum's as its name, an ID or DateTime as text). */
type OperatorValue = string | number | boolean | null | readonly OperatorValue[]

export interface CollectionArgs {
  filter?: Readonly<Record<string, readonly unknown[] | null>> | null
  /** Field → operator → value (a list for `in`). */
  where?: Readonly<Record<string, Readonly<Record<string, OperatorValue>> | null>> | null
  sort?: string | null
  q?: string | null
  fields?: readonly string[] | null
  limit?: number | null
  page?: number | null
  cursor?: string | null
}

/**
 * The arguments as a CollectionQuery, refused (BAD_REQUEST, one detail per problem) as the
 * same query string would be. Without page or cursor, the first page by keyset.
 */
export function toCollectionQuery(spec: CollectionSpec, args: CollectionArgs, options: { withTotal: boolean }): CollectionQuery {
  const raw: Record<string, unknown> = {}
  for (const [name, values] of Object.entries(args.filter ?? {})) {
    if (values !== null) raw[name] = values.map((value) => (value === null ? 'null' : String(value as string | number | boolean)))
  }
  // where: {age: {gte: 30}, role: {in: [admin]}} is the query string age[gte]=30&role[in]=admin.
  for (const [name, operators] of Object.entries(args.where ?? {})) {
    const nullable = spec.fields.get(name)?.nullable === true
    for (const [operator, value] of Object.entries(operators ?? {})) raw[`${name}[${operator}]`] = operatorText(value, nullable)
  }
  const text = (name: string, value: string | number | null | undefined) => {
    if (value !== null && value !== undefined) raw[name] = String(value)
  }
  text('sort', args.sort)
  text('q', args.q)
  text('fields', args.fields?.join(','))
  text('limit', args.limit)
  text('page', args.page)
  text('cursor', args.cursor)
  return parseCollectionQuery(spec, raw, { defaultMode: 'cursor', withTotal: options.withTotal, scope: '' })
}

/**
 * An operator's value as the query string spells it (a list stays a list: `in`). null is REST's
 * `null` on a field that may be missing; on another it is handed over as null, which the parser
 * refuses as it refuses any value not of the field's type.
 */
function operatorText(value: OperatorValue, nullable: boolean): unknown {
  if (value === null) return nullable ? 'null' : null
  if (typeof value === 'object') return value.map((item) => operatorText(item, nullable))
  return String(value)
}

/** A nested list's window; a larger limit is capped and a page past the offset window refused, as on REST. */
export function toListWindow(args: { limit?: number | null; page?: number | null }): ListWindow {
  const problems: ErrorDetail[] = []
  const limit = args.limit ?? DEFAULT_PAGE_LIMIT
  const page = args.page ?? 1
  const capped = Math.min(limit, MAX_PAGE_LIMIT)
  if (limit < 1) problems.push({ field: 'limit', message: 'must be an integer of at least 1' })
  if (page < 1) problems.push({ field: 'page', message: 'must be an integer of at least 1' })
  else if (limit >= 1 && page * capped > MAX_OFFSET_ITEMS) {
    problems.push({ field: 'page', message: pastOffsetWindow(capped, 'read further from the collection itself (usersPage, or the REST list) with cursor') })
  }
  if (problems.length > 0) throw new AppError('BAD_REQUEST', 'The list arguments are not valid', problems)
  return { limit: capped, offset: offsetOf(page, capped) }
}

/** A service page as {items, pageInfo}, pageInfo in the REST vocabulary (total and pages only when counted). */
export function toPageResult<T>(page: CollectionPage<T>) {
  const meta = pageMetaOf(page)
  return {
    items: page.items,
    pageInfo: {
      limit: meta.limit,
      page: meta.page ?? null,
      total: meta.total ?? null,
      totalCapped: meta.totalCapped ?? null,
      pages: meta.pages ?? null,
      nextCursor: meta.nextCursor,
      hasMore: meta.hasMore,
    },
  }
}
