// One resource over REST (docs/rest.md, Envelopes and errors): {data, meta: {timestamp}}, as a
// list's page is written by collection-reply.ts. A GET answer's item is represented as the query
// asks (representation.ts).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { type TSchema, Type } from 'typebox'
import { type Representation, representOne, type Shown } from '../collections/embedding.js'
import { Timestamp } from '../core/schema-types.js'
import type { RateLimitCharger } from '../limits/rate-limit.js'
import { chargeEmbedding } from './representation.js'
import { isoNow } from '../core/instant.js'

/** The schema of an answer that holds one resource, `data` its item's schema. */
export const ResourceEnvelope = <T extends TSchema>(data: T) => Type.Object({ data, meta: Type.Object({ timestamp: Timestamp }) })

/** The body of an answer that holds one resource. */
export function resourceBody<T>(data: T) {
  return { data, meta: { timestamp: isoNow() } }
}

/** resourceBody(item), the item represented as asked (readRepresentation; its embeddings charged first); without a representation, at once. */
export function representedResourceBody<T extends { id: number }>(
  request: FastifyRequest,
  reply: FastifyReply,
  representation: Representation<T> | undefined,
  item: T,
  charge: RateLimitCharger | undefined,
) {
  if (representation === undefined) return resourceBody<Shown<T>>(item)
  return chargeEmbedding(charge, request, reply, representation, 1)
    .then(() => representOne(representation, request.caller, item))
    .then((shown) => resourceBody(shown))
}
