// The body every REST failure is written as (README: Envelopes and errors): {error: {code, message,
// details?}}. One function writes it, for the error handler, the rate limit's refusals answered as
// they leave, and the requests Node's parser cannot read, answered on the socket.
import { Type } from 'typebox'
import { ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../errors.js'

/** The error body's schema (the API description names it `Error`; errorBody writes it). */
export const ErrorBody = Type.Object({
  error: Type.Object({
    code: Type.Unsafe<ErrorCode>({ type: 'string', enum: Object.keys(ERROR_STATUS), description: 'Stable; never reused for another meaning.' }),
    message: Type.String({ description: 'For people; may change.' }),
    details: Type.Optional(
      Type.Array(
        Type.Object({
          field: Type.String({ description: 'The body field (a JSON path) or query parameter at fault.' }),
          message: Type.String(),
        }),
        { description: 'One item per offending field or parameter.' },
      ),
    ),
  }),
})

/** The error body of a failure; `details` only when there are some. */
export function errorBody(code: ErrorCode, message: string, details?: readonly ErrorDetail[]) {
  return { error: details?.length ? { code, message, details } : { code, message } }
}
