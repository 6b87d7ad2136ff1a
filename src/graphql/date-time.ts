// The DateTime scalar: an instant as ISO 8601 text with an offset, read by the same rules as the
// REST query language's timestamps (core/instant.ts). A value that names no valid instant is
// refused while the document or its variables are checked (BAD_REQUEST), never in a resolver.
import { GraphQLError, Kind, type ValueNode } from 'graphql'
import { INSTANT_DESCRIPTION, parseInstant } from '../core/instant.js'

// No @specifiedBy: the date-time scalar specification (RFC 3339) requires seconds, which REST's
// timestamps do not (2024-01-21T00:00Z), and both transports take the same text.
export const DATE_TIME_SDL = `"An instant, as ISO 8601 with an offset (Z or ±hh:mm) in the years 0001 to 9999: 2024-01-21T00:00:00.000Z. Answers are in UTC with milliseconds, as over REST; inputs may carry any offset and are read as the instant they name."
scalar DateTime`

/**
 * DateTime's behaviour, set on the SDL's scalar (attachResolvers in schema.ts).
 * Refusals are GraphQLErrors, which graphql-js reports as they are: another error would reach the
 * error formatter as a failure of ours.
 */
export const dateTimeScalar = {
  /** The services give timestamps as the REST API does (ISO 8601, UTC, milliseconds): sent as they are. */
  serialize(value: unknown): string {
    if (typeof value === 'string') return value
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString()
    throw new GraphQLError(`DateTime cannot represent ${typeof value} value`)
  },
  parseValue(value: unknown): string {
    return instantOf(value)
  },
  parseLiteral(node: ValueNode): string {
    if (node.kind !== Kind.STRING) throw new GraphQLError(`DateTime must be a string: ${INSTANT_DESCRIPTION}`, { nodes: node })
    return instantOf(node.value, node)
  },
}

function instantOf(value: unknown, node?: ValueNode): string {
  const instant = typeof value === 'string' ? parseInstant(value) : undefined
  if (instant === undefined) throw new GraphQLError(`DateTime must be ${INSTANT_DESCRIPTION}`, { nodes: node })
  return instant
}
