// The REST envelope (README: Envelopes and errors): {data, meta: {timestamp}} for one resource,
// {data: [], meta: {timestamp, pagination}} for a collection (see collection-reply.ts), {error:
// {code, message, details?}} for a failure. The GET routes represent their items as the query asks
// (`select`, `include`: src/collections/embedding.ts), with the item schema Represented writes.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { type TObject, type TOptional, type TProperties, type TSchema, Type } from 'typebox'
import { type Embeddable, embeddingPoints, parseRepresentation, type Representation, representOne, type Shown } from '../collections/embedding.js'
import type { RateLimitCharger } from '../limits/rate-limit.js'
import { ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../errors.js'
import { Timestamp } from '../core/schema-types.js'
import type { RepresentationShape } from './route-config.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Charges a request more than its 1 point (src/limits/rate-limit.ts); undefined when rate limiting is off. */
    chargeRateLimit: RateLimitCharger | undefined
  }
}

/** The names an Embeddable offers, for the route's config. */
export function shapeOf<T>(embeddable: Embeddable<T>): RepresentationShape {
  return {
    fields: embeddable.fields,
    relations: Object.fromEntries(Object.entries(embeddable.relations).map(([name, relation]) => [name, relation.kind])),
  }
}

export const SingleEnvelope = <T extends TSchema>(data: T) => Type.Object({ data, meta: Type.Object({ timestamp: Timestamp }) })

export function single<T>(data: T) {
  return { data, meta: { timestamp: new Date().toISOString() } }
}

const SELECTABLE = 'Present unless `select` leaves it out.'

type RepresentedProperties<P extends TProperties, R extends TProperties> = { [K in keyof P]: K extends 'id' ? P[K] : TOptional<P[K]> } & {
  [K in keyof R]: TOptional<R[K]>
}

/**
 * The item of a GET answer that takes `select` and `include`: `id` always, every other field only
 * when selected, then the relations `include` embeds (a relation named like a field takes its place,
 * a comment's `author`). The fields keep their order, so a whole item is written as the strict
 * schema writes it (the ETag a write's If-Match is checked against is the same).
 */
export function Represented<P extends TProperties, R extends TProperties>(item: TObject<P>, relations: R): TObject<RepresentedProperties<P, R>> {
  const properties: Record<string, TSchema> = {}
  for (const [name, schema] of Object.entries(item.properties)) {
    const description = (schema as { description?: string }).description
    properties[name] =
      name === 'id' ? schema : Type.Optional({ ...schema, description: description === undefined ? SELECTABLE : `${description} ${SELECTABLE}` })
  }
  for (const [name, schema] of Object.entries(relations)) properties[name] = Type.Optional(schema)
  return Type.Object(properties) as unknown as TObject<RepresentedProperties<P, R>>
}

/** The request's `select`, `include` and `<relation>.limit`, checked; undefined when it names none (the whole item). */
export function readRepresentation<T>(request: FastifyRequest, embeddable: Embeddable<T>): Representation<T> | undefined {
  return parseRepresentation(embeddable, request.query as Record<string, unknown>)
}

/** single(item), the item represented as asked (its embeddings charged first); without a representation, at once. */
export function representedSingle<T extends { id: number }>(
  request: FastifyRequest,
  reply: FastifyReply,
  representation: Representation<T> | undefined,
  item: T,
) {
  if (representation === undefined) return single<Shown<T>>(item)
  return chargeEmbedding(request, reply, representation, 1)
    .then(() => representOne(representation, request.caller, item))
    .then((shown) => single(shown))
}

/**
 * Takes from the caller's rate limit what the representation's relations may read for `items`
 * items (embeddingPoints), before they run: RATE_LIMITED, with nothing read, when it is short.
 */
export async function chargeEmbedding<T>(request: FastifyRequest, reply: FastifyReply, representation: Representation<T>, items: number): Promise<void> {
  await request.server.chargeRateLimit?.(request, reply, embeddingPoints(representation, items))
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
