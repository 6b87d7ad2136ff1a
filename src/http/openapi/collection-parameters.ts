// The collection query language of the API description: one collection's filters, sort, search and
// paging as query parameters, read from its CollectionSpec, so that the document says what the
// collection layer accepts, with the same limits. Each operator a field takes is a parameter of its
// own, named as the query string spells it (`age[gte]`), after the field's equality parameter.
import { type FilterOperatorName, MAX_PAGE, MAX_SEARCH_LENGTH, operatorsOf } from '../../collections/collection-query.js'
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
    .flatMap((field) => [
      {
        name: field.name,
        in: 'query',
        description:
          `Only items whose \`${field.name}\` equals the value; repeated, any of the values.` + (field.nullable ? ' `null` matches a missing value.' : ''),
        style: 'form',
        explode: true,
        schema: { type: 'array', maxItems: 100, items: filterValueSchema(field) },
      },
      ...operatorsOf(field).map((operator) => operatorParameter(field, operator)),
    ])
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

/** `age[gte]`: one operator on one field, its schema typed as the field's values. */
function operatorParameter(field: FieldSpec, operator: FilterOperatorName): Record<string, unknown> {
  const name = `${field.name}[${operator}]`
  const it = `\`${field.name}\``
  const missing = field.nullable ? ' `null` matches a missing value.' : ''
  const folded = field.caseInsensitive ? ' (without regard to case)' : ''
  const order = folded !== '' ? folded : field.type === 'string' ? ' (text in code-point order)' : ''
  const repeated = { in: 'query', style: 'form', explode: true, schema: { type: 'array', maxItems: 100, items: filterValueSchema(field) } }
  const range = (words: string) => ({
    name,
    in: 'query',
    description: `Only items whose ${it} is ${words} the value${order}; a missing value never is.`,
    schema: filterValueSchema(field, false),
  })
  switch (operator) {
    case 'eq':
      return { name, ...repeated, description: `As ${it}: only items whose ${it} equals the value${folded}; repeated, any of the values.${missing}` }
    case 'ne':
      return {
        name,
        ...repeated,
        description: `Only items whose ${it} differs from the value${folded}; repeated, from every value.${field.nullable ? ' A missing value differs; `null` means present.' : ''}`,
      }
    case 'gt':
      return range('greater than')
    case 'gte':
      return range('greater than or equal to')
    case 'lt':
      return range('less than')
    case 'lte':
      return range('less than or equal to')
    case 'in':
      return {
        name,
        in: 'query',
        description: `Only items whose ${it} is one of these comma-separated values${folded}, at most 100 (a value holding a comma takes ${it} repeated).${missing}`,
        schema: listSchema(field),
      }
    case 'null':
      return { name, in: 'query', description: `\`true\`: only items without ${it}; \`false\`: only items with one.`, schema: { type: 'boolean' } }
  }
}

/** A comma-separated list of the field's values, with a pattern where the values have one. */
function listSchema(field: FieldSpec): Record<string, unknown> {
  const item =
    field.type === 'integer'
      ? '-?[0-9]+'
      : field.type === 'boolean'
        ? '(?:true|false)'
        : field.type === 'timestamp'
          ? '[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\\.[0-9]{1,9})?)?(?:Z|[+-][0-9]{2}:[0-9]{2})'
          : field.values !== undefined
            ? `(?:${field.values.join('|')})`
            : undefined
  if (item === undefined) return { type: 'string' }
  const value = field.nullable ? `(?:${item}|null)` : item
  return { type: 'string', pattern: `^${value}(?:,${value})*$` }
}

function filterValueSchema(field: FieldSpec, orNull = field.nullable): Record<string, unknown> {
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
  return orNull ? { anyOf: [base, { type: 'string', const: 'null' }] } : base
}
