// Collections as files to analyze and load: `Accept: text/csv` (RFC 4180, csv.ts) and
// `Accept: application/x-ndjson` (one item a line) on every collection GET, with the same filters,
// `sort`, `select`, search and rights as the JSON page, read through the same service function.
//
// An answer holds at most a bound of rows (HTTP_EXPORT_MAX_ROWS, or fewer with `limit`) and names
// where to go on in `Link: <…?cursor=…>; rel="next"`. Headers go before the body, so an answer is
// read in two passes of keyset pages (EXPORT_PAGE_ROWS rows each), never holding its rows at once:
//   1. its members: the ids of up to the bound of rows from the cursor on (users' and posts' pages
//      read only their ids and sort keys), and the cursor after the last of them when more follow.
//      The rows are charged then, before anything is sent (EXPORT_ROWS_PER_POINT).
//   2. the rows, page by page as the client takes them (a Readable that pulls a page when the
//      socket drains, each read in a slot of the caller's, as the handler's work was), each page
//      read as `id in (its members)` with the query's filters and sort:
//      a row deleted, or changed out of the query or out of the caller's sight meanwhile, is left
//      out; every row is written as it is when its page is read.
// So the Link is known before the first byte, and the answers a client follows meet every row
// that matched when each began, once. Exports are neither cached nor validated (no ETag:
// `Cache-Control: no-store`); they are compressed as they stream, as Accept-Encoding asks.
import { setImmediate as nextLoopTurn } from 'node:timers/promises'
import { pipeline, Readable } from 'node:stream'
import { constants as zlib, createBrotliCompress, createGzip } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { CollectionPage } from '../collections/collection-page.js'
import type { CollectionQuery, Filter } from '../collections/collection-query.js'
import type { CollectionSpec } from '../collections/collection-spec.js'
import { type Cursor, decodeCursor } from '../collections/cursor.js'
import type { Representation } from '../collections/embedding.js'
import { MAX_PAGE_LIMIT } from '../collections/pagination.js'
import { AppError, type ErrorDetail } from '../errors.js'
import type { RateLimitCharger } from '../limits/rate-limit.js'
import { chooseContentCoding, CONTENT_CODINGS } from './compression.js'
import { csvRecord } from './csv.js'
import { EXPORT_CONTENT_TYPES, type ExportFormat } from './export-formats.js'
import { searchOf } from './query-parameters.js'
import { addVary } from './vary.js'

/** Rows an export answer holds at most when HTTP_EXPORT_MAX_ROWS does not say. */
export const DEFAULT_EXPORT_MAX_ROWS = 10_000
/** Rows of one read of the store: a few milliseconds of work, and a few dozen KiB of text, each. */
export const EXPORT_PAGE_ROWS = 500
/** The scheduler's kind of work for a page of an export's second pass (what such a page costs is learned apart from the routes'). */
export const EXPORT_PAGE_KIND = 'export page'
/** An export costs what reading its rows as JSON pages of the largest limit would: a point per page. */
export const EXPORT_ROWS_PER_POINT = MAX_PAGE_LIMIT

export interface ExportSettings {
  /** Rows an answer holds at most (HTTP_EXPORT_MAX_ROWS). */
  readonly maxRows: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /** How collections are exported (the composition root decorates the app with it); absent, the defaults. */
    collectionExports?: ExportSettings
  }
}

/** What a collection GET reads, for its JSON page and for its exports alike. */
export interface CollectionSource<T extends { id: number }> {
  readonly spec: CollectionSpec
  /** The item's fields in the schema's order: an export's columns when `select` names none. */
  readonly fields: readonly string[]
  /**
   * One page of the collection for `query`, with the caller's rights, as the service gives it to the
   * JSON answer; `select`: the fields needed (the others may be left unread), undefined for all.
   */
  readonly read: (query: CollectionQuery, select: ReadonlySet<string> | undefined) => Promise<CollectionPage<T>>
}

/**
 * Sends the export of `query`'s rows in `format` as a stream: the rows counted and charged, the
 * Link to the next answer and the headers set, before the first byte. The reply is returned, as an
 * async handler that sends must (Fastify would otherwise send its undefined result).
 */
export async function exportCollection<T extends { id: number }>(
  request: FastifyRequest,
  reply: FastifyReply,
  format: ExportFormat,
  source: CollectionSource<T>,
  query: CollectionQuery,
  shown: Representation<T> | undefined,
  charge: RateLimitCharger | undefined,
): Promise<FastifyReply> {
  refuseWhatExportsDoNotTake(request, query, shown)
  const select = shown?.select
  const columns = select === undefined ? source.fields : source.fields.filter((field) => field === 'id' || select.has(field))
  const { ids, next } = await membersOf(source, query, rowsPerAnswer(request))
  await charge?.(request, reply, exportPoints(ids.length))
  if (next !== null) reply.header('link', nextLink(request, next))
  reply.header('cache-control', 'no-store').type(EXPORT_CONTENT_TYPES[format])
  const lines = Readable.from(linesOf(request, source, query, columns, ids, format), { objectMode: false, highWaterMark: 64 * 1024 })
  return reply.send(encoded(request, reply, lines))
}

/** The rate-limit points an export of `rows` rows takes beyond the request's own. */
export const exportPoints = (rows: number): number => Math.max(0, Math.ceil(rows / EXPORT_ROWS_PER_POINT) - 1)

