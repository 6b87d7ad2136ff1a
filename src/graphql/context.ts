// What every resolver and loader receives: the caller (the same Bearer token as REST), and the
// helpers that turn GraphQL's shapes into service calls.
import DataLoader from 'dataloader'
import { type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql'
import type { Caller } from '../core/caller.js'
import type { EventStreamOptions } from '../events/event-stream.js'
import type { ListWindow } from '../collections/pagination.js'
import { toListWindow } from './collection-args.js'

export interface GraphQLContext {
  /**
   * Who is calling, read when each resolver runs: on a long-lived connection (WebSocket, event
   * stream) a getter over its ConnectionCaller, so a revoked token or a changed role applies to
   * every later operation and delivery.
   */
  readonly caller: Caller | null
  readonly loaders: Loaders
  /** For a subscription (WebSocket or SSE): how far its events may queue, and what to do past that. */
  readonly stream?: EventStreamOptions
}

export interface WindowArgs {
  limit?: number | null
  page?: number | null
}

/**
 * An object by id, read in the operation's batch (`userReference` in users.graphql.ts); given the
 * field's `info`, only the columns its selection needs.
 */
export type Reference<T> = (context: GraphQLContext, id: number, info?: GraphQLResolveInfo) => Promise<T>

type ReadWindow<T> = (caller: Caller | null, parentIds: readonly number[], window: ListWindow) => Promise<Map<number, T[]>>
type ReadMany<T> = (caller: Caller | null, ids: readonly number[]) => Promise<Map<number, T>>

/** Ids bound in one statement: SQLite takes at most 32,766 parameters in one. */
const MAX_BATCH_IDS = 1000

/**
 * Per-operation batching (DataLoader): the nested lists and references asked for in one tick of
 * execution are read together, one service call per field and window, whatever the number of
 * parents. Batched, not cached: a read after a mutation in the same document sees the mutation.
 */
export class Loaders {
  /** Made at the first batch: an operation that reads no list and no reference makes none. */
  private loaders: Map<string, DataLoader<number, unknown>> | undefined

  /** `caller` is read at each batch: on a long-lived connection it follows the caller's rights. */
  constructor(private readonly caller: () => Caller | null) {}

  /** The `args` window of the list `field` under the parent `parentId`; a bad window fails this field only. */
  list<T>(field: string, args: WindowArgs, parentId: number, read: ReadWindow<T>): Promise<T[]> {
    return this.window(field, toListWindow(args), parentId, read)
  }

  /** A window already checked (a nested connection's first page reads one item past its size). */
  window<T>(field: string, window: ListWindow, parentId: number, read: ReadWindow<T>): Promise<T[]> {
    return this.loader(`${field}:${window.limit}:${window.offset}`, async (ids) => {
      const found = await read(this.caller(), ids, window)
      return ids.map((id) => found.get(id) ?? [])
    }).load(parentId) as Promise<T[]>
  }

  /** The object `id` of `field`'s type; a missing one is `missing()` at this field, never a silent null. */
  one<T>(field: string, id: number, read: ReadMany<T>, missing: () => Error): Promise<T> {
    return this.loader(field, async (ids) => {
      const found = await read(this.caller(), ids)
      return ids.map((key) => found.get(key) ?? missing())
    }).load(id) as Promise<T>
  }

  private loader(key: string, batch: (ids: readonly number[]) => Promise<unknown[]>): DataLoader<number, unknown> {
    this.loaders ??= new Map()
    let loader = this.loaders.get(key)
    if (loader === undefined) {
      loader = new DataLoader(batch, { cache: false, maxBatchSize: MAX_BATCH_IDS })
      this.loaders.set(key, loader)
    }
    return loader
  }
}

/** Whether a page field's selection (`usersPage`) asks for its count: pageInfo's total, totalCapped or pages; counted only then. */
export const selectsPageTotal = (info: GraphQLResolveInfo): boolean => ['total', 'totalCapped', 'pages'].some((field) => selects(info, ['pageInfo', field]))

/** Whether the field's selection asks for `path` (through fragments), e.g. ['pageInfo', 'total']. */
export function selects(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  // Fragment cycles are a validation error: by execution time there are none.
  const visit = (selectionSet: SelectionSetNode | undefined, depth: number): boolean => {
    if (selectionSet === undefined) return false
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === path[depth] && (depth === path.length - 1 || visit(selection.selectionSet, depth + 1))) return true
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (visit(selection.selectionSet, depth)) return true
      } else if (visit(info.fragments[selection.name.value]?.selectionSet, depth)) {
        return true
      }
    }
    return false
  }
  return info.fieldNodes.some((node) => visit(node.selectionSet, 0))
}
