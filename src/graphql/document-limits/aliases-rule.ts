// The aliases rule: one selection set may hold GRAPHQL_MAX_ALIASES aliased fields, counting those
// of the fragments spread or inlined into it; the message names the selection set with the most.
import type { ASTNode, ValidationRule } from 'graphql'
import { limitError, nameOf, sentence } from './limit-error.js'
import { type Measure, operationRule } from './measure.js'

interface Aliases {
  /** Aliased fields in this selection set, with those of fragments spread or inlined into it. */
  readonly count: number
  /** The selection set below with the most, and the field (or operation) it belongs to. */
  readonly worst: { readonly count: number; readonly owner: ASTNode } | undefined
}

const worse = (a: Aliases['worst'], b: Aliases['worst']): Aliases['worst'] => ((b?.count ?? 0) > (a?.count ?? 0) ? b : a)

const aliasesMeasure: Measure<Aliases> = {
  empty: { count: 0, worst: undefined },
  field: (node, selections) => ({
    count: node.alias === undefined ? 0 : 1,
    worst: worse(selections.worst, { count: selections.count, owner: node }),
  }),
  add: (a, b) => ({ count: a.count + b.count, worst: worse(a.worst, b.worst) }),
}

export function aliasesRule(maxAliases: number): ValidationRule {
  return operationRule(
    () => aliasesMeasure,
    (_context, operation, value) => {
      const worst = worse(value.worst, { count: value.count, owner: operation })
      if (worst === undefined || worst.count <= maxAliases) return undefined
      const message = `${sentence(nameOf(operation))} has ${worst.count} aliased fields in one selection set; the limit is ${maxAliases}`
      return limitError(message, worst.owner, 'aliases', worst.count, maxAliases)
    },
  )
}
