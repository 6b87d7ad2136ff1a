// Document completion: what @fastify/swagger cannot derive from a route's schema, added to each
// operation once the document is generated (its whole-document transform). The route transform
// leaves notes on each operation (the version, the method, who may call, the route's declarations);
// from them come the conditional, collection, representation, Prefer and Idempotency-Key parameters, the answers'
// descriptions, headers and examples, the error answers, the tags of the features whose routes are described,
// and the names of the schemas shared as components (schema-hoisting.ts).
import type { CollectionSpec } from '../../collections/collection-spec.js'
import { EXPORT_MEDIA_TYPES } from '../export-formats.js'
import { csvRecord } from '../csv.js'
import { PREFERENCE_METHODS } from '../prefer.js'
import type { RepresentationShape } from '../route-config.js'
import type { ApiVersion } from '../versioning.js'
import { collectionParameters } from './collection-parameters.js'
import { representationParameters } from './representation-parameters.js'
import { type HoistedOperation, hoistSchemas } from './schema-hoisting.js'
import { errorResponseRef, errorStatusesOf } from './error-responses.js'
import { type AnswerHeader, COMMON_HEADERS, READ_HEADERS, headerRefs, type Condition } from './headers.js'
import { EXAMPLE_TIMESTAMP, type ResourceOpenApi, type RouteOpenApi } from './route-openapi.js'

/** What the route transform hands to the document transform, on each operation; removed from the document. */
export const NOTES = 'x-threadline-notes'
export interface Notes {
  version: ApiVersion
  method: string
  access: string
  openapi: RouteOpenApi
  collection: CollectionSpec | undefined
  /** `select` and `include` on a GET route that takes them. */
  representation?: RepresentationShape | undefined
  /** The route takes an Idempotency-Key. */
  idempotencyKeys: boolean
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  tags?: ResourceOpenApi['tag'][]
  [key: string]: unknown
}
interface Operation {
  description?: string
  parameters?: Record<string, unknown>[]
  requestBody?: { content: Record<string, { schema: unknown; example?: unknown }> }
  responses: Record<string, Record<string, unknown>>
  [NOTES]?: Notes
  [key: string]: unknown
}

const PAGINATION_EXAMPLE: Record<ApiVersion, Record<string, unknown>> = {
  1: { page: 1, limit: 20, total: 1, pages: 1, nextCursor: null },
  2: { limit: 20, nextCursor: null, hasMore: false },
}

const PAGING: Record<ApiVersion, string> = {
  1: 'v1 pages by `page` and reports the total: `meta.pagination` is `{page, limit, total, pages, nextCursor}` (`{limit, total, nextCursor}` given a `cursor`).',
  2: 'v2 pages by `cursor` and skips the count: `meta.pagination` is `{limit, nextCursor, hasMore}` (`{page, limit, nextCursor, hasMore}` given a `page`).',
}

/** @fastify/swagger's whole-document transform: parameters, answers, headers and examples per operation; the tags; the shared schemas. */
export function completeDocument(document: OpenApiDocument, tags: readonly ResourceOpenApi['tag'][]): OpenApiDocument {
  const described: HoistedOperation[] = []
  for (const [path, item] of Object.entries(document.paths)) {
    for (const operation of Object.values(item)) {
      const notes = operation[NOTES]
      if (notes === undefined) continue
      delete operation[NOTES]
      completeOperation(operation, notes, path.includes('{'))
      const { resource, body } = notes.openapi
      described.push({
        path,
        method: notes.method,
        noun: resource.noun,
        represented: notes.representation !== undefined,
        ...(body === undefined ? {} : { body }),
      })
    }
  }
  document.tags = [...tags]
  hoistSchemas(document, described)
  return document
}

