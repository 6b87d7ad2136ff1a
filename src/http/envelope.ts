// The REST envelope (spec §2): {data, meta: {timestamp}} for one resource, {data: [], meta:
// {timestamp, pagination}} for a collection (see collection-reply.ts), {error: {code, message,
// details?}} for a failure.
import { type TSchema, Type } from 'typebox'
import type { ErrorCode, ErrorDetail } from '../errors.js'
import { Timestamp } from '../schema-types.js'

export const SingleEnvelope = <T extends TSchema>(data: T) =>
  Type.Object({ data, meta: Type.Object({ timestamp: Timestamp }) })

export function single<T>(data: T) {
  return { data, meta: { timestamp: new Date().toISOString() } }
}

export function errorBody(code: ErrorCode, message: string, details?: readonly ErrorDetail[]) {
  return { error: details?.length ? { code, message, details } : { code, message } }
}
