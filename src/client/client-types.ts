// The resources and bodies the client speaks, named after the generated operation types (v1's;
// v2's are the same but for what meta.pagination carries, which these types cover as optional).
import type { operations } from './openapi.js'

type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never
type DataOf<K extends keyof operations> =
  JsonOf<operations[K]['responses'] extends { 200: infer R } ? R : operations[K]['responses'] extends { 201: infer R } ? R : never> extends { data: infer D }
    ? D
    : never
type BodyOf<K extends keyof operations> = operations[K] extends { requestBody: infer B } ? JsonOf<NonNullable<B>> : never
type QueryOf<K extends keyof operations> = operations[K]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never

// Read from the answers to writes: a GET's item has every field but `id` optional (`select`).
export type User = DataOf<'createUserV1'>
export type Post = DataOf<'createPostV1'>
export type Comment = DataOf<'createCommentV1'>
export type Todo = DataOf<'createTodoV1'>
export type IssuedToken = DataOf<'signInV1'>

export type NewUser = BodyOf<'createUserV1'>
export type UserReplacement = BodyOf<'replaceUserV1'>
export type UserChanges = BodyOf<'updateUserV1'>
export type NewPost = BodyOf<'createPostV1'>
export type PostReplacement = BodyOf<'replacePostV1'>
export type PostChanges = BodyOf<'updatePostV1'>
export type NewComment = BodyOf<'createCommentV1'>
export type CommentChanges = BodyOf<'updateCommentV1'>
export type NewTodo = BodyOf<'createTodoV1'>
export type TodoChanges = BodyOf<'updateTodoV1'>
export type Credentials = BodyOf<'signInV1'>

/** Filters, sort, search and paging of a collection; `all()` takes the same without page and cursor. */
export type UsersQuery = QueryOf<'listUsersV1'>
export type PostsQuery = QueryOf<'listPostsV1'>
export type CommentsQuery = QueryOf<'listCommentsV1'>
export type TodosQuery = QueryOf<'listTodosV1'>

/** What `include` may embed in each resource's items, and as what. */
export interface Embeds {
  users: { posts: Post[]; todos: Todo[] }
  posts: { author: User; comments: Comment[] }
  comments: { author: User; post: Post }
  todos: Record<never, never>
}

/** The embedded lists of a resource: `<relation>.limit` sizes them. */
type ListsOf<E> = { [K in keyof E]: E[K] extends unknown[] ? K : never }[keyof E]

/** `select` (fields of T), `include` (relations of E) and the embedded lists' limits, as a query takes them. */
export type Representation<T, E, S extends keyof T, I extends keyof E> = {
  select?: readonly S[]
  include?: readonly I[]
} & { [K in ListsOf<E> & string as `${K}.limit`]?: number }

type Selected<T, S extends keyof T> = [S] extends [never] ? T : Pick<T, S | ('id' & keyof T)>

/**
 * An item as `select` S and `include` I shape it: `id` and the selected fields (all without
 * `select`), and each included relation (in place of a field of the same name: a comment's author).
 */
export type Shaped<T, E, S extends keyof T = never, I extends keyof E = never> = [I] extends [never] ? Selected<T, S> : Omit<Selected<T, S>, I> & Pick<E, I>

export type Pagination = JsonOf<operations['listUsersV1']['responses'][200]>['meta']['pagination']

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
