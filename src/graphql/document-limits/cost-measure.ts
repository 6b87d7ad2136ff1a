// The cost model: what an operation costs, the figure the cost rule bounds (GRAPHQL_MAX_COST),
// subscriptions are bounded by, and the rate limit charges (src/graphql/pipeline/metering.ts).
//
// Cost counts each field as 1 and multiplies a list field's subtree by its page size: its literal
// `limit` (capped at maxLimit), maxLimit when `limit` is a variable (results are cached per
// document text), defaultLimit when `limit` is left out. Introspection's lists take no `limit`:
// for the cost rule's bound they count as the longest list introspection can return for the
// schema; for the charge (src/graphql/pipeline/metering.ts), as the average length of that list in the
// schema (the schema's types, a type's fields, a field's arguments...), so that the full
// introspection query is charged about the fields of its answer. A data list without
// `limit` is a page's items (`usersPage(limit: 50) { items }`): it takes the page size of the
// field around it, or maxLimit when that field takes no `limit`. A connection's `first` or `last`
// is its `limit` (`usersConnection(first: 50) { edges { node } }`), and its `totalCount` (or
// `totalCountCapped`) a count, as a page's `total`.
//
// Reads that touch rows beyond those they return cost those rows too (1 per row, like a field,
// and multiplied like one by the lists around them): a search (`q`) READ_ROWS.search, counting a
// page's `total` (or `totalCapped`, `pages`) READ_ROWS.count, a page by offset past the first (`page` > 1, on a
// collection or a nested window such as `posts(limit, page)`) the page × limit rows it skips and
// reads, at most READ_ROWS.offset (a variable `page` counts as that), and each of an aggregate's
// `aggregate` and `groups` READ_ROWS.aggregate. See READ_ROWS below for why.
//
// Introspection (`__schema`, `__type` and everything under them) is summed apart, for the cost
// rule's bound of its own (src/graphql/document-limits/cost-rule.ts). `__typename` is an ordinary
// field: it costs 1.
import {
  Kind,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql'
import { MAX_AGGREGATED_ROWS } from '../../collections/aggregation.js'
import { isIntrospection, type Measure, measureOperations } from './measure.js'

/** The page sizes of lists: when `limit` is left out, and at most. */
export interface ListSizes {
  defaultLimit: number
  maxLimit: number
}

export interface Cost {
  /** Outside introspection. */
  readonly main: number
  /**
   * What one item costs under a data list without a `limit` argument (`UserPage.items`): the field
   * around it gives the page size (`usersPage(limit: 50)`), or maxLimit if it takes no `limit`.
   */
  readonly perItem: number
  readonly introspection: number
  /** A `total` (or `totalCapped`, `pages`) below, not yet charged: the page field above pays READ_ROWS.count, once. */
  readonly counts: boolean
  /** Whether rows a read touches (search, count, offset) are in the cost: the message says so. */
  readonly reads: boolean
}

/**
 * Rows a read may touch beyond the items it returns, as the bounds on reads make them (docs/decisions/0056-bounded-reads.md;
 * src/db/list-page.ts and src/collections/pagination.ts): a search reads the trigram index's candidates, or
 * the newest 10,000 rows for a term too short for the index; a count is bounded the same way; an
 * offset page reads and throws away the rows before it, up to the window of page × limit ≤ 10,000
 * (further is cursor's). Before those bounds and these charges (200,000 users), 15
 * aliases of `usersPage(q: "zz-nomatch", limit: 1) { pageInfo { total } }` held the event loop
 * 2.5 s (about 170 ms each, a scan and a count of every row) while each cost 3.
 */
export const READ_ROWS = { search: 10_000, count: 10_000, offset: 10_000, aggregate: MAX_AGGREGATED_ROWS } as const

/**
 * The fields of an aggregate (a type named *Aggregate, src/graphql/aggregates.ts) that each read
 * the rows they compute over, at most MAX_AGGREGATED_ROWS: READ_ROWS.aggregate apiece, charged
 * before the operation runs (REST charges the rows an aggregate read, after: never more).
 */
const AGGREGATING_FIELDS = ['aggregate', 'groups']

function aggregatingFields(schema: GraphQLSchema): ReadonlySet<GraphQLField<unknown, unknown>> {
  const aggregating = new Set<GraphQLField<unknown, unknown>>()
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || !type.name.endsWith('Aggregate')) continue
    const fields = type.getFields()
    for (const name of AGGREGATING_FIELDS) if (fields[name] !== undefined) aggregating.add(fields[name])
  }
  return aggregating
}

