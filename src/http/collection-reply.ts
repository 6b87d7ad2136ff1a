// Collections over REST: the query string read into a CollectionQuery for the request's API
// version, and the page written as the envelope's meta.pagination plus a Link header (RFC 8288).
//   v1: {page, limit, total, pages, nextCursor}; with a cursor, {limit, total, nextCursor}
//   v2: {limit, nextCursor, hasMore}; with page, {page, limit, nextCursor, hasMore} — no total
import type { FastifyReply, FastifyRequest } from 'fastify'
import { type TSchema, Type } from 'typebox'
import type { CollectionPage } from '../collections/collection-page.js'
import { type CollectionQuery, parseCollectionQuery } from '../collections/collection-query.js'
import type { CollectionSpec } from '../collections/collection-spec.js'
import { type Embeddable, represent, type Representation, type Shown } from '../collections/embedding.js'
import { pageMetaOf } from '../collections/page-meta.js'
import { Nullable, Timestamp } from '../core/schema-types.js'
import type { RateLimitCharger } from '../limits/rate-limit.js'
import { namingWordsGiven, searchOf } from './query-parameters.js'
import { chargeEmbedding, readRepresentation } from './representation.js'
import { isoNow } from '../core/instant.js'
import { type CollectionSource, exportCollection } from './collection-export.js'
import { exportFormatOf } from './export-formats.js'
import { aggregateBody, readAggregateQuery } from './aggregate-reply.js'
import type { AggregatePayment, AggregateQuery, AggregateResult } from '../collections/aggregation.js'

const Pagination = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1 })),
  limit: Type.Integer({ minimum: 1 }),
  total: Type.Optional(Type.Integer({ minimum: 0, description: 'v1 only. Counted up to 10000: past that, 10000 and totalCapped.' })),
  totalCapped: Type.Optional(Type.Literal(true, { description: 'v1, present when more items match than total says (counting stops at 10000).' })),
  pages: Type.Optional(Type.Integer({ minimum: 0, description: 'v1, page mode only.' })),
  // A type list, not a union: the serializer writes it by its type, where for a union it compiles
  // and runs a validator to choose the branch.
  nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page.' })),
  hasMore: Type.Optional(Type.Boolean({ description: 'v2 only.' })),
})

export const CollectionEnvelope = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), meta: Type.Object({ timestamp: Timestamp, pagination: Pagination }) })

/** The query string as a CollectionQuery; `scope` names the slice the path selects. */
export function readCollectionQuery(request: FastifyRequest, spec: CollectionSpec, scope = ''): CollectionQuery {
  const v2 = request.apiVersion === 2
  try {
    return parseCollectionQuery(spec, request.query as Record<string, unknown>, { defaultMode: v2 ? 'cursor' : 'page', withTotal: !v2, scope })
  } catch (error) {
    throw namingWordsGiven(request, error)
  }
}

export function collectionBody<T>(request: FastifyRequest, reply: FastifyReply, page: CollectionPage<T>) {
  const links = linksFor(request, page)
  if (links !== '') reply.header('link', links)
  return { data: page.items, meta: { timestamp: isoNow(), pagination: paginationOf(request, page) } }
}

/** collectionBody, the items represented as asked (readRepresentation; its embeddings charged first); without a representation, at once. */
export function representedCollectionBody<T extends { id: number }>(
  request: FastifyRequest,
  reply: FastifyReply,
  page: CollectionPage<T>,
  representation: Representation<T> | undefined,
  charge: RateLimitCharger | undefined,
) {
  if (representation === undefined) return collectionBody<Shown<T>>(request, reply, page)
  return chargeEmbedding(charge, request, reply, representation, page.items.length)
    .then(() => represent(representation, request.caller, page.items))
    .then((items) => collectionBody(request, reply, { ...page, items }))
}

/** What a collection GET answers from: its page, and its groups when `select` names a function. */
export interface AnsweredCollection<T extends { id: number }> extends Omit<CollectionSource<T>, 'fields'> {
  readonly embeds: Embeddable<T>
  /** The slice the path selects (readCollectionQuery's `scope`). */
  readonly scope?: string
  /** The groups of an aggregate, with the caller's rights, as the service computes them. */
  readonly aggregate: (query: AggregateQuery, pay: AggregatePayment) => Promise<AggregateResult>
}

/**
 * A collection GET's answer: the query (`scope` names the slice the path selects) and the
 * representation read, then the page as the JSON envelope, or the rows streamed as CSV or NDJSON
 * when Accept prefers one (collection-export.ts); a `select` that names a function answers the
 * aggregate's groups instead, in the format Accept prefers (aggregate-reply.ts).
 */
export async function answerCollection<T extends { id: number }>(
  request: FastifyRequest,
  reply: FastifyReply,
  source: AnsweredCollection<T>,
  charge: RateLimitCharger | undefined,
) {
  const format = exportFormatOf(request.headers.accept)
  const aggregate = readAggregateQuery(request, source.spec, source.scope)
  if (aggregate !== undefined) return aggregateBody(request, reply, format, charge, aggregate, (pay) => source.aggregate(aggregate, pay))
  const query = readCollectionQuery(request, source.spec, source.scope)
  const shown = readRepresentation(request, source.embeds)
  if (format !== undefined) return exportCollection(request, reply, format, { ...source, fields: source.embeds.fields }, query, shown, charge)
  return representedCollectionBody(request, reply, await source.read(query, shown?.select), shown, charge)
}

function paginationOf<T>(request: FastifyRequest, page: CollectionPage<T>) {
  const meta = pageMetaOf(page)
  const inPages = meta.page !== undefined
  if (request.apiVersion === 2) {
    return { ...(inPages ? { page: meta.page } : {}), limit: meta.limit, nextCursor: meta.nextCursor, hasMore: meta.hasMore }
  }
  // v1 always counts; an uncounted page would say 0 items in 0 pages.
  const total = meta.total ?? 0
  const capped = meta.totalCapped === true ? { totalCapped: true as const } : {}
  return inPages
    ? { page: meta.page, limit: meta.limit, total, ...capped, pages: meta.pages ?? 0, nextCursor: meta.nextCursor }
    : { limit: meta.limit, total, ...capped, nextCursor: meta.nextCursor }
}

/** rel="next", "prev" and "first", as paths with the request's own query (in Threadline's words), only page or cursor changed. */
function linksFor<T>(request: FastifyRequest, page: CollectionPage<T>): string {
  const path = request.url.split('?', 1)[0] ?? ''
  const search = searchOf(request)
  const link = (rel: string, change: { page?: number; cursor?: string }) => {
    const params = new URLSearchParams(search)
    params.delete('page')
    params.delete('cursor')
    if (change.page !== undefined) params.set('page', String(change.page))
    if (change.cursor !== undefined) params.set('cursor', change.cursor)
    const query = params.toString()
    return `<${path}${query === '' ? '' : `?${query}`}>; rel="${rel}"`
  }
  const links: string[] = []
  if (page.query.mode === 'page') {
    if (page.hasMore) links.push(link('next', { page: page.query.page + 1 }))
    if (page.query.page > 1) links.push(link('prev', { page: page.query.page - 1 }))
    links.push(link('first', { page: 1 }))
  } else {
    if (page.nextCursor !== null) links.push(link('next', { cursor: page.nextCursor }))
    if (page.prevCursor !== null) links.push(link('prev', { cursor: page.prevCursor }))
    links.push(link('first', {}))
  }
  return links.join(', ')
}
