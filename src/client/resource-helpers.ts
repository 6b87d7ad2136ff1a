// A resource's helpers (list, all, get, create, replace, update, remove), made from its row of
// RESOURCES (resources.ts, generated from the OpenAPI document) and typed from `paths`: the ids
// they take are the `{parameters}` of its paths, in order; the item, bodies and query are those of
// its operations. A helper exists, in the types as at run time, only where its path answers the
// method (comments have no `replace`).
import type {
  ChangesAt,
  CollectionPath,
  Embeds,
  Item,
  ItemPath,
  ListQueryAt,
  NewItemAt,
  OtherPath,
  OtherPlace,
  Page,
  ReplacementAt,
  Representation,
  ResourceMethod,
  ResourceName,
  Shaped,
} from './client-types.js'
import type { RESOURCES } from './resources.js'

type Resources = typeof RESOURCES
type Id = number | string

/** An id for each `{parameter}` of a path, in order. */
type Ids<P extends string> = P extends `${string}{${string}}${infer Rest}` ? [Id, ...Ids<Rest>] : []
/** Without page and cursor: all() follows nextCursor itself. */
type AllQuery<Q> = Omit<Q, 'page' | 'cursor'>
/** `select`, `include` and limits for resource R's items. */
type ShapeOf<R extends ResourceName, S extends keyof Item<R>, I extends keyof Embeds[R]> = Representation<Item<R>, Embeds[R], S, I>
/** Its items as they come back. */
type ShapedAs<R extends ResourceName, S extends keyof Item<R>, I extends keyof Embeds[R]> = Shaped<Item<R>, Embeds[R], S, I>

/**
 * Every helper a resource may have; ResourceHelpers keeps those its paths answer. The rest parameter
 * is named `ids` so that editors show the leading ids as `ids_0`, `ids_1` (a tuple cannot take its
 * labels from the path's parameter names).
 */
export interface Helpers<R extends ResourceName, C extends string = CollectionPath<R>, P extends string = ItemPath<R>> {
  /** One page of the collection, its items shaped by `select` and `include`. */
  list: <S extends keyof Item<R> = never, I extends keyof Embeds[R] = never>(
    ...ids: [...Ids<C>, query?: ListQueryAt<C> & ShapeOf<R, S, I>]
  ) => Promise<Page<ShapedAs<R, S, I>>>
  /** Every item of the collection, page after page (it follows nextCursor). */
  all: <S extends keyof Item<R> = never, I extends keyof Embeds[R] = never>(
    ...ids: [...Ids<C>, query?: AllQuery<ListQueryAt<C>> & ShapeOf<R, S, I>]
  ) => AsyncGenerator<ShapedAs<R, S, I>, void, undefined>
  /** One item, shaped by `select` and `include`. */
  get: <S extends keyof Item<R> = never, I extends keyof Embeds[R] = never>(...ids: [...Ids<P>, query?: ShapeOf<R, S, I>]) => Promise<ShapedAs<R, S, I>>
  /** Creates an item in the collection. */
  create: (...ids: [...Ids<C>, body: NewItemAt<C>]) => Promise<Item<R>>
  /** Replaces an item (PUT). */
  replace: (...ids: [...Ids<P>, body: ReplacementAt<P>]) => Promise<Item<R>>
  /** Changes part of an item (PATCH, a JSON merge patch). */
  update: (...ids: [...Ids<P>, body: ChangesAt<P>]) => Promise<Item<R>>
  /** Deletes an item. */
  remove: (...ids: Ids<P>) => Promise<void>
}

/** The helpers each method of a collection and of an item makes. */
export const RESOURCE_HELPERS = {
  collection: { get: ['list', 'all'], post: ['create'] },
  item: { get: ['get'], put: ['replace'], patch: ['update'], delete: ['remove'] },
} as const satisfies Record<'collection' | 'item', Partial<Record<ResourceMethod, readonly (keyof Helpers<ResourceName>)[]>>>
type Place = keyof typeof RESOURCE_HELPERS

/** The methods a row's collection or item answers. */
type MethodsAt<Row, W extends Place> = Row extends { [K in W]: { methods: readonly (infer M)[] } } ? M : never
/** The helpers the methods M make at W (none for a method no helper sends). */
type NamesFor<W extends Place, M> = M extends keyof (typeof RESOURCE_HELPERS)[W]
  ? (typeof RESOURCE_HELPERS)[W][M] extends readonly (infer Name)[]
    ? Name
    : never
  : never
type HelperNames<Row> = { [W in Place]: NamesFor<W, MethodsAt<Row, W>> }[Place]
type ItemPathOf<Row> = Row extends { item: { path: infer P extends string } } ? P : never