function completeOperation(operation: Operation, notes: Notes, hasPathParameters: boolean): void {
  const { version, method, access, openapi, collection } = notes
  const conditions: Condition[] =
    method === 'GET' ? ['IfNoneMatch', ...(collection === undefined ? (['IfModifiedSince'] as const) : [])] : method === 'POST' ? [] : ['IfMatch']
  if (conditions.length > 0) {
    operation.parameters = [...(operation.parameters ?? []), ...conditions.map((name) => ({ $ref: `#/components/parameters/${name}` }))]
  }
  if (PREFERENCE_METHODS.has(method)) operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/Prefer' }]
  if (notes.idempotencyKeys) operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/IdempotencyKey' }]
  if (collection !== undefined) {
    operation.parameters = [...(operation.parameters ?? []), ...collectionParameters(collection)]
    operation.description = `${operation.description} ${PAGING[version]}`
  }
  if (notes.representation !== undefined)
    operation.parameters = [...(operation.parameters ?? []), ...representationParameters(notes.representation, { aggregates: collection !== undefined })]
  const json = operation.requestBody?.content['application/json']
  if (operation.requestBody !== undefined && json !== undefined) {
    json.example = openapi.requestExample
    if (method === 'PATCH') operation.requestBody.content['application/merge-patch+json'] = { ...json }
  }

  operation.responses = {
    ...successResponses(operation.responses, notes),
    ...(method === 'GET' ? { 304: { $ref: '#/components/responses/NotModified' } } : {}),
    ...Object.fromEntries(
      errorStatusesOf({
        method,
        access,
        hasPathParameters,
        hasBody: operation.requestBody !== undefined,
        idempotencyKeys: notes.idempotencyKeys,
        declared: openapi.errors ?? [],
      }).map((status) => [String(status), errorResponseRef(status)]),
    ),
  }
}

/** A collection's other answers (`Accept: text/csv` or `application/x-ndjson`), with an example item in each. */
function exportContent(example: Record<string, unknown>): Record<string, { schema: Record<string, unknown>; example: string }> {
  return {
    [EXPORT_MEDIA_TYPES.csv]: {
      schema: {
        type: 'string',
        description:
          'RFC 4180: a header of the fields (`select` names them), then a record per item, CRLF-ended; objects as JSON text; null empty; text that starts with =, +, -, @, tab or CR after a single quote. At most HTTP_EXPORT_MAX_ROWS records; `Link: rel="next"` goes on.',
      },
      example: csvRecord(Object.keys(example)) + csvRecord(Object.values(example)),
    },
    [EXPORT_MEDIA_TYPES.ndjson]: {
      schema: { type: 'string', description: 'One item a line, as JSON (`select` applies). At most HTTP_EXPORT_MAX_ROWS lines; `Link: rel="next"` goes on.' },
      example: `${JSON.stringify(example)}\n`,
    },
  }
}

/** The answers the route's schema declares, with their descriptions, headers and examples. */
function successResponses(declared: Operation['responses'], notes: Notes): Operation['responses'] {
  const { version, method, openapi, collection } = notes
  const { noun, example } = openapi.resource
  const single = { data: example, meta: { timestamp: EXAMPLE_TIMESTAMP } }
  // A write's answer may be one replayed for its Idempotency-Key.
  const replayed: AnswerHeader[] = notes.idempotencyKeys ? ['Idempotent-Replayed'] : []
  const responses: Operation['responses'] = {}
  for (const [status, response] of Object.entries(declared)) {
    const content = response.content as Record<string, { example?: unknown }> | undefined
    const media = content?.['application/json']
    if (status === '200' && method === 'GET') {
      response.description = collection === undefined ? `The ${noun}.` : `A page of ${noun}s.`
      response.headers = headerRefs([...COMMON_HEADERS, ...READ_HEADERS, ...(collection === undefined ? [] : (['Link'] as const))])
      if (media !== undefined) {
        media.example = collection === undefined ? single : { data: [example], meta: { timestamp: EXAMPLE_TIMESTAMP, pagination: PAGINATION_EXAMPLE[version] } }
      }
      if (collection !== undefined && content !== undefined) Object.assign(content, exportContent(example))
    } else if (status === '201') {
      const { description, headers } = openapi.created ?? { description: `Created: the ${noun}.`, headers: ['Location'] as const }
      response.description = description
      response.headers = headerRefs([...COMMON_HEADERS, ...headers, 'Preference-Applied', ...replayed])
      if (media !== undefined) media.example = single
    } else if (status === '204') {
      response.headers = headerRefs([...COMMON_HEADERS, ...replayed])
    } else {
      response.description = `The ${noun}, as it is now.`
      response.headers = headerRefs([...COMMON_HEADERS, 'Preference-Applied', ...replayed])
      if (media !== undefined) media.example = single
    }
    responses[status] = response
  }
  // A write answered 200 answers 204 when the caller prefers no body.
  if (PREFERENCE_METHODS.has(method) && responses['200'] !== undefined && responses['204'] === undefined) {
    responses['204'] = {
      description: 'Done, as asked by Prefer: return=minimal: no body.',
      headers: headerRefs([...COMMON_HEADERS, 'Preference-Applied', ...replayed]),
    }
  }
  return responses
}
