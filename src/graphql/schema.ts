// The GraphQL schema, assembled from the parts the features bring (src/features.ts): each
// contributes its types, its fields on the others' types (`extend type User { posts }`), its
// resolvers and its subscription fields. This layer knows no feature: it joins what it is given.
import { type GraphQLFieldResolver, GraphQLObjectType, GraphQLScalarType, type GraphQLSchema } from 'graphql'
import { requireSignedIn } from '../core/caller.js'
import { AppError } from '../errors.js'
import { isEventsInterrupted } from '../events/event-stream.js'
import { OPERATOR_INPUTS_SDL } from './collection-args.js'
import { CONNECTION_PAGE_INFO_SDL } from './connections.js'
import type { GraphQLContext } from './context.js'
import { DATE_TIME_SDL, dateTimeScalar } from './date-time.js'
import { rootDescribed } from './error-codes.js'
import { isDeclaredMutation } from './validated.js'

type Resolver = (parent: never, args: never, context: GraphQLContext, info: never) => unknown
export type ResolverMap = Record<string, Record<string, Resolver>>

/** A subscription field: a source stream of events (`subscribe`), and each event as the field's value (`resolve`). */
export interface SubscriptionField {
  subscribe: GraphQLFieldResolver<unknown, GraphQLContext>
  /** The event as the field's value; the context is the subscription's (its stream is told the event's id). */
  resolve: (event: never, context: GraphQLContext) => unknown
}

/** What one feature brings to the schema. */
export interface GraphQLPart {
  /** SDL: its types, and the fields it adds to the others' (`extend type User { posts }`). */
  readonly typeDefs: string
  readonly resolvers: ResolverMap
  readonly subscriptions?: Readonly<Record<string, SubscriptionField>>
}

const baseTypeDefs = /* GraphQL */ `
  ${rootDescribed("Reads. Anonymous callers see what is public; a Bearer token shows the caller's drafts too.")}
  type Query

  ${rootDescribed('Writes. Every mutation needs a signed-in caller (Authorization: Bearer <token>): UNAUTHENTICATED at its field otherwise.')}
  type Mutation

  ${rootDescribed('Real time, over WebSocket (graphql-transport-ws) at /graphql or Server-Sent Events (graphql-sse) at /graphql/stream.')}
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

  ${CONNECTION_PAGE_INFO_SDL}

  ${DATE_TIME_SDL}

  ${OPERATOR_INPUTS_SDL}
`

/** The schema's SDL: the root types, page info (of pages and of connections), DateTime and the operator inputs, then each part's, in the order given. */
export const typeDefsOf = (parts: readonly Pick<GraphQLPart, 'typeDefs'>[]): string => [baseTypeDefs, ...parts.map((part) => part.typeDefs)].join('\n')

/**
 * Sets every part's resolvers on the schema built from the SDL: each field's `resolve`, and the
 * DateTime scalar's behaviour. A resolver for a type or field the SDL lacks fails the start, as does
 * a mutation not built by mutation() or mutationWithoutInput().
 */
export function attachResolvers(schema: GraphQLSchema, parts: readonly GraphQLPart[]): void {
  for (const [typeName, fields] of Object.entries(mergedResolvers(parts))) {
    const type = schema.getType(typeName)
    if (!(type instanceof GraphQLObjectType)) throw new Error(`The schema has no object type ${typeName} for its resolvers`)
    const schemaFields = type.getFields()
    for (const [name, resolve] of Object.entries(fields)) {
      const field = schemaFields[name]
      if (field === undefined) throw new Error(`The schema has no field ${typeName}.${name} for its resolver`)
      field.resolve = resolve as GraphQLFieldResolver<unknown, unknown>
    }
  }
  const dateTime = schema.getType('DateTime')
  if (!(dateTime instanceof GraphQLScalarType)) throw new Error('The schema has no DateTime scalar')
  Object.assign(dateTime, dateTimeScalar)
}

/** Every part's resolvers by type; each mutation refused to anonymous callers before its input is read. */
function mergedResolvers(parts: readonly GraphQLPart[]): ResolverMap {
  const merged: ResolverMap = { Query: {}, Mutation: {} }
  for (const part of parts) {
    for (const [type, fields] of Object.entries(part.resolvers)) merged[type] = { ...merged[type], ...fields }
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
  return merged
}

/** What a subscriber receives where live events were interrupted (Redis away); its subscription stays open. */
export const EVENTS_INTERRUPTED_MESSAGE = 'Live events are interrupted; events may be missed until they resume.'

/**
 * Sets the subscription fields' subscribe and resolve on the schema.
 * Where an event stream marks an interruption, the field fails for that one result
 * (SERVICE_UNAVAILABLE), which every transport sends as a result with `errors`, and the
 * subscription goes on: the one place where subscribers are told.
 */
export function attachSubscriptions(schema: GraphQLSchema, parts: readonly GraphQLPart[]): void {
  const fields = schema.getSubscriptionType()?.getFields() ?? {}
  for (const [name, { subscribe, resolve }] of parts.flatMap((part) => Object.entries(part.subscriptions ?? {}))) {
    const field = fields[name]
    if (field === undefined) throw new Error(`The schema has no subscription field ${name}`)
    field.subscribe = subscribe
    field.resolve = (source: unknown, _args: unknown, context: GraphQLContext) => {
      if (isEventsInterrupted(source)) throw new AppError('SERVICE_UNAVAILABLE', EVENTS_INTERRUPTED_MESSAGE)
      return resolve(source as never, context)
    }
  }
}
