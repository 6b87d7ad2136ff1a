// The depth rule: an operation's fields may nest GRAPHQL_MAX_DEPTH levels. Introspection (`__schema`,
// `__type` and everything under them) is measured apart, with a bound of its own
// (INTROSPECTION_MAX_DEPTH), as deep as GraphiQL's introspection query needs and some room.
// `__typename` is an ordinary field: it is one level deep.
import type { FieldNode, ValidationRule } from 'graphql'
import { limitError, nameOf, sentence } from './limit-error.js'
import { isIntrospection, type Measure, operationRule } from './measure.js'

/**
 * getIntrospectionQuery() is 15 levels deep (`__schema types fields args type`, nine `ofType`, then
 * `name`), whatever its options but `typeDepth`; the room is for a client asking a deeper `ofType`
 * chain. Amplification (`fields { type { fields ...`) is the cost bound's business, and graphql's
 * own MaxIntrospectionDepthRule's.
 */
const INTROSPECTION_MAX_DEPTH = 20

/** A chain of nested fields, outermost first; chains share their tails. */
interface Path {
  readonly field: FieldNode
  readonly length: number
  readonly rest: Path | undefined
}

interface Depth {
  /** The deepest chain outside introspection. */
  readonly main: Path | undefined
  /** The deepest chain under an introspection field, from that field down. */
  readonly introspection: Path | undefined
  /** The deepest chain of any fields: what an introspection field above would measure. */
  readonly all: Path | undefined
}

const lengthOf = (path: Path | undefined): number => path?.length ?? 0
const deeper = (a: Path | undefined, b: Path | undefined): Path | undefined => (lengthOf(b) > lengthOf(a) ? b : a)
const extend = (field: FieldNode, rest: Path | undefined): Path => ({ field, length: 1 + lengthOf(rest), rest })

/** The field at `index` (0 is the outermost): where a path first goes past a limit. */
function fieldAt(path: Path, index: number): FieldNode {
  let at = path
  for (let i = 0; i < index && at.rest !== undefined; i++) at = at.rest
  return at.field
}

const depthMeasure: Measure<Depth> = {
  empty: { main: undefined, introspection: undefined, all: undefined },
  field(node, selections) {
    const all = extend(node, selections.all)
    if (isIntrospection(node)) return { main: undefined, introspection: all, all }
    return { main: extend(node, selections.main), introspection: selections.introspection, all }
  },
  add: (a, b) => ({ main: deeper(a.main, b.main), introspection: deeper(a.introspection, b.introspection), all: deeper(a.all, b.all) }),
}

export function depthRule(maxDepth: number): ValidationRule {
  return operationRule(
    () => depthMeasure,
    (_context, operation, { main, introspection }) => {
      if (main !== undefined && main.length > maxDepth) {
        const message = `${sentence(nameOf(operation))} is ${main.length} levels deep; the limit is ${maxDepth}`
        return limitError(message, fieldAt(main, maxDepth), 'depth', main.length, maxDepth)
      }
      if (introspection !== undefined && introspection.length > INTROSPECTION_MAX_DEPTH) {
        const message = `Introspection in ${nameOf(operation)} is ${introspection.length} levels deep; the limit for introspection is ${INTROSPECTION_MAX_DEPTH}`
        return limitError(message, fieldAt(introspection, INTROSPECTION_MAX_DEPTH), 'depth', introspection.length, INTROSPECTION_MAX_DEPTH)
      }
      return undefined
    },
  )
}
