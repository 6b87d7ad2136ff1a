// Aggregates beside each top-level list, in Hasura's shape: `postsAggregate(<the list's filter,
// where, q, fields>, groupBy: [PostGroupField!]) { aggregate { count max { createdAt } }
// groups { keys { userId } aggregate { count } } }`. The same service function as REST's
// `select=userId,count()` (src/collections/aggregation.ts), with its rights and bounds; charged
// before it runs by the cost model, as a read of MAX_AGGREGATED_ROWS rows
// (src/graphql/document-limits/cost-measure.ts, READ_ROWS.aggregate). docs/graphql.md, Aggregates.
import type { Caller } from '../core/caller.js'
import {
  type Aggregate,
  type AggregateFunction,
  type AggregateQuery,
  type AggregateResult,
  type Aggregation,
  fitsFunction,
  groupableFields,
  MAX_AGGREGATE_GROUPS,
  MAX_AGGREGATED_ROWS,
} from '../collections/aggregation.js'
import type { CollectionSpec, FieldSpec } from '../collections/collection-spec.js'
import { type CollectionArgs, toCollectionQuery, valueType } from './collection-args.js'
import type { GraphQLContext } from './context.js'

/** The functions over fields, each an object of the fields it fits: `max { createdAt }`. */
const FIELD_FUNCTIONS = ['min', 'max', 'sum', 'avg'] as const satisfies readonly AggregateFunction[]

const fieldsFitting = (spec: CollectionSpec, fn: AggregateFunction): FieldSpec[] => [...spec.fields.values()].filter((field) => fitsFunction(fn, field))

/** The GraphQL type of a function's value over `field`: sums and averages as Float (a sum may pass Int's range), min and max as the field's own. */
function resultType(spec: CollectionSpec, fn: AggregateFunction, field: FieldSpec, enums: Readonly<Record<string, string>>): string {
  return fn === 'sum' || fn === 'avg' ? 'Float' : valueType(spec, field, enums)
}

const WORDS: Record<(typeof FIELD_FUNCTIONS)[number], string> = {
  min: 'The smallest value of each field; null when no row has one.',
  max: 'The largest value of each field; null when no row has one.',
  sum: 'The sum of each field; null when no row has one.',
  avg: 'The average of each field; null when no row has one.',
}

/**
 * The types of `<type>Aggregate` for a collection (`type` is the item's type, `Post`): the group
 * fields' enum, the keys of a group, the aggregate fields and a group. `enums`: as filterInputSdl's.
 */
export function aggregateTypesSdl(type: string, spec: CollectionSpec, enums: Readonly<Record<string, string>> = {}): string {
  const groupable = groupableFields(spec)
  const functionTypes = FIELD_FUNCTIONS.map((fn) => {
    const fields = fieldsFitting(spec, fn).map((field) => `  ${field.name}: ${resultType(spec, fn, field, enums)}`)
    return `"${WORDS[fn]}"\ntype ${type}${capitalized(fn)}Fields {\n${fields.join('\n')}\n}`
  })
  return `
"The fields ${spec.name} may be grouped by."
enum ${type}GroupField {
${groupable.map((field) => `  ${field.name}`).join('\n')}
}

"What a group's rows share: the fields grouped by (the others are null)."
type ${type}GroupKeys {
${groupable.map((field) => `  ${field.name}: ${valueType(spec, field, enums)}`).join('\n')}
}

${functionTypes.join('\n\n')}

"Functions over rows of ${spec.name}, as Hasura's aggregate fields."
type ${type}AggregateFields {
  "The rows."
  count: Int!
${FIELD_FUNCTIONS.map((fn) => `  ${fn}: ${type}${capitalized(fn)}Fields!`).join('\n')}
}

"The rows that share one value of each groupBy field."
type ${type}Group {
  keys: ${type}GroupKeys!
  aggregate: ${type}AggregateFields!
}

"Aggregates over the ${spec.name} selected: of them all, and of each group."
type ${type}Aggregate {
  aggregate: ${type}AggregateFields!
  "One per distinct value of the groupBy fields, in their order ascending (a missing value first); without groupBy, one group of every row. At most ${MAX_AGGREGATE_GROUPS}."
  groups: [${type}Group!]!
}`
}

