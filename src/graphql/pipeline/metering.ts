// What a GraphQL request takes from the rate limit: points for the work it asks, computed from
// its documents before any of them runs, so that a batch or a document of many fields cannot
// spend more than one request's allowance (docs/decisions/0026-rate-limit-in-points.md: a batch of 10 × 15 aliased searches was
// one request, and held the event loop 25 s).
//
// An operation's points: 1, plus 1 for each top-level mutation field past the first (aliases
// included: each runs its own write; a bulk write's field, 1 per item of its list: createPosts with 1,000
// posts, 1,000), plus 1 for each COST_PER_POINT of its cost past the first
// (the cost rule's figure, src/graphql/document-limits/cost-measure.ts: fields times the page sizes of the lists they
// are in, and the rows searches, counts and offsets may read; introspection's fields too, its lists
// counted by their average length in the schema). A request's points are its
// operations' sum; the HTTP request paid 1 on arrival (src/limits/rate-limit.ts), the rest is
// charged here, at once, or the request is refused with 429 and nothing runs.
//
// An operation the document cannot give (it does not parse, is past the parser's limits, or is
// not found), or whose cost (or introspection's) is past its limit, is refused without running: 1 point. Every
// transport charges these points, through the operation pipeline (src/graphql/pipeline/operation-pipeline.ts).
import { type FieldNode, Kind, OperationTypeNode, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode } from 'graphql'
import { costMeasure, type ListSizes, mainCost } from '../document-limits/cost-measure.js'
import { introspectionCostBound } from '../document-limits/cost-rule.js'
import { measureOperations } from '../document-limits/measure.js'
import { BULK_MAX_ITEMS } from '../../core/bulk.js'

/** Cost per point: an operation costing up to 1,000 (a page of 20 users with their 5 latest posts is 161) takes 1 point. */
export const COST_PER_POINT = 1_000

export interface MeteringOptions {
  schema: () => GraphQLSchema
  listSizes: ListSizes
  /** The cost limit (GRAPHQL_MAX_COST): a costlier operation is refused by validation, and so takes 1 point. */
  maxCost: number
}

/** The points of each operation of a document, by name ('' for an unnamed one). */
type DocumentPoints = ReadonlyMap<string, number>

export interface Metering {
  /** The points of one operation of a parsed document (the operation pipeline parses each text once, and keeps it). */
  pointsOf(operation: { document: DocumentNode; operationName: string | undefined; variables?: Readonly<Record<string, unknown>> }): number
}

export function createMetering(options: MeteringOptions): Metering {
  // By document: the pipeline hands the same parsed document for the same text while it keeps it.
  const cache = new WeakMap<DocumentNode, DocumentPoints>()

  function measure(document: DocumentNode): DocumentPoints {
    const points = new Map<string, number>()
    const { listSizes } = options
    const schema = options.schema()
    const measure = costMeasure(listSizes, schema)
    const charged = costMeasure(listSizes, schema, 'average')
    for (const [[operation, cost], [, introspection]] of zip(measureOperations(document, measure), measureOperations(document, charged))) {
      const main = mainCost(cost, listSizes)
      // Introspection is bounded apart (the cost rule), and charged as any other selection, its lists by their average length.
      const refused = main > options.maxCost || cost.introspection > introspectionCostBound(schema)
      points.set(operation.name?.value ?? '', refused ? 1 : operationPoints(operation, document, main + Math.ceil(introspection.introspection)))
    }
    return points
  }

  return {
    pointsOf({ document, operationName, variables }) {
      let points = cache.get(document)
      if (points === undefined) {
        points = measure(document)
        cache.set(document, points)
      }
      const known = operationName === undefined ? (points.size === 1 ? [...points.values()][0] : undefined) : points.get(operationName)
      if (known === undefined) return 1
      return known + bulkItemsPastFirst(chosenOperation(document, operationName), document, variables ?? {})
    },
  }
}

/** 1, plus 1 per top-level mutation field past the first, plus 1 per COST_PER_POINT of cost past the first. */
export function operationPoints(operation: OperationDefinitionNode, document: DocumentNode, cost: number): number {
  const writes = operation.operation === OperationTypeNode.MUTATION ? Math.max(1, topLevelFields(operation.selectionSet, document)) : 1
  return writes + Math.max(1, Math.ceil(cost / COST_PER_POINT)) - 1
}

/** The operation of the document that runs: the one named, or the only one. */
function chosenOperation(document: DocumentNode, operationName: string | undefined): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)
  return operationName === undefined
    ? operations.length === 1
      ? operations[0]
      : undefined
    : operations.find((operation) => operation.name?.value === operationName)
}

/**
 * A bulk write's items past the first, in every top-level field of a mutation: a field's list
 * arguments (`createPosts(input: [...])`, written in the document or given as variables) are
 * charged one point per item, as REST charges an array body, counted up to the bound a bulk write
 * takes (a longer list is refused without running). Its first item is the field's own point.
 */
function bulkItemsPastFirst(operation: OperationDefinitionNode | undefined, document: DocumentNode, variables: Readonly<Record<string, unknown>>): number {
  if (operation?.operation !== OperationTypeNode.MUTATION) return 0
  let past = 0
  for (const field of topLevelFieldNodes(operation.selectionSet, document).values()) {
    let items = 0
    for (const argument of field.arguments ?? []) {
      const { value } = argument
      if (value.kind === Kind.LIST) items += value.values.length
      else if (value.kind === Kind.VARIABLE) {
        const given = variables[value.name.value]
        if (Array.isArray(given)) items += given.length
      }
    }
    past += Math.max(0, Math.min(items, BULK_MAX_ITEMS) - 1)
  }
  return past
}

/** The top-level fields a mutation runs: one per response key (alias, or name). */
const topLevelFields = (selectionSet: SelectionSetNode, document: DocumentNode): number => topLevelFieldNodes(selectionSet, document).size

/**
 * The top-level fields of a selection, by response key (alias, or name), through the fragments
 * spread or inlined into it — fields of one key are merged and run once, so each fragment needs
 * reading only once.
 */
function topLevelFieldNodes(selectionSet: SelectionSetNode, document: DocumentNode): Map<string, FieldNode> {
  const fragments = new Map(
    document.definitions.flatMap((definition) =>
      definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition.selectionSet] as const] : [],
    ),
  )
  const keys = new Map<string, FieldNode>()
  const read = new Set<string>()
  const pending: SelectionSetNode[] = [selectionSet]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const selection of next.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = (selection.alias ?? selection.name).value
        if (selection.name.value !== '__typename' && !keys.has(key)) keys.set(key, selection)
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        pending.push(selection.selectionSet)
      } else if (!read.has(selection.name.value)) {
        read.add(selection.name.value)
        const fragment = fragments.get(selection.name.value)
        if (fragment !== undefined) pending.push(fragment)
      }
    }
  }
  return keys
}

/** Pairs of the items of two lists of the same length (the same document's operations, measured twice). */
const zip = <A, B>(a: readonly A[], b: readonly B[]): Array<[A, B]> => a.map((item, i) => [item, b[i]!])
