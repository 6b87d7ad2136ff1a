// Bulk writes over REST (docs/rest.md, Bulk writes): a JSON array posted to a collection creates
// every item in one transaction, all or nothing, as the service's createMany does. The create
// routes take the item or an array of them (OneOrMany), answer the one resource or the created
// ones in order (Created), and charge the items before the work (chargeItems).
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorObject } from 'ajv'
import { type TSchema, Type } from 'typebox'
import { BULK_MAX_ITEMS, bulkSizeRefusal } from '../core/bulk.js'
import { withThousands } from '../core/digits.js'
import { isoNow } from '../core/instant.js'
import { Timestamp } from '../core/schema-types.js'
import type { AppError } from '../errors.js'
import type { RateLimitCharger } from '../limits/rate-limit.js'
import { ResourceEnvelope } from './resource-reply.js'

/** A create's body: the item, or an array of 1 to BULK_MAX_ITEMS of them (a bulk write). */
export const OneOrMany = <T extends TSchema>(item: T) =>
  Type.Union([
    item,
    Type.Array(item, {
      minItems: 1,
      maxItems: BULK_MAX_ITEMS,
      description: `A bulk write: 1 to ${BULK_MAX_ITEMS} items, created in one transaction, all or nothing.`,
    }),
  ])

/** A bulk write's answer: the created resources in the order of the body's items. */
export const BulkEnvelope = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    meta: Type.Object({ timestamp: Timestamp, created: Type.Integer({ minimum: 1, description: 'How many resources the write created.' }) }),
  })

/** A create's 201: the resource, or a bulk write's resources (an array body's). */
export const Created = <T extends TSchema>(item: T) => Type.Union([BulkEnvelope(item), ResourceEnvelope(item)])

/** What a create route's description says of its bulk writes. */
export const bulkWriteNote = (nouns: string): string =>
  ` An array of up to ${withThousands(BULK_MAX_ITEMS)} ${nouns} creates them all in one transaction, or none: \`201\` with \`data\` the created ${nouns} in order (no \`Location\`), charged one point per item.`

/** Whether a create's body is a bulk write's (its schema, OneOrMany, has let through nothing else than one item or an array of them). */
export const isBulk = <T>(body: T | readonly T[]): body is readonly T[] => Array.isArray(body)

/** The body of a bulk write's 201. */
export const bulkBody = <T>(items: T[]) => ({ data: items, meta: { timestamp: isoNow(), created: items.length } })

/**
 * Takes a bulk write's points before it runs: one per item, the point the request took on arrival
 * the first. RATE_LIMITED, nothing written, when the allowance cannot pay them all.
 */
export async function chargeItems(charge: RateLimitCharger | undefined, request: FastifyRequest, reply: FastifyReply, items: number): Promise<void> {
  if (items > 1) await charge?.(request, reply, items - 1)
}

/**
 * A body array past the bound of a bulk write (413), or empty (400): the refusal its validation
 * errors call for, in place of a field's; undefined for any other body.
 */
export function bulkBoundRefusal(errors: readonly ErrorObject[], body: unknown): AppError | undefined {
  if (!Array.isArray(body)) return undefined
  const bound = errors.some((error) => error.instancePath === '' && (error.keyword === 'maxItems' || error.keyword === 'minItems'))
  return bound ? bulkSizeRefusal(body.length) : undefined
}
