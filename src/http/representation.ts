// The representation a GET route answers with, as the query asks (`select`, `include` and
// `<relation>.limit`: src/collections/embedding.ts): the item schema such answers are written with,
// what a route declares `select` and `include` may name (its config's `representation`), the
// request's choice read and checked, and what the embedded relations cost before they are read.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { type TObject, type TOptional, type TProperties, type TSchema, Type } from 'typebox'
import { type Embeddable, embeddingPoints, parseRepresentation, type Representation } from '../collections/embedding.js'
import type { RateLimitCharger } from '../limits/rate-limit.js'
import { namingWordsGiven } from './query-parameters.js'
import type { RepresentationShape } from './route-config.js'

/** The names an Embeddable offers, for the route's `config.representation`. */
export function representationShapeOf<T>(embeddable: Embeddable<T>): RepresentationShape {
  const relations = Object.entries(embeddable.relations)
  return {
    fields: embeddable.fields,
    relations: Object.fromEntries(relations.map(([name, relation]) => [name, relation.kind])),
    references: Object.fromEntries(
      relations.flatMap(([name, relation]) => (relation.kind === 'one' ? [[name, { foreignKey: relation.foreignKey, resource: relation.resource }]] : [])),
    ),
  }
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
  try {
    return parseRepresentation(embeddable, request.query as Record<string, unknown>)
  } catch (error) {
    throw namingWordsGiven(request, error)
  }
}

/**
 * Takes from the caller's rate limit what the representation's relations may read for `items`
 * items (embeddingPoints), before they run: RATE_LIMITED, with nothing read, when it is short;
 * nothing when rate limiting is off (`charge` undefined).
 */
export async function chargeEmbedding<T>(
  charge: RateLimitCharger | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
  representation: Representation<T>,
  items: number,
): Promise<void> {
  await charge?.(request, reply, embeddingPoints(representation, items))
}