/** The arguments of `<list>Aggregate`: the list's query language, and what to group by. */
export const aggregateArgsSdl = (type: string, filterType: string, whereType: string): string =>
  `(
    "Equality filters; a list means any of its values."
    filter: ${filterType}
    "Conditions by operator, as REST's field[op]=value; all must hold, and so must filter's."
    where: ${whereType}
    "Free-text search (case-insensitive substring)."
    q: String
    "The fields q searches; by default every searchable field."
    fields: [String!]
    "The fields the groups are made by, in this order; the groups are ordered by them, ascending."
    groupBy: [${type}GroupField!]
  )`

/** When an aggregate field answers BAD_REQUEST: its Errors line's words. */
export const AGGREGATE_REFUSAL = `an argument is not valid (filter, where, q or fields, one detail each), or more than ${MAX_AGGREGATED_ROWS} rows match, or there are more than ${MAX_AGGREGATE_GROUPS} groups`

export type AggregateArgs = Omit<CollectionArgs, 'sort' | 'limit' | 'page' | 'cursor'> & { groupBy?: readonly string[] | null }

/** How the service reads an aggregate: the same function REST's answers call. */
type RunAggregate = (caller: Caller | null, request: AggregateQuery) => Promise<AggregateResult>

/** What an aggregate field was asked: its arguments, read by the fields under it. */
export interface Asked {
  readonly args: AggregateArgs
}

/**
 * The resolvers of `<list>Aggregate` (`field`) and of its type (`typeResolvers`, under `<type>Aggregate`):
 * `aggregate` reads every row as one group, `groups` reads the groups; each only when selected.
 */
export function aggregateResolvers(type: string, spec: CollectionSpec, run: RunAggregate) {
  const functions = aggregatesOf(spec)
  const read = (asked: Asked, context: GraphQLContext, groupBy: readonly string[]) => {
    const query = toCollectionQuery(spec, asked.args, { withTotal: false })
    const keys = [...new Set(groupBy)].map((name) => ({ name, field: spec.fields.get(name) as FieldSpec }))
    const aggregation: Aggregation = { groupBy: keys, aggregates: functions, order: keys.map(({ name }) => ({ name, descending: false })) }
    return run(context.caller, { query, aggregation })
  }
  return {
    field: (_: unknown, args: AggregateArgs): Asked => ({ args }),
    typeResolvers: {
      [`${type}Aggregate`]: {
        aggregate: async (asked: Asked, _args: unknown, context: GraphQLContext) => {
          const { groups } = await read(asked, context, [])
          return aggregateFieldsOf(spec, groups[0] ?? {})
        },
        groups: async (asked: Asked, _args: unknown, context: GraphQLContext) => {
          const groupBy = asked.args.groupBy ?? []
          const { groups } = await read(asked, context, groupBy)
          return groups.map((group) => ({
            keys: Object.fromEntries(groupBy.map((name) => [name, group[name]])),
            aggregate: aggregateFieldsOf(spec, group),
          }))
        },
      },
    },
  }
}

/** `count()`, and every function over every field it fits, named `<function>_<field>`. */
function aggregatesOf(spec: CollectionSpec): Aggregate[] {
  const aggregates: Aggregate[] = [{ name: 'count', function: 'count', field: undefined }]
  for (const fn of FIELD_FUNCTIONS) for (const field of fieldsFitting(spec, fn)) aggregates.push({ name: `${fn}_${field.name}`, function: fn, field })
  return aggregates
}

/** A group's values as `{count, min: {...}, max: {...}, sum: {...}, avg: {...}}`. */
function aggregateFieldsOf(spec: CollectionSpec, group: Readonly<Record<string, unknown>>) {
  const fields: Record<string, unknown> = { count: group.count ?? 0 }
  for (const fn of FIELD_FUNCTIONS) fields[fn] = Object.fromEntries(fieldsFitting(spec, fn).map((field) => [field.name, group[`${fn}_${field.name}`] ?? null]))
  return fields
}

const capitalized = (word: string): string => `${word[0]?.toUpperCase() ?? ''}${word.slice(1)}`
