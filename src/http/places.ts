// Where a resource is addressed. A child resource is served under its parent
// (`/users/{userId}/posts/{postId}`) and at the top level (`/posts/{postId}`), as JSONPlaceholder
// addresses it: the same operations, through the same service calls, the parent named by the path in
// one place and, in the other, by a filter on lists and by the body on a create. A feature's routes
// register each operation once per place.
import type { TObject } from 'typebox'
import { AppError, isAppError } from '../errors.js'

/** The operations a place serves, by their operationId there. */
export interface PlaceOperations {
  readonly list: string
  readonly get: string
  readonly create: string
  readonly replace?: string
  readonly update: string
  readonly remove: string
}

export interface Place {
  /** The collection's path (Fastify's form: `/users/:userId/posts`). */
  readonly collection: string
  /** One item's path. */
  readonly item: string
  /** The collection path's parameters; undefined at the top level. */
  readonly collectionParams?: TObject
  readonly itemParams: TObject
  readonly operations: PlaceOperations
  /** The list's summary in the API description. */
  readonly listed: string
}

/** A path parameter a place may or may not have (the parent's id, absent at the top level). */
export const parentOf = (params: unknown, name: string): string | undefined => (params as Readonly<Record<string, string | undefined>>)[name]

/** The item's id, which every place's item path has. */
export const itemIdOf = (params: unknown, name: string): string => (params as Readonly<Record<string, string>>)[name] as string

/**
 * A create whose parent the body names (`{"userId": 3, …}` on `POST /posts`): a parent that is not
 * there is a field of the body in error (422, the field named), not a missing address (the path is
 * there). The service answers the same NOT_FOUND it would for a parent named by the path; for a
 * bulk write's item, with the item named in its details (`[3]`), which becomes `[3].userId`.
 */
export async function parentNamedInBody<T>(field: string, noun: string, create: Promise<T>): Promise<T> {
  try {
    return await create
  } catch (error) {
    if (!isAppError(error) || error.code !== 'NOT_FOUND') throw error
    const message = `no ${noun} has this id, or it is not visible to you`
    const items = (error.details ?? []).filter((detail) => /^\[\d+\]$/.test(detail.field))
    const details = items.length === 0 ? [{ field, message }] : items.map((item) => ({ field: `${item.field}.${field}`, message }))
    throw new AppError('VALIDATION_ERROR', 'The request body is not valid', details)
  }
}
