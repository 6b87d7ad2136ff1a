// The resources and bodies the client speaks, read from the generated files: each resource's paths
// from its row of RESOURCES (resources.ts), its item, bodies and query from those paths' operations
// in `paths` (v1's; v2's are the same but for what meta.pagination carries, which these types cover
// as optional). A new resource has them all, by name (`Item<'albums'>`), with no line here.
import type { components, paths } from './openapi.js'
import type { RESOURCES } from './resources.js'

type Resources = typeof RESOURCES
/** A resource of the client: a property of the client object, a row of RESOURCES. */
export type ResourceName = keyof Resources
/** The HTTP methods a resource's helpers send. */
export type ResourceMethod = 'get' | 'post' | 'put' | 'patch' | 'delete'

/** The path of a resource's collection (`/api/v1/users/{userId}/posts`). */
export type CollectionPath<R extends ResourceName> = Resources[R]['collection']['path']
/** The path of one of its items (`/api/v1/users/{userId}/posts/{postId}`); never for a resource without items. */
export type ItemPath<R extends ResourceName> = Resources[R] extends { item: { path: infer P extends string } } ? P : never

type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never
/** The operation at a path, for a method (never where the path does not answer it). */
type OperationAt<P, M extends ResourceMethod> = P extends keyof paths ? NonNullable<paths[P][M]> : never
type DataOf<O> = O extends { responses: { 200: infer R } } ? AnswerData<R> : O extends { responses: { 201: infer R } } ? AnswerData<R> : never
type AnswerData<R> = JsonOf<R> extends { data: infer D } ? D : never
type BodyOf<O> = O extends { requestBody?: infer B } ? JsonOf<NonNullable<B>> : never
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never
type ElementOf<T> = T extends readonly (infer E)[] ? E : never
/** A create's body or answer for one item: a bulk write's array left out (the helpers create one at a time). */
type OneOf<T> = Exclude<T, readonly unknown[]>
/** The first type of the list that is not never. */
type FirstOf<T extends unknown[]> = T extends [infer Head, ...infer Rest] ? ([Head] extends [never] ? FirstOf<Rest> : Head) : never

/**
 * A resource's item, every field there: what its writes answer with (a GET's has every field but
 * `id` optional, for `select`); for a resource without writes, what its GETs answer with.
 * scripts/client-resources.ts reads the same schema to match embedded relations with resources.
 */
export type Item<R extends ResourceName> = FirstOf<
  [
    OneOf<DataOf<OperationAt<CollectionPath<R>, 'post'>>>,
    DataOf<OperationAt<ItemPath<R>, 'put'>>,
    DataOf<OperationAt<ItemPath<R>, 'patch'>>,
    DataOf<OperationAt<ItemPath<R>, 'get'>>,
    ElementOf<DataOf<OperationAt<CollectionPath<R>, 'get'>>>,
  ]
>
/** The body of a POST to a collection path, a PUT and a PATCH to an item path; a list's query. */
export type NewItemAt<C> = OneOf<BodyOf<OperationAt<C, 'post'>>>
export type ReplacementAt<P> = BodyOf<OperationAt<P, 'put'>>
export type ChangesAt<P> = BodyOf<OperationAt<P, 'patch'>>
export type ListQueryAt<C> = QueryOf<OperationAt<C, 'get'>>
/** The body of a POST to the collection. */
export type NewItem<R extends ResourceName> = NewItemAt<CollectionPath<R>>
/** The body of a PUT to an item. */
export type ItemReplacement<R extends ResourceName> = ReplacementAt<ItemPath<R>>
/** The body of a PATCH to an item. */
export type ItemChanges<R extends ResourceName> = ChangesAt<ItemPath<R>>
/** Filters, sort, search and paging of the collection; `all()` takes the same without page and cursor. */
export type ListQuery<R extends ResourceName> = ListQueryAt<CollectionPath<R>>

