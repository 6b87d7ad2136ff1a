// The REST envelope (spec §2): {data, meta: {timestamp}} for one resource, {data: [], meta:
// {timestamp, pagination}} for a collection, {error: {code, message, details?}} for a failure.
import { type TSchema, Type } from 'typebox'
import type { ErrorCode, ErrorDetail } from '../errors.js'
import type { Page } from '../pagination.js'
import { Timestamp } from '../schema-types.js'

export const PagePagination = Type.Object({
  page: Type.Integer({ minimum: 1 }),
  limit: Type.Integer({ minimum: 1 }),
  total: Type.Integer({ minimum: 0 }),
  pages: Type.Integer({ minimum: 0 }),
})

export const SingleEnvelope = <T extends TSchema>(data: T) =>
  Type.Object({ data, meta: Type.Object({ timestamp: Timestamp }) })

export const CollectionEnvelope = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    meta: Type.Object({ timestamp: Timestamp, pagination: PagePagination }),
  })

export function single<T>(data: T) {
  return { data, meta: { timestamp: new Date().toISOString() } }
}

export function collection<T>(page: Page<T>) {
  return {
    data: page.items,
    meta: {
      timestamp: new Date().toISOString(),
      pagination: {
        page: page.page,
        limit: page.limit,
        total: page.total,
        pages: Math.ceil(page.total / page.limit),
      },
    },
  }
}

export function errorBody(code: ErrorCode, message: string, details?: readonly ErrorDetail[]) {
  return { error: details?.length ? { code, message, details } : { code, message } }
}
