// The GraphQL schema, assembled from the feature folders: each contributes its types, its fields on
// the others' types (`extend type User { posts }`) and its resolvers.
import type { GraphQLSchema } from 'graphql'
import type { IResolvers } from 'mercurius'
import { requireSignedIn } from '../core/caller.js'
import { commentsResolvers, commentsSubscriptions, commentsTypeDefs } from '../comments/comments.graphql.js'
import type { CommentsService } from '../comments/comments.service.js'
import { AppError } from '../errors.js'
import { isEventsInterrupted } from '../events/event-stream.js'
import { postReference, postsResolvers, postsTypeDefs } from '../posts/posts.graphql.js'
import type { PostsService } from '../posts/posts.service.js'
import { todosResolvers, todosTypeDefs } from '../todos/todos.graphql.js'
import type { TodosService } from '../todos/todos.service.js'
import { userReference, usersResolvers, usersTypeDefs } from '../users/users.graphql.js'
import type { UsersService } from '../users/users.service.js'
import type { GraphQLContext } from './context.js'
import { isDeclaredMutation } from './validated.js'

export interface GraphQLServices {
  users: UsersService
  posts: PostsService
  comments: CommentsService
  todos: TodosService
}

const baseTypeDefs = /* GraphQL */ `
"Reads. Anonymous callers see what is public; a Bearer token shows the caller's drafts too."
type Query

"Writes. Every mutation needs a signed-in caller (Authorization: Bearer <token>)."
type Mutation

"Real time, over WebSocket (graphql-transport-ws) at /graphql or Server-Sent Events (graphql-sse) at /graphql/stream."
type Subscription

"Where a page sits in its collection: pass nextCursor as cursor for the next page."
type PageInfo {
  limit: Int!
  "The page number, when paging by page."
  page: Int
  "Matching items, counted up to 10000 (then 10000 and totalCapped); counted only when selected."
  total: Int
  "More items match than total says: counting stopped at 10000, as far as pages by offset reach."
  totalCapped: Boolean
  pages: Int
  nextCursor: String
  hasMore: Boolean!
}
`

export const typeDefs = [baseTypeDefs, usersTypeDefs, postsTypeDefs, commentsTypeDefs, todosTypeDefs].join('\n')

type Resolver = (parent: never, args: never, context: GraphQLContext, info: never) => unknown
type ResolverMap = Record<string, Record<string, Resolver>>

export function buildResolvers(services: GraphQLServices): IResolvers {
  const userById = userReference(services.users)
  const parts: ResolverMap[] = [
    usersResolvers(services.users),
    postsResolvers(services.posts, userById),
    commentsResolvers(services.comments, userById, postReference(services.posts)),
    todosResolvers(services.todos, userById),
  ]
  const merged: ResolverMap = { Query: {}, Mutation: {} }
  for (const part of parts) {
    for (const [type, fields] of Object.entries(part)) merged[type] = { ...merged[type], ...fields }
  }
  // Like the REST write routes (config.access 'signed-in'): no mutation runs for an anonymous
  // caller, so its input is not even looked at.
  const mutations = merged.Mutation ?? {}
  for (const [name, resolve] of Object.entries(mutations)) {
    // Fail closed, as routes without an access rule do: a mutation declares its input (validated.ts).
    if (!isDeclaredMutation(resolve)) throw new Error(`Mutation.${name} is not built by mutation() or mutationWithoutInput() (graphql/validated.ts)`)
    mutations[name] = (parent, args, context, info) => {
      requireSignedIn(context.caller)
      return resolve(parent, args, context, info)
    }
  }
  return merged as IResolvers
}

/** What a subscriber receives where live events were interrupted (Redis away); its subscription stays open. */
export const EVENTS_INTERRUPTED_MESSAGE = 'Live events are interrupted; events may be missed until they resume.'

/**
 * Sets the subscription fields' subscribe and resolve on the schema (mercurius sets only resolve).
 * Where an event stream marks an interruption, the field fails for that one result
 * (SERVICE_UNAVAILABLE), which every transport sends as a result with `errors`, and the
 * subscription goes on: the one place where subscribers are told.
 */
export function attachSubscriptions(schema: GraphQLSchema, services: GraphQLServices): void {
  const fields = schema.getSubscriptionType()?.getFields() ?? {}
  for (const [name, { subscribe, resolve }] of Object.entries(commentsSubscriptions(services.comments))) {
    const field = fields[name]
    if (field === undefined) throw new Error(`The schema has no subscription field ${name}`)
    field.subscribe = subscribe
    field.resolve = (source: unknown) => {
      if (isEventsInterrupted(source)) throw new AppError('SERVICE_UNAVAILABLE', EVENTS_INTERRUPTED_MESSAGE)
      return resolve(source as Parameters<typeof resolve>[0])
    }
  }
}
