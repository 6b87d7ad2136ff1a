// One error vocabulary for every transport: a closed set of codes, each with its HTTP status, a
// title and what it means. REST writes them as {error: {code, message, details}}; GraphQL as
// errors[].extensions.code; the OpenAPI document describes each one. A retired code is never reused.

export interface ErrorEntry {
  readonly status: number
  /** Its name in Title Case; without the spaces, the name of its OpenAPI response (`NotFound`). */
  readonly title: string
  /** When a client meets it, in the words of the OpenAPI document's error responses. */
  readonly description: string
}

/** The catalogue of error codes, in the order the OpenAPI document lists them. */
export const ERROR_CATALOGUE = {
  BAD_REQUEST: {
    status: 400,
    title: 'Bad Request',
    description: 'A query parameter is unknown or has a bad value, or the body is not JSON (`BAD_REQUEST`, with `details`).',
  },
  UNAUTHENTICATED: {
    status: 401,
    title: 'Unauthenticated',
    description: 'No valid bearer token where one is needed, or a token sent that is not valid (`UNAUTHENTICATED`).',
  },
  FORBIDDEN: {
    status: 403,
    title: 'Forbidden',
    description:
      'Signed in, but not allowed to do this (`FORBIDDEN`); or the token\'s scope does not allow it, and `WWW-Authenticate` says `error="insufficient_scope"` with the scope needed.',
  },
  NOT_FOUND: {
    status: 404,
    title: 'Not Found',
    description: 'No such resource, or not under the parent in the path, or not visible to the caller (`NOT_FOUND`).',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    title: 'Method Not Allowed',
    description: 'The path exists, but not with this method; Allow lists the methods it has (`METHOD_NOT_ALLOWED`).',
  },
  NOT_ACCEPTABLE: {
    status: 406,
    title: 'Not Acceptable',
    description: 'Accept admits no JSON (nor, on a list, CSV or NDJSON), or names an unknown API version (`NOT_ACCEPTABLE`).',
  },
  CONFLICT: {
    status: 409,
    title: 'Conflict',
    description:
      'The change conflicts with the data: a taken e-mail address, the last admin (`CONFLICT`); or a request with the same Idempotency-Key is still running (with Retry-After).',
  },
  PRECONDITION_FAILED: {
    status: 412,
    title: 'Precondition Failed',
    description: 'If-Match names no current representation (`PRECONDITION_FAILED`).',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    title: 'Payload Too Large',
    description: 'The body is larger than 1 MiB, a bulk write holds more than 1,000 items, or the answer would be larger than 16 MiB (`PAYLOAD_TOO_LARGE`).',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    title: 'Unsupported Media Type',
    description: 'The body is not application/json or application/merge-patch+json in UTF-8 (`UNSUPPORTED_MEDIA_TYPE`).',
  },
  VALIDATION_ERROR: {
    status: 422,
    title: 'Validation Error',
    description:
      "The body is JSON but breaks the resource's rules (`VALIDATION_ERROR`, one detail per field), or the Idempotency-Key was used for another request (a detail on the header).",
  },
  RATE_LIMITED: { status: 429, title: 'Rate Limited', description: 'Over the allowance (`RATE_LIMITED`); retry after Retry-After seconds.' },
  INTERNAL_ERROR: {
    status: 500,
    title: 'Internal Error',
    description: "Something went wrong on the service's side (`INTERNAL_ERROR`); the message quotes the request id.",
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    title: 'Service Unavailable',
    description: 'The store is busy or unreachable, or the rate limit cannot be checked (`SERVICE_UNAVAILABLE`); retry after Retry-After seconds.',
  },
} as const satisfies Record<string, ErrorEntry>

export type ErrorCode = keyof typeof ERROR_CATALOGUE

/** Each code's HTTP status, read from the catalogue (the REST handler and the error body's schema ask this). */
export const ERROR_STATUS = Object.fromEntries(Object.entries(ERROR_CATALOGUE).map(([code, { status }]) => [code, status])) as {
  readonly [C in ErrorCode]: (typeof ERROR_CATALOGUE)[C]['status']
}

export interface ErrorDetail {
  /** The JSON path of the offending input (`email`, `tags[2]`), or the query parameter's name. */
  field: string
  message: string
}

/** An expected failure: its message and details are safe to show to the caller. */
export class AppError extends Error {
  readonly status: number
  /**
   * Seconds the caller should wait before trying again (an allowance spent, a store away): sent
   * as Retry-After over HTTP and as `extensions.retryAfter` in GraphQL errors.
   */
  readonly retryAfterS: number | undefined
  /**
   * The scope the caller's token lacks (a FORBIDDEN of RFC 6750's insufficient_scope): named in
   * WWW-Authenticate over HTTP.
   */
  readonly requiredScope: string | undefined

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: readonly ErrorDetail[],
    options: { retryAfterS?: number; requiredScope?: string; cause?: unknown } = {},
  ) {
    // The cause, when there is one, is the failure underneath (the database's own error): for the log, never the client.
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'AppError'
    this.status = ERROR_STATUS[code]
    this.retryAfterS = options.retryAfterS
    this.requiredScope = options.requiredScope
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`)

export const unauthenticated = (message = 'Authentication required: send Authorization: Bearer <token>'): AppError => new AppError('UNAUTHENTICATED', message)

export const forbidden = (message: string): AppError => new AppError('FORBIDDEN', message)
