// Relay cursor connections (the GraphQL Cursor Connections Specification) over the same keyset
// reads as REST's cursors: `first`/`after` read forward from a position, `last`/`before` read
// backward from one (or from the end of the list: the order reversed, the rows turned back), and
// every edge carries the cursor of its own row, bound to the query as REST's cursors are (an edge's
// cursor is REST's `cursor` too, and REST's nextCursor and prevCursor are positions here).
//
// Decisions: `first` with `last`, `after` with `before`, `first` with `before` and `last` with
// `after` are refused (each pair reads in two directions at once); `first`/`last` below 1 are
// refused and above MAX_PAGE_LIMIT capped, as REST's `limit`. The page info type is
// ConnectionPageInfo: PageInfo is the page type of `usersPage`, in REST's words.
import type { GraphQLResolveInfo } from 'graphql'
import type { Caller } from '../core/caller.js'
import type { CollectionPage } from '../collections/collection-page.js'
import type { CollectionSpec } from '../collections/collection-spec.js'
import { type CollectionQuery, parseCollectionQuery } from '../collections/collection-query.js'
import { encodeCursor, type KeyValue } from '../collections/cursor.js'
import { DEFAULT_PAGE_LIMIT, type ListWindow, MAX_PAGE_LIMIT } from '../collections/pagination.js'
import { MAX_COUNTED_TOTAL } from '../db/list-page.js'
import { AppError, type ErrorDetail } from '../errors.js'
import { type CollectionArgs, queryLanguageArgsSdl, toCollectionQuery } from './collection-args.js'
import { type GraphQLContext, selects } from './context.js'

/** The page info of every connection, declared once in the schema. */
export const CONNECTION_PAGE_INFO_SDL = /* GraphQL */ `
  "Where a connection's page sits (the Cursor Connections Specification's PageInfo; PageInfo itself is usersPage's)."
  type ConnectionPageInfo {
    "More edges follow: always known when paging forward (first); with before, true when the page is not empty."
    hasNextPage: Boolean!
    "Edges come before: always known when paging backward (last); with after, true when the page is not empty."
    hasPreviousPage: Boolean!
    "The first edge's cursor; null when there are no edges."
    startCursor: String
    "The last edge's cursor; null when there are no edges."
    endCursor: String
  }
`

/** The paging arguments of every connection field. */
export const CONNECTION_PAGING_ARGS_SDL = `
    "The first n edges (after after, or from the start); at most ${MAX_PAGE_LIMIT}, larger values are capped. Default ${DEFAULT_PAGE_LIMIT} when neither first nor last is given."
    first: Int
    "An edge's cursor (or a REST nextCursor): the edges after it."
    after: String
    "The last n edges (before before, or up to the end); at most ${MAX_PAGE_LIMIT}, larger values are capped. Not with first."
    last: Int
    "An edge's cursor: the edges before it. Not with after or first."
    before: String`

/** Arguments of a top-level connection: the collection query language (as the list's) and the paging arguments. */
export const connectionArgsSdl = (
  filterType: string,
  whereType: string,
): string => `(${queryLanguageArgsSdl(filterType, whereType)}${CONNECTION_PAGING_ARGS_SDL}
  )`

/** When a top-level connection field (`usersConnection`) answers BAD_REQUEST: its Errors line's words. */
export const CONNECTION_ARGS_REFUSAL =
  'an argument is not valid: filter, where, sort, q, fields, first, last, after or before, or a pair that reads both ways, one detail each'

/** Arguments of a nested connection (a user's posts): paging only, in id order. */
export const NESTED_CONNECTION_ARGS_SDL = `(${CONNECTION_PAGING_ARGS_SDL}
  )`

/** `type UserEdge`, `type UserConnection`: the edge and connection types of `node`. */
export const connectionTypesSdl = (node: string): string => /* GraphQL */ `
"A ${node} and its position in the connection."
type ${node}Edge {
  "This edge's position: after or before takes it, and so does REST's cursor on the same query."
  cursor: String!
  node: ${node}!
}

"A page of ${node} edges (the Cursor Connections Specification)."
type ${node}Connection {
  edges: [${node}Edge!]!
  pageInfo: ConnectionPageInfo!
  "Every edge matching the query, on all pages: counted up to ${MAX_COUNTED_TOTAL} (then ${MAX_COUNTED_TOTAL} and totalCountCapped), only when selected."
  totalCount: Int
  "More edges match than totalCount says: counting stopped at ${MAX_COUNTED_TOTAL}."
  totalCountCapped: Boolean
}
`

