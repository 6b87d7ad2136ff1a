// The REST envelope (spec §2): {data, meta: {timestamp}} for one resource, {data: [], meta:
// {timestamp, pagination}} for a collection (see collection-reply.ts), {error: {code, message,
// details?}} for a failure.
import { type TSchema, Type } from 'typebox'
import { ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../errors.js'
import { Timestamp } from '../core/schema-types.js'

export const SingleEnvelope = <T extends TSchema>(data: T) => Type.Object({ data, meta: Type.Object({ timestamp: Timestamp }) })

export function single<T>(data: T) {
  return { data, meta: { timestamp: new Date().toISOString() } }
}

/** The error body every failure is written as (the API description names it; errorBody writes it). */
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

export function errorBody(code: ErrorCode, message: string, details?: readonly ErrorDetail[]) {
  return { error: details?.length ? { code, message, details } : { code, message } }
}
