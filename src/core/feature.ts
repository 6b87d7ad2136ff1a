// What a feature module is. Each feature (src/users, src/posts, …) exports one object of this shape
// from its `<feature>.feature.ts`: its service factory, its REST routes (each carrying its own
// OpenAPI text), its part of the GraphQL schema and the event topics it publishes. The
// composition root (src/features.ts, src/app.ts) lists them and wires each into the shared layers,
// which never import a feature themselves.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ResolverMap, SubscriptionField } from '../graphql/schema.js'
import type { DataSection } from './data-section.js'

/** `S`: the services the feature's routes and resolvers need (its own, and others' it reads through). */
export interface Feature<S extends object> {
  readonly name: string
  /** Builds the feature's service; the composition root gives it its dependencies. */
  readonly createService: (...args: never[]) => unknown
  /** REST routes, registered under every API mount (src/http/versioning.ts). */
  readonly routes: FastifyPluginAsyncTypebox<S>
  /** Its part of the GraphQL schema: SDL, and resolvers and subscription fields over the services. */
  readonly graphql?: {
    readonly typeDefs: string
    resolvers(services: S): ResolverMap
    subscriptions?(services: S): Readonly<Record<string, SubscriptionField>>
  }
  /** What it publishes on the events port, by topic, with each one's shape (src/events/events.ts). */
  readonly topics?: Readonly<Record<string, object>>
  /** Its section of the data files `threadline export` writes and `threadline import` reads. */
  readonly data?: DataSection
}
