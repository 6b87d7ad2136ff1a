// The refusal every document limit reports: BAD_REQUEST with extensions {limit, value, max}, in a
// message that names the operation the way the others do.
import { GraphQLError, type ASTNode, type OperationDefinitionNode } from 'graphql'
import type { ErrorCode } from '../../errors.js'

export type LimitName = 'depth' | 'cost' | 'aliases' | 'fields' | 'directives'

export function limitError(message: string, node: ASTNode, limit: LimitName, value: number, max: number): GraphQLError {
  const code: ErrorCode = 'BAD_REQUEST'
  return new GraphQLError(message, { nodes: node, extensions: { code, limit, value, max } })
}

/** "the query", "the mutation", or `operation "Name"`: how a message names the operation. */
export function nameOf(operation: OperationDefinitionNode): string {
  return operation.name === undefined ? `the ${operation.operation}` : `operation "${operation.name.value}"`
}

/** A message that opens with nameOf: its first letter in capitals. */
export const sentence = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1)
