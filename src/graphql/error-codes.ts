// The `extensions.code` values a GraphQL field can produce, written in its SDL description so they
// show in GraphiQL's docs pane and in introspection: the description ends with one line,
// "Errors: `NOT_FOUND` (no such user); `BAD_REQUEST` (…).", the codes in backticks (machine-checkable
// with ERRORS_LINE). Codes any operation can meet (a refused token, the rate limit, the document's
// limits, a store away) are said once, on the root types (REQUEST_ERRORS_DOC), not on every field.
// A code outside the catalogue (src/errors.ts) fails at start-up, when the SDL is built.
import { ERROR_CATALOGUE, type ErrorCode } from '../errors.js'

/** Request-level codes of the GraphQL protocol itself (pipeline/persisted-queries.ts), outside the catalogue on purpose. */
export const GRAPHQL_REQUEST_CODES = ['PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED', 'PERSISTED_QUERY_NOT_ALLOWED'] as const

export type DocumentedCode = ErrorCode | (typeof GRAPHQL_REQUEST_CODES)[number]

/** Each code a field can produce, and when, in a few words. */
export type FieldErrors = Partial<Record<ErrorCode, string>>

/** The last line of a description that lists codes; group 1 holds them, each in backticks. */
export const ERRORS_LINE = /^Errors: (.+)\.$/m

/** Whether a code is one a GraphQL error may carry: in the catalogue, or one of the protocol's request codes. */
export const isDocumentedCode = (code: string): code is DocumentedCode =>
  Object.hasOwn(ERROR_CATALOGUE, code) || (GRAPHQL_REQUEST_CODES as readonly string[]).includes(code)

/** The codes an `Errors:` line lists, in its order; [] when the description has none. */
export function codesInDescription(description: string | null | undefined): string[] {
  const line = ERRORS_LINE.exec(description ?? '')?.[1]
  return line === undefined ? [] : [...line.matchAll(/`([A-Z_]+)`/g)].map((match) => match[1] as string)
}

/** "Errors: `A` (when); `B` (when)." for `errors`, refusing (at start-up) a code the catalogue lacks. */
export function errorsLine(errors: Readonly<Record<string, string>>): string {
  const entries = Object.entries(errors)
  if (entries.length === 0) throw new Error('An Errors line lists at least one code')
  for (const [code] of entries) {
    if (!isDocumentedCode(code)) throw new Error(`Unknown error code in the GraphQL schema's docs: ${code} (not in ERROR_CATALOGUE, src/errors.ts)`)
  }
  return `Errors: ${entries.map(([code, when]) => `\`${code}\` (${when})`).join('; ')}.`
}

/**
 * A field's SDL description, as a block string: `text`, then its Errors line. `errors` is typed by
 * the catalogue's codes, so a typo fails the type check too.
 */
export const fieldDescription = (text: string, errors: FieldErrors): string => blockString(`${text}\n\n${errorsLine(errors)}`)

/** The codes every operation may meet whatever its fields, said once on Query, Mutation and Subscription. */
export const REQUEST_ERRORS_DOC = errorsLine({
  BAD_REQUEST:
    'the document does not parse or validate, a variable is bad, or it is over the depth, alias or cost limits; or a persisted query whose hash does not match',
  UNAUTHENTICATED: 'a token sent that is not valid',
  RATE_LIMITED: 'over the allowance; extensions.retryAfter says when to retry',
  PAYLOAD_TOO_LARGE: 'a body over 1 MiB, or an answer over 16 MiB',
  UNSUPPORTED_MEDIA_TYPE: 'a body that is not JSON',
  NOT_ACCEPTABLE: 'Accept admits no GraphQL or JSON answer',
  METHOD_NOT_ALLOWED: 'a mutation over GET',
  PERSISTED_QUERY_NOT_FOUND: 'a hash not yet registered: send the query with it',
  PERSISTED_QUERY_NOT_SUPPORTED: 'persisted queries are off',
  PERSISTED_QUERY_NOT_ALLOWED: 'only trusted documents are accepted, and this is not one',
  SERVICE_UNAVAILABLE: 'the store is busy or unreachable, at any field; extensions.retryAfter says when to retry',
  INTERNAL_ERROR: 'an unexpected failure at any field; the message quotes the request id',
})

/** A root type's description: what it is, then the request-level codes. */
export const rootDescribed = (text: string): string =>
  blockString(`${text}\n\nEvery operation may also fail as a whole, or at any field, with these codes (not repeated on each field).\n${REQUEST_ERRORS_DOC}`)

function blockString(text: string): string {
  return `"""\n${text.replaceAll('"""', '\\"""')}\n"""`
}
