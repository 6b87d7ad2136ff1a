// What a thrown value becomes before any transport answers with it, the same for REST, GraphQL and
// the subscription transports: an AppError stays as it is (its words are meant for the client); a
// database error the service expects is put in its words (src/db's one translation: the database
// handle throws most already translated); anything else is a bug, masked as INTERNAL_ERROR with one
// message that quotes the request id, its detail only in the log. In http/, the transport layer the
// GraphQL endpoint and its subscription transports are built on.
import { databaseAppError } from '../db/database-errors.js'
import { AppError, isAppError } from '../errors.js'

/** The request a failure belongs to: its id, quoted to the client, and its logger (pino's, or anything shaped like it). */
export interface ErrorScope {
  readonly id: string
  readonly log: {
    warn(fields: object, message: string): void
    error(fields: object, message: string): void
  }
}

/** The one message an unexpected failure is answered with: the request id finds its log lines. */
export const maskedMessage = (requestId: string): string => `Something went wrong on our side; quote request id ${requestId}`

/**
 * `thrown` as the AppError a client may see. A failure underneath put in our words (the database
 * busy or out of reach, a row a write refers to gone) is logged as a warning with its cause;
 * anything unexpected is logged as an error and masked. `logFields` are added to the log line (the
 * GraphQL path of the failing field).
 */
export function toAppError(thrown: unknown, scope: ErrorScope, logFields: object = {}): AppError {
  const known = isAppError(thrown) ? thrown : databaseAppError(thrown)
  if (known !== undefined) {
    if (known.cause !== undefined) scope.log.warn({ ...logFields, err: known.cause }, known.message)
    return known
  }
  scope.log.error({ ...logFields, err: thrown }, 'unexpected error')
  return new AppError('INTERNAL_ERROR', maskedMessage(scope.id))
}
