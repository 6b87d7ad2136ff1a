// The collection query language of the API description: one collection's filters, sort, search and
// paging as query parameters, read from its CollectionSpec, so that the document says what the
// collection layer accepts, with the same limits.
import { MAX_PAGE, MAX_SEARCH_LENGTH } from '../../collections/collection-query.js'
import type { CollectionSpec, FieldSpec } from '../../collections/collection-spec.js'
import { DEFAULT_PAGE_LIMIT, MAX_OFFSET_ITEMS, MAX_PAGE_LIMIT } from '../../collections/pagination.js'

/** The collection query language for one collection, as query parameters. */
export function collectionParameters(spec: CollectionSpec): Record<string, unknown>[] {
  const fields = [...spec.fields.values()]
  const names = (keep: (field: FieldSpec) => boolean) => fields.filter(keep).map((field) => field.name)
  const sortable = names((field) => field.sortable)
  const searchable = names((field) => field.searchable)
  const anyOf = (list: string[]) => `(?:${list.join('|')})`
  const filters = fields
    .filter((field) => field.filterable)
    .map((field) => ({
      name: field.name,
      in: 'query',
      description:
        `Only items whose \`${field.name}\` equals the value; repeated, any of the values.` + (field.nullable ? ' `null` matches a missing value.' : ''),
      style: 'form',
      explode: true,
      schema: { type: 'array', maxItems: 100, items: filterValueSchema(field) },
    }))
  return [
    ...filters,
    {
      name: 'sort',
      in: 'query',
      description: `Comma-separated fields, \`-\` for descending: ${sortable.join(', ')}. \`id\` always breaks ties.`,
      schema: { type: 'string', pattern: `^-?${anyOf(sortable)}(?:,-?${anyOf(sortable)})*$` },
      example: '-createdAt',
    },
    {
      name: 'q',
      in: 'query',
      description: `Case-insensitive substring search (\`%\` and \`_\` are literal) in \`fields\`, by default ${searchable.join(', ')}.`,
      schema: { type: 'string', maxLength: MAX_SEARCH_LENGTH },
    },
    {
      name: 'fields',
      in: 'query',
      description: 'Comma-separated fields `q` searches (only with `q`).',
      schema: { type: 'string', pattern: `^${anyOf(searchable)}(?:,${anyOf(searchable)})*$` },
    },
    {
      name: 'page',
      in: 'query',
      description: `The page, from 1 (the default mode in v1). Pages by offset stop at page × limit = ${MAX_OFFSET_ITEMS} (400 past it); \`cursor\` goes further.`,
      schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE },
    },
    {
      name: 'limit',
      in: 'query',
      description: `Items per page: default ${DEFAULT_PAGE_LIMIT}; above ${MAX_PAGE_LIMIT} capped (meta.pagination.limit says).`,
      schema: { type: 'integer', minimum: 1, default: DEFAULT_PAGE_LIMIT },
    },
    {
      name: 'cursor',
      in: 'query',
      description: "An opaque position: a page's `nextCursor`, or from a `Link`. Bound to the query's filters, sort and search.",
      schema: { type: 'string' },
    },
  ]
}

function filterValueSchema(field: FieldSpec): Record<string, unknown> {
  const base: Record<string, unknown> =
    field.type === 'integer'
      ? { type: 'integer' }
      : field.type === 'boolean'
        ? { type: 'boolean' }
        : field.type === 'timestamp'
          ? { type: 'string', format: 'date-time' }
          : field.values === undefined
            ? { type: 'string' }
            : { type: 'string', enum: [...field.values] }
  return field.nullable ? { anyOf: [base, { type: 'string', const: 'null' }] } : base
}