/** The fields of PageInfo that count the page's collection when selected (as the page resolvers decide). */
const COUNTING_FIELDS = ['total', 'totalCapped', 'pages']
/** The fields of a connection (a type named *Connection) that count it when selected (src/graphql/connections.ts). */
const CONNECTION_COUNTING_FIELDS = ['totalCount', 'totalCountCapped']
/** The arguments that give a list's page size, the first given: a page's `limit`, a connection's `first` or `last`. */
const PAGE_SIZE_ARGUMENTS = ['limit', 'first', 'last']

function countingFields(schema: GraphQLSchema): ReadonlySet<GraphQLField<unknown, unknown>> {
  const counting = new Set<GraphQLField<unknown, unknown>>()
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type)) continue
    const names = type.name === 'PageInfo' ? COUNTING_FIELDS : type.name.endsWith('Connection') ? CONNECTION_COUNTING_FIELDS : []
    const fields = type.getFields()
    for (const name of names) if (fields[name] !== undefined) counting.add(fields[name])
  }
  return counting
}

/** The rows a field's own read touches beyond its items: its search and its offset. */
function readRows(node: FieldNode, definition: GraphQLField<unknown, unknown> | undefined, pageSize: number | undefined): number {
  if (definition === undefined) return 0
  const argument = (name: string) =>
    definition.args.some((arg) => arg.name === name) ? node.arguments?.find((arg) => arg.name.value === name)?.value : undefined
  let rows = 0
  const q = argument('q')
  if (q !== undefined && q.kind !== Kind.NULL && !(q.kind === Kind.STRING && q.value === '')) rows += READ_ROWS.search
  const page = argument('page')
  if (page?.kind === Kind.VARIABLE) rows += READ_ROWS.offset
  else if (page?.kind === Kind.INT && Number(page.value) > 1) rows += Math.min(Number(page.value) * (pageSize ?? 1), READ_ROWS.offset)
  return rows
}

/** How introspection's lists are counted: as the longest the schema has (a bound), or as their average length (a charge). */
export type IntrospectionLists = 'longest' | 'average'

export function costMeasure(listSizes: ListSizes, schema: GraphQLSchema, introspectionLists: IntrospectionLists = 'longest'): Measure<Cost> {
  const listBound = introspectionListBound(schema)
  const introspectionSizes = introspectionLists === 'average' ? introspectionListSizes(schema) : undefined
  const counting = countingFields(schema)
  const aggregating = aggregatingFields(schema)
  return {
    schema,
    empty: { main: 0, perItem: 0, introspection: 0, counts: false, reads: false },
    field(node, { main, perItem, introspection, counts, reads }, definition) {
      const type = definition && (isNonNullType(definition.type) ? definition.type.ofType : definition.type)
      const isList = type !== undefined && isListType(type)
      const limit = definition?.args.some((arg) => PAGE_SIZE_ARGUMENTS.includes(arg.name)) ? pageSize(node, listSizes) : undefined
      const below = main + (isList || limit === undefined ? listSizes.maxLimit : limit) * perItem
      if (isIntrospection(node)) return { main: 0, perItem: 0, introspection: 1 + below + introspection, counts: false, reads: false }
      // The field's own read, once per time it runs: its search, its offset, and the count of its
      // page when a counting field is selected below (the page field is the one with a limit).
      const countRows = counts && limit !== undefined ? READ_ROWS.count : 0
      const aggregateRows = definition !== undefined && aggregating.has(definition) ? READ_ROWS.aggregate : 0
      const ownRows = readRows(node, definition, limit) + countRows + aggregateRows
      const own = { counts: counts && countRows === 0 && !isList, reads: reads || ownRows > 0 || (definition !== undefined && counting.has(definition)) }
      if (definition !== undefined && counting.has(definition)) return { main: 1, perItem: 0, introspection, counts: true, reads: true }
      if (!isList) return { main: 1 + ownRows + below, perItem: 0, introspection, ...own }
      if (limit === undefined && !isIntrospectionType(getNamedType(type))) {
        return { main: 1 + ownRows, perItem: below, introspection: listSizes.maxLimit * introspection, ...own }
      }
      const size = limit ?? (definition === undefined ? undefined : introspectionSizes?.get(definition)) ?? listBound
      return { main: 1 + ownRows + size * below, perItem: 0, introspection: size * introspection, ...own }
    },
    add: (a, b) => ({
      main: a.main + b.main,
      perItem: a.perItem + b.perItem,
      introspection: a.introspection + b.introspection,
      // `total` and `pages` of one page are one count.
      counts: a.counts || b.counts,
      reads: a.reads || b.reads,
    }),
  }
}

/** The page a field's `limit` (or `first`, `last`) argument asks for: its literal value capped, or defaultLimit when left out. */
function pageSize(node: FieldNode, listSizes: ListSizes): number {
  const limit = PAGE_SIZE_ARGUMENTS.map((name) => node.arguments?.find((arg) => arg.name.value === name)?.value).find(
    (value) => value !== undefined && value.kind !== Kind.NULL,
  )
  if (limit === undefined) return listSizes.defaultLimit
  // A limit below 1 is refused when the field runs; a variable (or a value the field will refuse)
  // counts as the largest page.
  if (limit.kind === Kind.INT) return Math.min(Math.max(Number(limit.value), 1), listSizes.maxLimit)
  return listSizes.maxLimit
}

