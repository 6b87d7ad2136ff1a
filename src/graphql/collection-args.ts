// The REST collection query language as GraphQL arguments: `users(filter: {role: [admin]},
// sort: "-age", q: "ann", limit: 5, cursor: "...")` reads the same CollectionQuery as
// `/users?role=admin&sort=-age&q=ann&limit=5&cursor=...`, so both are parsed and refused by one
// parser. Nested lists (a user's posts) take a window: `limit` and `page`.
import type { CollectionPage } from '../collections/collection-page.js'
import type { CollectionSpec, FieldSpec } from '../collections/collection-spec.js'
import { type CollectionQuery, parseCollectionQuery } from '../collections/collection-query.js'
import { pageMetaOf } from '../collections/page-meta.js'
import { AppError, type ErrorDetail } from '../errors.js'
import { DEFAULT_PAGE_LIMIT, type ListWindow, MAX_OFFSET_ITEMS, MAX_PAGE_LIMIT, offsetOf, pastOffsetWindow } from '../collections/pagination.js'

/** Arguments of a top-level collection field; `Filter` is the type filterInputSdl writes. */
export const collectionArgsSdl = (filterType: string): string =>
  `(
    "Equality filters; a list means any of its values."
    filter: ${filterType}
    "Comma-separated field names; a leading - sorts descending. The id always breaks ties."
    sort: String
    "Free-text search (case-insensitive substring)."
    q: String
    "The fields q searches; by default every searchable field."
    fields: [String!]
    "Page size (default ${DEFAULT_PAGE_LIMIT}, at most ${MAX_PAGE_LIMIT})."
    limit: Int
    "1-based page number; pages by offset, up to page × limit = ${MAX_OFFSET_ITEMS} (cursor goes further)."
    page: Int
    "Opaque position from pageInfo.nextCursor; pages by keyset."
    cursor: String
  )`

/** Arguments of a nested list field. */
export const WINDOW_ARGS_SDL = `(
    "Items per parent (default ${DEFAULT_PAGE_LIMIT}, at most ${MAX_PAGE_LIMIT})."
    limit: Int
    "1-based page of limit items, in id order, up to page × limit = ${MAX_OFFSET_ITEMS}."
    page: Int
  )`

const GRAPHQL_TYPES = { integer: 'Int', boolean: 'Boolean', timestamp: 'String', string: 'String' } as const

/**
 * `input UserFilter { role: [Role!] ... }`: every filterable field of the collection, as a list of
 * "any of" values; `enums` names the GraphQL enum of a field with fixed values.
 */
export function filterInputSdl(name: string, spec: CollectionSpec, enums: Readonly<Record<string, string>> = {}): string {
  const fields = [...spec.fields.values()].filter((field) => field.filterable).map((field) => `  ${field.name}: [${itemType(spec, field, enums[field.name])}]`)
  const description = `Equality filters on ${spec.name}: each field given must match one of its values; null matches a missing value.`
  return `"${description}"\ninput ${name} {\n${fields.join('\n')}\n}`
}

function itemType(spec: CollectionSpec, field: FieldSpec, enumType: string | undefined): string {
  const type = enumType ?? (field === spec.id || field.name.endsWith('Id') ? 'ID' : GRAPHQL_TYPES[field.type])
  return field.nullable ? type : `${type}!`
}

export interface CollectionArgs {
  filter?: Readonly<Record<string, readonly unknown[] | null>> | null
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
  const raw: Record<string, string | string[]> = {}
  for (const [name, values] of Object.entries(args.filter ?? {})) {
    if (values !== null) raw[name] = values.map((value) => (value === null ? 'null' : String(value as string | number | boolean)))
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
