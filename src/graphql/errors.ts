// GraphQL errors in the service's vocabulary: every error has `message`, `locations` and `path`
// where they apply, and `extensions.code` from the same closed set as REST (src/errors.ts), with
// `extensions.details` for invalid input. Errors of the request itself (syntax, validation,
// variables, limits) are BAD_REQUEST in graphql-js's own words; anything thrown while executing
// becomes an AppError as for REST (http/to-app-error.ts): an unexpected failure is masked as
// INTERNAL_ERROR and logged with the request id and the field's path.
import type { FastifyBaseLogger } from 'fastify'
import { GraphQLError, type GraphQLFormattedError } from 'graphql'
import { toAppError } from '../http/to-app-error.js'
import type { AppError, ErrorCode, ErrorDetail } from '../errors.js'

export interface RequestScope {
  readonly id: string
  readonly log: FastifyBaseLogger
  /** False where introspection is off: then no refusal suggests a name of the schema. */
  readonly graphqlSuggestions?: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Whether GraphQL refusals may suggest names ("Did you mean …?"): only where introspection is on (set on the GraphQL routes). */
    graphqlSuggestions?: boolean
  }
}

/**
 * graphql-js (16) ends a refusal with "Did you mean …?" naming the fields, arguments, types and
 * enum values closest to a typo, and has no switch for it (17 adds hideSuggestions): with
 * introspection off, that would list the schema a guess at a time. The names it quotes are GraphQL
 * names, which hold no "?".
 */
const SUGGESTION = / Did you mean [^?]*\?$/

export function formatError(error: GraphQLError, request: RequestScope): GraphQLFormattedError {
  const original = error.originalError
  if (error.path === undefined && (original === undefined || original instanceof GraphQLError)) {
    // The document or its variables: graphql-js's message says what is wrong, and where.
    const message = request.graphqlSuggestions === false ? error.message.replace(SUGGESTION, '') : error.message
    return { message, locations: error.locations, extensions: { ...error.extensions, code: 'BAD_REQUEST' } }
  }
  const failure = toAppError(original ?? error, request, { path: error.path })
  return withCode(failure.message, { locations: error.locations, path: error.path }, failure.code, failure.details, failure.retryAfterS)
}

/** An error of the HTTP request itself (bad JSON, a refused token, the rate limit) as a GraphQL error. */
export function requestError(error: AppError): GraphQLFormattedError {
  return withCode(error.message, {}, error.code, error.details, error.retryAfterS)
}

function withCode(
  message: string,
  where: Pick<GraphQLFormattedError, 'locations' | 'path'>,
  code: ErrorCode,
  details?: readonly ErrorDetail[],
  /** Seconds to wait before trying again (AppError.retryAfterS), as `extensions.retryAfter`. */
  retryAfter?: number,
): GraphQLFormattedError {
  const extensions = {
    code,
    ...(details?.length ? { details } : {}),
    ...(retryAfter === undefined ? {} : { retryAfter }),
  }
  return {
    message,
    ...(where.locations === undefined ? {} : { locations: where.locations }),
    ...(where.path === undefined ? {} : { path: where.path }),
    extensions,
  }
}
