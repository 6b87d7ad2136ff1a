// The fields rule: one selection set may hold GRAPHQL_MAX_FIELDS_PER_SELECTION fields, counting
// those of the fragments spread or inlined into it (a fragment spread twice counts twice); the
// message names the selection set with the most. graphql's OverlappingFieldsCanBeMerged compares
// the fields of one selection set in pairs: this bound, checked before graphql's validation, keeps
// that rule's input small (975 copies of one field took it 110-760 ms to refuse).
import type { ASTNode, ValidationRule } from 'graphql'
import { limitError, nameOf, sentence } from './limit-error.js'
import { type Measure, operationRule } from './measure.js'

interface Fields {
  /** Fields in this selection set, with those of fragments spread or inlined into it. */
  readonly count: number
  /** The selection set below with the most, and the field (or operation) it belongs to. */
  readonly worst: { readonly count: number; readonly owner: ASTNode } | undefined
}

const worse = (a: Fields['worst'], b: Fields['worst']): Fields['worst'] => ((b?.count ?? 0) > (a?.count ?? 0) ? b : a)

const fieldsMeasure: Measure<Fields> = {
  empty: { count: 0, worst: undefined },
  field: (node, selections) => ({ count: 1, worst: worse(selections.worst, { count: selections.count, owner: node }) }),
  add: (a, b) => ({ count: a.count + b.count, worst: worse(a.worst, b.worst) }),
}

export function fieldsRule(maxFields: number): ValidationRule {
  return operationRule(
    () => fieldsMeasure,
    (_context, operation, value) => {
      const worst = worse(value.worst, { count: value.count, owner: operation })
      if (worst === undefined || worst.count <= maxFields) return undefined
      const message = `${sentence(nameOf(operation))} has ${worst.count} fields in one selection set; the limit is ${maxFields}`
      return limitError(message, worst.owner, 'fields', worst.count, maxFields)
    },
  )
}
