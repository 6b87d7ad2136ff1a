// What every resolver and loader receives: the caller (the same Bearer token as REST), and the
// helpers that turn GraphQL's shapes into service calls.
import type { FastifyReply } from 'fastify'
import { type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql'
import type { Caller } from '../caller.js'
import type { ListWindow } from '../pagination.js'
import { toListWindow } from './collection-args.js'

export interface GraphQLContext {
  readonly caller: Caller | null
  readonly reply: FastifyReply
}

export interface WindowArgs {
  limit?: number | null
  page?: number | null
}

/** One query of a mercurius loader batch: the parent object and the field's arguments. */
export interface LoaderQuery<Parent, Args = WindowArgs> {
  obj: Parent
  params: Args
}

/**
 * A mercurius loader for a nested list (User.posts): every parent asking for the same window is
 * read by one service call, whatever the number of parents. A bad window fails only its fields.
 */
export function windowLoader<Parent, Item>(
  parentId: (parent: Parent) => number,
  read: (caller: Caller | null, parentIds: readonly number[], window: ListWindow) => Promise<Map<number, Item[]>>,
) {
  return async (queries: readonly LoaderQuery<Parent>[], context: GraphQLContext): Promise<(Item[] | Error)[]> => {
    const groups = new Map<string, { window: ListWindow; ids: Set<number>; items?: Map<number, Item[]> }>()
    const keys = queries.map((query) => {
      let window: ListWindow
      try {
        window = toListWindow(query.params)
      } catch (error) {
        return error as Error
      }
      const key = `${window.limit}:${window.offset}`
      const group = groups.get(key) ?? { window, ids: new Set<number>() }
      group.ids.add(parentId(query.obj))
      groups.set(key, group)
      return key
    })
    await Promise.all(
      [...groups.values()].map(async (group) => {
        group.items = await read(context.caller, [...group.ids], group.window)
      }),
    )
    return queries.map((query, i) => {
      const key = keys[i]
      if (typeof key !== 'string') return key as Error
      return groups.get(key)?.items?.get(parentId(query.obj)) ?? []
    })
  }
}

/**
 * A mercurius loader for a reference (Post.author): all ids of the batch in one service call.
 * A missing target is NOT_FOUND at its field (`missing`), never a silent null.
 */
export function referenceLoader<Parent, Item>(
  targetId: (parent: Parent) => number,
  read: (caller: Caller | null, ids: readonly number[]) => Promise<Map<number, Item>>,
  missing: () => Error,
) {
  return async (queries: readonly LoaderQuery<Parent, unknown>[], context: GraphQLContext): Promise<(Item | Error)[]> => {
    const found = await read(context.caller, [...new Set(queries.map((query) => targetId(query.obj)))])
    return queries.map((query) => found.get(targetId(query.obj)) ?? missing())
  }
}

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