/** Embeddings, pages by number and backward cursors have no place in an export: a 400 naming each. */
function refuseWhatExportsDoNotTake<T>(request: FastifyRequest, query: CollectionQuery, shown: Representation<T> | undefined): void {
  const problems: ErrorDetail[] = []
  if (shown !== undefined && shown.include.length > 0) {
    problems.push({ field: 'include', message: "is not offered in CSV or NDJSON: an export holds the items' own fields" })
  }
  if ((request.query as Record<string, unknown>)['page'] !== undefined) {
    problems.push({ field: 'page', message: 'is not offered in CSV or NDJSON: an export goes on by cursor (its Link rel="next")' })
  }
  if (query.cursor?.direction === 'before') problems.push({ field: 'cursor', message: 'must go forward in an export (a nextCursor or a Link rel="next")' })
  if (problems.length > 0) throw new AppError('BAD_REQUEST', 'This export cannot be served as asked', problems)
}

/** HTTP_EXPORT_MAX_ROWS, or `limit` when it asks for fewer (the query's reading has judged it a positive integer). */
function rowsPerAnswer(request: FastifyRequest): number {
  const max = request.server.collectionExports?.maxRows ?? DEFAULT_EXPORT_MAX_ROWS
  const asked = Number((request.query as Record<string, unknown>)['limit'])
  return Number.isInteger(asked) && asked >= 1 ? Math.min(asked, max) : max
}

/**
 * The first pass: the ids of up to `bound` rows from the query's cursor on, in its order, and the
 * cursor after the last of them when more rows follow (null when none do). A search window that
 * ends a page short ends the answer there too, as it ends a JSON page.
 */
async function membersOf<T extends { id: number }>(
  source: CollectionSource<T>,
  query: CollectionQuery,
  bound: number,
): Promise<{ ids: number[]; next: string | null }> {
  const ids: number[] = []
  const idOnly = new Set(['id'])
  let cursor: Cursor | undefined = query.cursor
  for (;;) {
    // A loop turn between two reads (synchronous on SQLite): the sockets are read and other
    // callers' slots handed out between them, so the pass holds the loop for one read at a time.
    if (ids.length > 0) await nextLoopTurn()
    const limit = Math.min(EXPORT_PAGE_ROWS, bound - ids.length)
    const page = await source.read({ ...query, mode: 'cursor', page: 1, cursor, limit, withTotal: false }, idOnly)
    for (const item of page.items) ids.push(item.id)
    if (page.nextCursor === null || ids.length >= bound || page.items.length < limit) return { ids, next: page.nextCursor }
    cursor = decodeCursor(page.nextCursor, query.fingerprint)
  }
}

/**
 * The second pass: the answer's text, a page of rows at a time, read as the stream is drained. The
 * request's slot was released with its headers: each page is read in a slot of the caller's
 * (EXPORT_PAGE_KIND), as the first pass was in the handler's.
 */
async function* linesOf<T extends { id: number }>(
  request: FastifyRequest,
  source: CollectionSource<T>,
  query: CollectionQuery,
  columns: readonly string[],
  ids: readonly number[],
  format: ExportFormat,
): AsyncGenerator<string> {
  if (format === 'csv') yield csvRecord(columns)
  const select = new Set(columns)
  for (let at = 0; at < ids.length; at += EXPORT_PAGE_ROWS) {
    const members: Filter = { field: source.spec.id, operator: 'in', values: ids.slice(at, at + EXPORT_PAGE_ROWS) }
    const page = await request.inSlot(EXPORT_PAGE_KIND, () =>
      source.read(
        {
          ...query,
          filters: [...query.filters, members],
          search: undefined,
          mode: 'cursor',
          page: 1,
          cursor: undefined,
          limit: members.values.length,
          withTotal: false,
        },
        select,
      ),
    )
    const fieldsOf = (item: T) => columns.map((column) => (item as Record<string, unknown>)[column])
    const text = page.items.map((item) => (format === 'csv' ? csvRecord(fieldsOf(item)) : `${JSON.stringify(picked(item, columns))}\n`)).join('')
    // An empty chunk would end a byte stream's reading early.
    if (text !== '') yield text
  }
}

/** The item's own fields among `columns`, in their order (a field the item lacks left out, as JSON answers leave it). */
function picked(item: object, columns: readonly string[]): Record<string, unknown> {
  const shown: Record<string, unknown> = {}
  for (const column of columns) {
    const value = (item as Record<string, unknown>)[column]
    if (value !== undefined) shown[column] = value
  }
  return shown
}

/** The request's own address, its query as given but the cursor, which goes on after this answer. */
function nextLink(request: FastifyRequest, cursor: string): string {
  const params = new URLSearchParams(searchOf(request))
  params.set('cursor', cursor)
  return `<${request.url.split('?', 1)[0] ?? ''}?${params.toString()}>; rel="next"`
}

const BROTLI_OPTIONS = { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } }

/**
 * The stream compressed as it goes, in the coding Accept-Encoding prefers (the compression hook
 * takes whole bodies, not streams); as it is without one.
 */
function encoded(request: FastifyRequest, reply: FastifyReply, body: Readable): Readable {
  addVary(reply, 'Accept-Encoding')
  const coding = request.headers['x-no-compression'] === undefined ? chooseContentCoding(request.headers['accept-encoding'], CONTENT_CODINGS) : undefined
  if (coding === undefined) return body
  reply.header('content-encoding', coding)
  return pipeline(body, coding === 'br' ? createBrotliCompress(BROTLI_OPTIONS) : createGzip(), (error) => {
    // A client that leaves before the end closes the stream early: nothing to do but note it.
    if (error) request.log.debug({ err: error }, 'export stream ended early')
  })
}
