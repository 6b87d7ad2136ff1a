// Aggregates over REST (docs/rest.md, Aggregates): a collection GET whose `select` names a function
// answers groups instead of items, in the collection envelope:
//   {"data": [{<group keys>, <aggregates>}], "meta": {"timestamp", "aggregate": {"groupedBy", "groups", "rows"}}}
// Or, when Accept prefers one, as CSV (a header record of the group and aggregate names, then a
// record per group; csv.ts) or NDJSON (a group a line). A collection's answer (collection-reply.ts)
// reads the aggregate first, and answers aggregateBody when it gives one. The rows read are charged
// (aggregatePoints) before the answer is made, through the rate limit's charge.
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  type AggregatePayment,
  type AggregateQuery,
  type AggregateResult,
  aggregatePoints,
  asksForAggregate,
  parseAggregateQuery,
} from '../collections/aggregation.js'
import type { CollectionSpec } from '../collections/collection-spec.js'
import { isoNow } from '../core/instant.js'
import type { RateLimitCharger } from '../limits/rate-limit.js'
import { namingWordsGiven } from './query-parameters.js'
import { csvRecord } from './csv.js'
import { EXPORT_CONTENT_TYPES, type ExportFormat } from './export-formats.js'

/** The aggregate the request's `select` asks for, checked; undefined when it names no function (a list). `scope`: as readCollectionQuery's. */
export function readAggregateQuery(request: FastifyRequest, spec: CollectionSpec, scope = ''): AggregateQuery | undefined {
  const raw = request.query as Record<string, unknown>
  if (!asksForAggregate(raw.select)) return undefined
  try {
    return parseAggregateQuery(spec, raw, scope)
  } catch (error) {
    throw namingWordsGiven(request, error)
  }
}

/**
 * The envelope of the groups `run` computes, given how to pay for the rows it reads (the caller's
 * rate limit; nothing when it is off), or the groups in the export `format`. Written by
 * JSON.stringify: the groups' names are the caller's, not the item schema's. At most
 * MAX_AGGREGATE_GROUPS groups: made whole, not streamed.
 */
export async function aggregateBody(
  request: FastifyRequest,
  reply: FastifyReply,
  format: ExportFormat | undefined,
  charge: RateLimitCharger | undefined,
  { aggregation }: AggregateQuery,
  run: (pay: AggregatePayment) => Promise<AggregateResult>,
): Promise<FastifyReply> {
  const pay: AggregatePayment = async (rows) => {
    await charge?.(request, reply, aggregatePoints(rows))
  }
  const { groups, groupedBy, rows } = await run(pay)
  if (format === undefined) {
    return reply
      .type('application/json; charset=utf-8')
      .serializer(JSON.stringify)
      .send({ data: groups, meta: { timestamp: isoNow(), aggregate: { groupedBy, groups: groups.length, rows } } })
  }
  reply.type(EXPORT_CONTENT_TYPES[format])
  if (format === 'ndjson') return reply.send(groups.map((group) => `${JSON.stringify(group)}\n`).join(''))
  const names = [...aggregation.groupBy, ...aggregation.aggregates].map(({ name }) => name)
  return reply.send(csvRecord(names) + groups.map((group) => csvRecord(names.map((name) => group[name]))).join(''))
}
