// The representation of a GET route's items in the API description: `select`, `include` and each
// embedded list's `<relation>.limit` as query parameters, read from the route's
// RepresentationShape, with the limits src/collections/embedding.ts applies.
import { DEFAULT_EMBEDDED_LIMIT, MAX_REPRESENTATION_NAMES } from '../../collections/embedding.js'
import { MAX_PAGE_LIMIT } from '../../collections/pagination.js'
import type { RepresentationShape } from '../route-config.js'

/** An item of a collection's `select` beyond a field's name: `count()`, `field.avg()` (each maybe after `alias:`), or `alias:field`. */
const AGGREGATE_ITEM = '^([A-Za-z_][A-Za-z0-9_]*:)?(([A-Za-z_][A-Za-z0-9_]*\\.)?(count|sum|avg|min|max)\\(\\)|[A-Za-z_][A-Za-z0-9_]*:[A-Za-z_][A-Za-z0-9_]*)$'

/**
 * `select`, and `include` and the lists' limits when the resource embeds anything. A collection's
 * `select` (`aggregates`) may also name functions, which make the answer its aggregate.
 */
export function representationParameters(shape: RepresentationShape, { aggregates }: { aggregates: boolean }): Record<string, unknown>[] {
  const relations = Object.keys(shape.relations)
  const lists = relations.filter((name) => shape.relations[name] === 'list')
  const field = { type: 'string', enum: [...shape.fields] }
  const select = {
    name: 'select',
    in: 'query',
    description:
      'Only these fields in each item, comma-separated (`select=id,title`; repeating the parameter works too). ' +
      '`id` is always there; included relations too. An unknown field is a 400.' +
      (aggregates
        ? ' With a function (`count()`, `field.count()`, `.sum()`, `.avg()`, `.min()`, `.max()`), the answer is the aggregate: ' +
          'one group per value of the plain fields named beside it (`select=completed,count()`), each name renamed by `alias:`.'
        : ''),
    style: 'form',
    explode: false,
    schema: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_REPRESENTATION_NAMES,
      items: aggregates ? { anyOf: [field, { type: 'string', pattern: AGGREGATE_ITEM }] } : field,
    },
  }
  if (relations.length === 0) return [select]
  const include = {
    name: 'include',
    in: 'query',
    description:
      `Related resources to embed in each item, comma-separated (\`include=${relations.join(',')}\`; repeating the parameter works too), ` +
      'as their own routes show them to the caller. Each costs one read per page, whatever the number of items. An unknown relation is a 400.',
    style: 'form',
    explode: false,
    schema: { type: 'array', minItems: 1, maxItems: MAX_REPRESENTATION_NAMES, items: { type: 'string', enum: relations } },
  }
  const limits = lists.map((name) => ({
    name: `${name}.limit`,
    in: 'query',
    description: `With \`include=${name}\` only: how many of the newest ${name} each item embeds (default ${DEFAULT_EMBEDDED_LIMIT}; above ${MAX_PAGE_LIMIT} capped).`,
    // No `default`: tools such as Swagger UI fill it in, and a limit without its include is a 400.
    schema: { type: 'integer', minimum: 1 },
  }))
  return [select, include, ...limits]
}
