// Mutation resolvers that declare their input instead of checking it by hand: the TypeBox schema
// the REST body uses validates the GraphQL input (same Ajv, same VALIDATION_ERROR details) before
// the resolver runs, so GraphQL cannot accept what REST refuses. The schema assembly refuses, at
// start-up, a Mutation field whose resolver was not built here (attachResolvers in schema.ts).
import { type Static, type TSchema, Type } from 'typebox'
import { bulkSizeRefusal } from '../core/bulk.js'
import { assertValid } from '../core/validation.js'
import type { GraphQLContext } from './context.js'

type MutationResolver<A, R> = (parent: unknown, args: A, context: GraphQLContext) => R

/** Every resolver built by mutation() or mutationWithoutInput(): what attachResolvers checks for. */
const declared = new WeakSet<object>()

/**
 * A mutation with an input object: `input` validates `args.input` (or what `from` picks out of the
 * arguments, where the GraphQL arguments hold more or less than the REST body) before `resolve`
 * receives it, typed. The schema's type is inferred from `input` alone (NoInfer): inferring it
 * back through Static<S> as well costs the type checker seconds on every run.
 */
export function mutation<S extends TSchema, A = { input: unknown }, R = unknown>(
  declaration: { input: S; from?: (args: A) => unknown },
  resolve: (input: NoInfer<Static<S>>, args: A, context: GraphQLContext) => R,
): MutationResolver<A, R> {
  const { input: schema, from = (args: A) => (args as { input?: unknown }).input } = declaration
  const resolver: MutationResolver<A, R> = (_parent, args, context) => {
    const input = from(args)
    assertValid<Static<S>>(schema, input)
    return resolve(input, args, context)
  }
  declared.add(resolver)
  return resolver
}

/**
 * A bulk write's mutation (`createPosts(input: [CreatePostInput!]!)`): `item` validates each item of
 * `args.input` (or of what `from` picks out), the errors named by index (`[17].title`), after the
 * list's size is checked as REST checks an array body's (none, or past the bound, refused whole).
 */
export function bulkMutation<S extends TSchema, A = { input: unknown }, R = unknown>(
  declaration: { item: S; from?: (args: A) => unknown },
  resolve: (items: NoInfer<Static<S>>[], args: A, context: GraphQLContext) => R,
): MutationResolver<A, R> {
  const { item, from = (args: A) => (args as { input?: unknown }).input } = declaration
  const list = Type.Array(item)
  const resolver: MutationResolver<A, R> = (_parent, args, context) => {
    const items = from(args)
    const refusal = bulkSizeRefusal(Array.isArray(items) ? items.length : 1)
    if (refusal !== undefined) throw refusal
    assertValid<Static<S>[]>(list, items)
    return resolve(items, args, context)
  }
  declared.add(resolver)
  return resolver
}

/** A mutation without an input object (deletes: an id, which the service parses). */
export function mutationWithoutInput<A, R>(resolve: (args: A, context: GraphQLContext) => R): MutationResolver<A, R> {
  const resolver: MutationResolver<A, R> = (_parent, args, context) => resolve(args, context)
  declared.add(resolver)
  return resolver
}

/** Whether a resolver was built by mutation() or mutationWithoutInput(). */
export function isDeclaredMutation(resolver: unknown): boolean {
  return typeof resolver === 'function' && declared.has(resolver)
}