export interface ConnectionArgs {
  first?: number | null
  after?: string | null
  last?: number | null
  before?: string | null
}

/**
 * What to read for a connection: `query` as the service takes it, and how to read its page back.
 * `fromEnd` (last without before): `query` reads the list in reverse order from its start, so its
 * rows come back reversed.
 */
export interface ConnectionPlan {
  readonly query: CollectionQuery
  readonly fromEnd: boolean
  /** The fingerprint of the query in its own order, which every edge's cursor carries. */
  readonly fingerprint: string
}

export interface Edge<T> {
  cursor: string
  node: T
}

export interface Connection<T> {
  edges: Edge<T>[]
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }
  totalCount: number | null
  totalCountCapped: boolean | null
}

/** A top-level connection's arguments (`usersConnection`): the list's query language, and paging. */
export type CollectionConnectionArgs = Omit<CollectionArgs, 'limit' | 'page' | 'cursor'> & ConnectionArgs

/** A top-level connection's arguments as a plan, refused (BAD_REQUEST, one detail per problem) as the list's would be. */
export function toConnectionPlan(spec: CollectionSpec, args: CollectionConnectionArgs, options: { withTotal: boolean }): ConnectionPlan {
  const { first, after, last, before, ...collection } = args
  const paging = checkedPaging({ first, after, last, before })
  return planOf(toCollectionQuery(spec, { ...collection, limit: paging.limit, cursor: paging.cursor }, options), paging.backward)
}

/** A nested connection's arguments as the plan of its parent's list, as REST reads it under `scope` (`user:3`): one parent's paging. */
export function toNestedConnectionPlan(spec: CollectionSpec, args: ConnectionArgs, options: { withTotal: boolean; scope: string }): ConnectionPlan {
  const paging = checkedPaging(args)
  const raw: Record<string, string> = { limit: String(paging.limit) }
  if (paging.cursor !== undefined) raw.cursor = paging.cursor
  return planOf(parseCollectionQuery(spec, raw, { defaultMode: 'cursor', withTotal: options.withTotal, scope: options.scope }), paging.backward)
}

/** Whether the connection field's selection asks for its count: totalCount is counted only then. */
export const selectsTotalCount = (info: GraphQLResolveInfo): boolean => ['totalCount', 'totalCountCapped'].some((field) => selects(info, [field]))

/** A nested connection (a user's posts): the parent's list as REST reads it, and its first window for many parents at once. */
export interface NestedConnection<T> {
  readonly spec: CollectionSpec
  /** The loader's name (`User.postsConnection`): one batch per field and page size. */
  readonly field: string
  readonly parentId: number
  /** The slice REST's path selects (`user:3`), which the edges' cursors are bound to. */
  readonly scope: string
  /** The same window of each parent's list, by parent id, in one read (in id order). */
  readonly readWindow: (caller: Caller | null, parentIds: readonly number[], window: ListWindow) => Promise<Map<number, T[]>>
  /** How many items each parent's list holds, by parent id, each counted up to `atMost`, in one read. */
  readonly readCounts: (caller: Caller | null, parentIds: readonly number[], atMost: number) => Promise<Map<number, number>>
  /** One parent's page, as REST's list reads it. */
  readonly readPage: (caller: Caller | null, query: CollectionQuery) => Promise<CollectionPage<T>>
}

/**
 * A nested connection's page. The first page (first alone) of every parent is read in one batch:
 * the window of first + 1 items (the one beyond says a next page exists), and, when selected,
 * every parent's totalCount in another. after, last and before page one parent's list: one read
 * per parent that asks.
 */
export async function nestedConnection<T extends object>(
  source: NestedConnection<T>,
  args: ConnectionArgs,
  context: GraphQLContext,
  info: GraphQLResolveInfo,
): Promise<Connection<T>> {
  const withTotal = selectsTotalCount(info)
  const plan = toNestedConnectionPlan(source.spec, args, { withTotal, scope: source.scope })
  if (!nullish(args.after, args.last, args.before)) return toConnection(plan, await source.readPage(context.caller, plan.query))
  const size = plan.query.limit
  const [window, counted] = await Promise.all([
    context.loaders.window(source.field, { limit: size + 1, offset: 0 }, source.parentId, source.readWindow),
    withTotal ? context.loaders.one(`${source.field}.totalCount`, source.parentId, countsOf(source), noCount) : undefined,
  ])
  const edges = window.slice(0, size).map((node) => ({ cursor: cursorOf(plan, node), node }))
  const total = counted === undefined ? null : Math.min(counted, MAX_COUNTED_TOTAL)
  return connectionOf(edges, window.length > size, false, total, counted === undefined ? null : counted > MAX_COUNTED_TOTAL)
}