/** The resource's other addresses (`/api/v1/posts` beside `/api/v1/users/{userId}/posts`): their rows. */
export type OtherPlaces<R extends ResourceName> = Resources[R] extends { also: readonly (infer Row)[] } ? Row : never
/** The collection paths of its other addresses, which `at(path)` takes. */
export type OtherPath<R extends ResourceName> = CollectionPathOf<OtherPlaces<R>>
/** Distributes over the rows (and is never for none). */
type CollectionPathOf<Row> = Row extends { collection: { path: infer P extends string } } ? P : never
/** The row of the other address whose collection path is C. */
export type OtherPlace<R extends ResourceName, C extends string> = Extract<OtherPlaces<R>, { collection: { path: C } }>

export type User = Item<'users'>
export type Post = Item<'posts'>
export type Comment = Item<'comments'>
export type Todo = Item<'todos'>
export type IssuedToken = Item<'tokens'>

export type NewUser = NewItem<'users'>
export type UserReplacement = ItemReplacement<'users'>
export type UserChanges = ItemChanges<'users'>
export type NewPost = NewItem<'posts'>
export type PostReplacement = ItemReplacement<'posts'>
export type PostChanges = ItemChanges<'posts'>
export type NewComment = NewItem<'comments'>
export type CommentChanges = ItemChanges<'comments'>
export type NewTodo = NewItem<'todos'>
export type TodoChanges = ItemChanges<'todos'>
export type Credentials = NewItem<'tokens'>

export type UsersQuery = ListQuery<'users'>
export type PostsQuery = ListQuery<'posts'>
export type CommentsQuery = ListQuery<'comments'>
export type TodosQuery = ListQuery<'todos'>

/** What a GET of one item shows (every field but `id` optional), where the table names no resource for a relation. */
type Shown<R extends ResourceName> = FirstOf<[DataOf<OperationAt<ItemPath<R>, 'get'>>, ElementOf<DataOf<OperationAt<CollectionPath<R>, 'get'>>>]>
/** A relation as the table describes it: the items of a resource, one or a list; else as the GET's schema has it. */
type Embedded<R extends ResourceName, K extends keyof Resources[R]['embeds']> = Resources[R]['embeds'][K] extends {
  resource: infer Of extends ResourceName
  list: infer List
}
  ? List extends true
    ? Item<Of>[]
    : Item<Of>
  : NonNullable<Shown<R>[K & keyof Shown<R>]>

/** What `include` may embed in each resource's items, and as what. */
export type Embeds = { [R in ResourceName]: { -readonly [K in keyof Resources[R]['embeds']]: Embedded<R, K> } }

/** The embedded lists of a resource: `<relation>.limit` sizes them. */
type ListsOf<E> = { [K in keyof E]: E[K] extends unknown[] ? K : never }[keyof E]

/** `<relation>.limit` for each embedded list; nothing (not `{}`, which a number would satisfy) without lists. */
type Limits<E> = [ListsOf<E>] extends [never] ? unknown : { [K in ListsOf<E> & string as `${K}.limit`]?: number }

/** `select` (fields of T), `include` (relations of E) and the embedded lists' limits, as a query takes them. */
export type Representation<T, E, S extends keyof T, I extends keyof E> = {
  select?: readonly S[]
  include?: readonly I[]
} & Limits<E>

type Selected<T, S extends keyof T> = [S] extends [never] ? T : Pick<T, S | ('id' & keyof T)>

/**
 * An item as `select` S and `include` I shape it: `id` and the selected fields (all without
 * `select`), and each included relation (in place of a field of the same name: a comment's author).
 */
export type Shaped<T, E, S extends keyof T = never, I extends keyof E = never> = [I] extends [never] ? Selected<T, S> : Omit<Selected<T, S>, I> & Pick<E, I>

export type Pagination = components['schemas']['CollectionMeta']['pagination']

/** One page of a collection, as the service sends it. */
export interface Page<T> {
  data: T[]
  meta: { timestamp: string; pagination: Pagination }
}

/** A GraphQL answer: data, errors, or both (partial data). */
export interface GraphQLResult<TData = Record<string, unknown>> {
  data?: TData | null
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[]
}
