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

export type User = DataOf<'getUserV1'>
export type Post = DataOf<'getPostV1'>
export type Comment = DataOf<'getCommentV1'>
export type Todo = DataOf<'getTodoV1'>
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
