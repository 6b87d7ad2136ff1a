// The directives rule: a node (operation, fragment, variable, field, spread) may carry
// GRAPHQL_MAX_DIRECTIVES directives. It is a property of each node as written, so it is checked in
// graphql's own pass, reporting at most once per operation or fragment (a fragment is reported
// once, whoever spreads it).
import { Kind, type ASTNode, type ASTVisitor, type FragmentDefinitionNode, type OperationDefinitionNode, type ValidationRule } from 'graphql'
import { limitError } from './limit-error.js'

const DIRECTIVE_HOLDERS: Record<string, string> = {
  [Kind.OPERATION_DEFINITION]: 'operation',
  [Kind.FRAGMENT_DEFINITION]: 'fragment',
  [Kind.VARIABLE_DEFINITION]: 'variable',
  [Kind.FIELD]: 'field',
  [Kind.FRAGMENT_SPREAD]: 'fragment spread',
  [Kind.INLINE_FRAGMENT]: 'inline fragment',
}

export function directivesRule(maxDirectives: number): ValidationRule {
  return (context) => {
    let reported = false
    const check = (node: ASTNode & { readonly directives?: readonly unknown[] }) => {
      const count = node.directives?.length ?? 0
      if (reported || count <= maxDirectives) return
      reported = true
      const message = `A ${DIRECTIVE_HOLDERS[node.kind]} carries ${count} directives; the limit is ${maxDirectives}`
      context.reportError(limitError(message, node, 'directives', count, maxDirectives))
    }
    const definition = (node: OperationDefinitionNode | FragmentDefinitionNode) => {
      reported = false
      check(node)
    }
    const visitor: ASTVisitor = {
      OperationDefinition: definition,
      FragmentDefinition: definition,
      VariableDefinition: check,
      Field: check,
      FragmentSpread: check,
      InlineFragment: check,
    }
    return visitor
  }
}