const listBounds = new WeakMap<GraphQLSchema, number>()

/**
 * The longest list introspection can return: types, directives, fields or interfaces of a type,
 * arguments of a field or directive, enum values, input fields (possibleTypes are types).
 */
function introspectionListBound(schema: GraphQLSchema): number {
  let bound = listBounds.get(schema)
  if (bound !== undefined) return bound
  const types = Object.values(schema.getTypeMap())
  const directives = schema.getDirectives()
  bound = Math.max(types.length, directives.length, ...directives.map((directive) => directive.args.length))
  for (const type of types) {
    if (isObjectType(type) || isInterfaceType(type)) {
      const fields = Object.values(type.getFields())
      bound = Math.max(bound, fields.length, type.getInterfaces().length, ...fields.map((field) => field.args.length))
    } else if (isInputObjectType(type)) {
      bound = Math.max(bound, Object.keys(type.getFields()).length)
    } else if (isEnumType(type)) {
      bound = Math.max(bound, type.getValues().length)
    }
  }
  listBounds.set(schema, bound)
  return bound
}

const listSizesOf = new WeakMap<GraphQLSchema, ReadonlyMap<GraphQLField<unknown, unknown>, number>>()

/**
 * The average length of each of introspection's lists in the schema, by the field that returns it:
 * `__Schema.types` the number of types, `__Type.fields` the fields of all types over the number of
 * types (a type without fields answers null), `__Field.args` the arguments of all fields over the
 * number of fields, and so on. Nested, the averages multiply to the exact count of what the full
 * introspection query answers (types × fields per type × arguments per field).
 */
function introspectionListSizes(schema: GraphQLSchema): ReadonlyMap<GraphQLField<unknown, unknown>, number> {
  const known = listSizesOf.get(schema)
  if (known !== undefined) return known
  const types = Object.values(schema.getTypeMap())
  const directives = schema.getDirectives()
  let fields = 0
  let args = 0
  let interfaces = 0
  let possibleTypes = 0
  let enumValues = 0
  let inputFields = 0
  for (const type of types) {
    if (isObjectType(type) || isInterfaceType(type)) {
      const own = Object.values(type.getFields())
      fields += own.length
      args += own.reduce((sum, field) => sum + field.args.length, 0)
      interfaces += type.getInterfaces().length
    }
    if (isInterfaceType(type) || isUnionType(type)) possibleTypes += schema.getPossibleTypes(type).length
    if (isEnumType(type)) enumValues += type.getValues().length
    if (isInputObjectType(type)) inputFields += Object.keys(type.getFields()).length
  }
  const directiveArgs = directives.reduce((sum, directive) => sum + directive.args.length, 0)
  const locations = directives.reduce((sum, directive) => sum + directive.locations.length, 0)
  const perType = (count: number) => count / Math.max(1, types.length)
  const perDirective = (count: number) => count / Math.max(1, directives.length)
  const sizes = new Map<GraphQLField<unknown, unknown>, number>()
  const set = (typeName: string, fieldName: string, size: number) => {
    const type = schema.getType(typeName)
    const field = isObjectType(type) ? type.getFields()[fieldName] : undefined
    if (field !== undefined) sizes.set(field, size)
  }
  set('__Schema', 'types', types.length)
  set('__Schema', 'directives', directives.length)
  set('__Type', 'fields', perType(fields))
  set('__Type', 'interfaces', perType(interfaces))
  set('__Type', 'possibleTypes', perType(possibleTypes))
  set('__Type', 'enumValues', perType(enumValues))
  set('__Type', 'inputFields', perType(inputFields))
  set('__Field', 'args', args / Math.max(1, fields))
  set('__Directive', 'args', perDirective(directiveArgs))
  set('__Directive', 'locations', perDirective(locations))
  listSizesOf.set(schema, sizes)
  return sizes
}

/** What an operation costs outside introspection: the figure maxCost bounds, and the rate limit charges (src/graphql/pipeline/metering.ts). */
export const mainCost = (cost: Cost, listSizes: ListSizes): number => cost.main + listSizes.maxLimit * cost.perItem

/** Each operation of a parsed document with its cost outside introspection (what costRule checks against maxCost). */
export function operationCosts(document: DocumentNode, schema: GraphQLSchema, listSizes: ListSizes): Array<[OperationDefinitionNode, number]> {
  const measure = costMeasure(listSizes, schema)
  return measureOperations(document, measure).map(([operation, cost]) => [operation, mainCost(cost, listSizes)])
}