/** The helpers of one address of resource R's items (a row: its collection and item paths). */
type HelpersAt<R extends ResourceName, Row, C extends string> = Pick<Helpers<R, C, ItemPathOf<Row>>, HelperNames<Row> & keyof Helpers<R>>

/**
 * The helpers of resource R: those of its paths' methods, e.g. `posts.get(userId, postId, query)`;
 * where its items have other addresses, `at(path)` gives theirs (`posts.at('/api/v1/posts').get(postId)`).
 */
export type ResourceHelpers<R extends ResourceName> = Pick<Helpers<R>, HelperNames<Resources[R]> & keyof Helpers<R>> &
  ([OtherPath<R>] extends [never] ? unknown : { at: <C extends OtherPath<R>>(path: C) => HelpersAt<R, OtherPlace<R, C>, C> })

/** Sends one request (path: v1's, with `{parameters}`) and answers the body of a success; throws a ThreadlineError otherwise. */
export type Send = (
  method: ResourceMethod,
  path: string,
  init: { params: { path: Record<string, string>; query?: object }; body?: unknown },
) => Promise<unknown>

/** The `data` of a resource's envelope (a GET's or a write's answer). */
const dataOf = (body: unknown) => (body as { data: unknown }).data

/** The names of a path's `{parameters}`, in order. */
const parameterNames = (path: string) => [...path.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1] ?? '')

async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined
  do {
    const page = await fetchPage(cursor)
    yield* page.data
    cursor = page.meta.pagination.nextCursor ?? undefined
  } while (cursor !== undefined)
}

interface Row {
  readonly collection: { readonly path: string; readonly methods: readonly ResourceMethod[] }
  readonly item?: { readonly path: string; readonly methods: readonly ResourceMethod[] }
  readonly also?: readonly Row[]
}

/** Resource R's helpers, from its row of RESOURCES; each request goes through `send`. */
export function createResourceHelpers<R extends ResourceName>(resource: Resources[R], send: Send): ResourceHelpers<R> {
  const row: Row = resource
  const helpers = helpersAt(row, send)
  if (row.also === undefined) return helpers as unknown as ResourceHelpers<R>
  const others = new Map(row.also.map((other) => [other.collection.path, helpersAt(other, send)]))
  const at = (path: string) => {
    const found = others.get(path)
    if (found === undefined) throw new TypeError(`${path} is not an address of these items: ${[...others.keys()].join(', ')}`)
    return found
  }
  return { ...helpers, at } as unknown as ResourceHelpers<R>
}

/** The helpers of one address (a collection path and its item path), those its methods answer. */
function helpersAt(row: Row, send: Send): Record<string, unknown> {
  const places = { collection: row.collection, item: row.item }
  /** The path's parameters from the leading arguments, and the argument after them (the query or the body). */
  const read = (place: Place, args: unknown[]) => {
    const path = places[place]?.path ?? ''
    const names = parameterNames(path)
    const params = Object.fromEntries(names.map((name, index) => [name, String(args[index] as Id)]))
    return { path, params, ids: args.slice(0, names.length), last: args[names.length] }
  }

  // Untyped inside: their types are Helpers' above, which `paths` gives.
  const list = (...args: unknown[]) => {
    const { path, params, last } = read('collection', args)
    return send('get', path, { params: { path: params, query: (last as object | undefined) ?? {} } })
  }
  const made = {
    list,
    all: (...args: unknown[]) => {
      const { ids, last } = read('collection', args)
      return paginate((cursor) => list(...ids, { ...(last as object | undefined), cursor }) as Promise<Page<unknown>>)
    },
    get: async (...args: unknown[]) => {
      const { path, params, last } = read('item', args)
      return dataOf(await send('get', path, { params: { path: params, query: (last as object | undefined) ?? {} } }))
    },
    create: async (...args: unknown[]) => {
      const { path, params, last } = read('collection', args)
      return dataOf(await send('post', path, { params: { path: params }, body: last }))
    },
    replace: async (...args: unknown[]) => {
      const { path, params, last } = read('item', args)
      return dataOf(await send('put', path, { params: { path: params }, body: last }))
    },
    update: async (...args: unknown[]) => {
      const { path, params, last } = read('item', args)
      return dataOf(await send('patch', path, { params: { path: params }, body: last }))
    },
    remove: async (...args: unknown[]) => {
      const { path, params } = read('item', args)
      await send('delete', path, { params: { path: params } })
    },
  }
  const present = new Set<string>()
  for (const place of ['collection', 'item'] as const) {
    const helpers: Partial<Record<ResourceMethod, readonly string[]>> = RESOURCE_HELPERS[place]
    for (const method of places[place]?.methods ?? []) for (const name of helpers[method] ?? []) present.add(name)
  }
  return Object.fromEntries(Object.entries(made).filter(([name]) => present.has(name)))
}