/** Every parent's count up to one past MAX_COUNTED_TOTAL (so that a capped count shows); a parent the read did not find (gone meanwhile) holds none. */
const countsOf =
  <T>(source: NestedConnection<T>) =>
  async (caller: Caller | null, parentIds: readonly number[]): Promise<Map<number, number>> => {
    const found = await source.readCounts(caller, parentIds, MAX_COUNTED_TOTAL + 1)
    return new Map(parentIds.map((id) => [id, found.get(id) ?? 0]))
  }

/** countsOf answers every parent: never called. */
function noCount(): Error {
  return new Error('No count was read for this parent')
}

interface Paging {
  limit: number
  cursor: string | undefined
  backward: boolean
}

function checkedPaging({ first, after, last, before }: ConnectionArgs): Paging {
  const problems: ErrorDetail[] = []
  const given = (value: unknown) => value !== null && value !== undefined
  if (given(first) && given(last)) problems.push({ field: 'last', message: 'cannot be combined with first' })
  if (given(after) && given(before)) problems.push({ field: 'before', message: 'cannot be combined with after' })
  if (given(first) && given(before)) problems.push({ field: 'before', message: 'cannot be combined with first: use last' })
  if (given(last) && given(after)) problems.push({ field: 'after', message: 'cannot be combined with last: use first' })
  for (const [field, value] of Object.entries({ first, last })) {
    if (value !== null && value !== undefined && value < 1) problems.push({ field, message: 'must be an integer of at least 1' })
  }
  if (problems.length > 0) throw new AppError('BAD_REQUEST', 'The connection arguments are not valid', problems)
  const backward = given(last) || given(before)
  return { limit: Math.min(first ?? last ?? DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT), cursor: after ?? before ?? undefined, backward }
}

const nullish = (...values: unknown[]): boolean => values.every((value) => value === null || value === undefined)

/** The query reading in the connection's direction: a cursor read as a position (either direction), or the reversed order for the end of the list. */
function planOf(query: CollectionQuery, backward: boolean): ConnectionPlan {
  const { fingerprint } = query
  if (query.cursor !== undefined)
    return { query: { ...query, cursor: { ...query.cursor, direction: backward ? 'before' : 'after' } }, fromEnd: false, fingerprint }
  if (!backward) return { query, fromEnd: false, fingerprint }
  const reversed = query.sort.map((key) => ({ ...key, descending: !key.descending }))
  return { query: { ...query, sort: reversed }, fromEnd: true, fingerprint }
}

/** The service's page as a connection: an edge (with its row's cursor) per item, and the page info by the specification's rules. */
export function toConnection<T extends object>(plan: ConnectionPlan, page: CollectionPage<T>): Connection<T> {
  const items = plan.fromEnd ? [...page.items].reverse() : page.items
  const edges = items.map((node) => ({ cursor: cursorOf(plan, node), node }))
  // Read from the end in reverse, the rows beyond the page are the ones before it, and none follow.
  const hasNextPage = plan.fromEnd ? false : page.hasMore
  const hasPreviousPage = plan.fromEnd ? page.hasMore : page.hasPrevious
  const connection = connectionOf(edges, hasNextPage, hasPreviousPage, page.total ?? null, page.total === undefined ? null : page.totalCapped)
  // A search page may end where its bounded read stopped, with no match in it (src/db/list-page.ts):
  // with no edge to hold a cursor, the page's own cursors say where to read on.
  if (edges.length === 0 && !plan.fromEnd) {
    connection.pageInfo.startCursor = hasPreviousPage ? page.prevCursor : null
    connection.pageInfo.endCursor = hasNextPage ? page.nextCursor : null
  }
  return connection
}

function connectionOf<T>(edges: Edge<T>[], hasNextPage: boolean, hasPreviousPage: boolean, totalCount: number | null, capped: boolean | null): Connection<T> {
  const pageInfo = { hasNextPage, hasPreviousPage, startCursor: edges.at(0)?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null }
  return { edges, pageInfo, totalCount, totalCountCapped: capped }
}

/** An item's position in the plan's order: its values of the sort keys (the API item's field of each key's name), as REST's cursors keep them. */
function cursorOf(plan: ConnectionPlan, item: object): string {
  const values = plan.query.sort.map(({ field }): KeyValue => {
    const value = (item as Record<string, unknown>)[field.name]
    return value === undefined ? null : (value as KeyValue)
  })
  return encodeCursor({ direction: 'after', values }, plan.fingerprint)
}
