// One error vocabulary for every transport: a closed set of codes, each with its HTTP status.
// REST writes them as {error: {code, message, details}}; GraphQL as errors[].extensions.code.
// A retired code is never reused.

export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

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

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: readonly ErrorDetail[],
    options: { retryAfterS?: number } = {},
  ) {
    super(message)
    this.name = 'AppError'
    this.status = ERROR_STATUS[code]
    this.retryAfterS = options.retryAfterS
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`)

export const unauthenticated = (message = 'Authentication required: send Authorization: Bearer <token>'): AppError =>
  new AppError('UNAUTHENTICATED', message)

export const forbidden = (message: string): AppError => new AppError('FORBIDDEN', message)
