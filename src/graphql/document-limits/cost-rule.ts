// The cost rule: what an operation costs outside introspection (src/graphql/document-limits/cost-measure.ts)
// may be GRAPHQL_MAX_COST at most; introspection has a bound of its own.
//
// The standard introspection query multiplies schema-sized lists three deep (types, fields, args),
// and grows with the schema. On this project's schema (lists of up to 31 items)
// getIntrospectionQuery() costs 1,038,072 and GraphiQL's variant 1,095,673: more than three
// nested lists at maxLimit (1,010,101), which maxCost must refuse. Introspection's bound is twice
// what getIntrospectionQuery() with every option costs on the schema at hand (2,191,526 here),
// computed once per schema, so GraphiQL keeps working as the schema grows while
// `types { fields { type { fields { ...` is refused. What introspection is charged counts its lists
// by their average length instead (src/graphql/pipeline/metering.ts): about the fields it answers.
import { getIntrospectionQuery, parse, type GraphQLSchema, type ValidationRule } from 'graphql'
import { costMeasure, type ListSizes, mainCost } from './cost-measure.js'
import { limitError, nameOf, sentence } from './limit-error.js'
import { measureOperations, operationRule } from './measure.js'

/** How far an introspection subtree may cost beyond the full standard introspection query. */
const INTROSPECTION_COST_FACTOR = 2

const introspectionCostBounds = new WeakMap<GraphQLSchema, number>()

/** What introspection may cost on this schema: a multiple of the full standard introspection query. */
export function introspectionCostBound(schema: GraphQLSchema): number {
  let bound = introspectionCostBounds.get(schema)
  if (bound !== undefined) return bound
  const query = parse(
    getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    }),
  )
  // The page sizes do not matter: introspection lists have no `limit`.
  const measured = measureOperations(query, costMeasure({ defaultLimit: 1, maxLimit: 1 }, schema))
  bound = Math.ceil(INTROSPECTION_COST_FACTOR * (measured[0]?.[1].introspection ?? 0))
  introspectionCostBounds.set(schema, bound)
  return bound
}

/** Costs past 2^53 are reported as 2^53 - 1: the exact figure no longer matters, and JSON can carry it. */
const reported = (cost: number): number => Math.min(Math.ceil(cost), Number.MAX_SAFE_INTEGER)

export function costRule(maxCost: number, listSizes: ListSizes): ValidationRule {
  return operationRule(
    (schema) => costMeasure(listSizes, schema),
    (context, operation, cost) => {
      const main = mainCost(cost, listSizes)
      const { introspection } = cost
      if (main > maxCost) {
        const how = cost.reads
          ? 'each field 1, each search, count and page by offset the rows it may read, times the page size of each list it is in'
          : 'each field 1, times the page size of each list it is in'
        const message = `${sentence(nameOf(operation))} costs ${reported(main)} (${how}); the limit is ${maxCost}`
        return limitError(message, operation, 'cost', reported(main), maxCost)
      }
      const introspectionMax = introspectionCostBound(context.getSchema())
      if (introspection > introspectionMax) {
        const message = `Introspection in ${nameOf(operation)} costs ${reported(introspection)}; the limit for introspection is ${introspectionMax}`
        return limitError(message, operation, 'cost', reported(introspection), introspectionMax)
      }
      return undefined
    },
  )
}
