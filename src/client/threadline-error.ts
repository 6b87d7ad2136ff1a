// The one error the client throws for an answer the service refused: the REST error body
// ({error: {code, message, details?}}) with the HTTP status beside it.

export interface ThreadlineErrorDetail {
  /** The body field (a JSON path) or query parameter at fault. */
  field: string
  message: string
}

export class ThreadlineError extends Error {
  override readonly name = 'ThreadlineError'

  constructor(
    /** The HTTP status (429, 401, 404, ...). */
    readonly status: number,
    /** The service's stable code (`RATE_LIMITED`, `NOT_FOUND`, ...); `HTTP_<status>` when the body had none. */
    readonly code: string,
    message: string,
    readonly details?: ThreadlineErrorDetail[],
  ) {
    super(message)
  }

  /** Builds the error from an answer's status and its (parsed) body, whatever shape the body has. */
  static fromBody(status: number, body: unknown): ThreadlineError {
    const error = isRecord(body) && isRecord(body.error) ? body.error : undefined
    const code = typeof error?.code === 'string' ? error.code : `HTTP_${status}`
    const message = typeof error?.message === 'string' ? error.message : `The service answered ${status}`
    const details = Array.isArray(error?.details) ? (error.details as ThreadlineErrorDetail[]) : undefined
    return new ThreadlineError(status, code, message, details)
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null
