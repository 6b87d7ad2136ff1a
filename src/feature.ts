// What a feature module is. Each feature (src/users, src/posts, …) exports one object of this shape
// from its `<feature>.feature.ts`, and everything the rest of the service needs to know about it is
// here: its service factory, its REST routes (each carrying its own OpenAPI text), its part of the
// GraphQL schema, the event topics it publishes, the relations it adds to other features' items,
// its addresses in the API's index, the count the landing page shows, its section of the data files and its generated rows. Its tables are declared in
// its `<feature>.table.ts` (src/db/tables.ts says how). The composition root (src/features.ts,
// src/app.ts) lists the features once and wires each into the shared layers, which never import a
// feature themselves; the lint, the test projects and the CLI read the same list. It sits beside
// the composition root, above the shared layers whose types it names and below the features that
// implement it (the lint's layers, .dependency-cruiser.mjs).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { TSchema } from 'typebox'
import type { Relation } from './collections/embedding.js'
import type { Db } from './db/create-database.js'
import type { ResolverMap, SubscriptionField } from './graphql/schema.js'
import type { DataSection } from './data-section.js'
import type { RateLimitCharger } from './limits/rate-limit.js'
import type { IndexedAddress } from './pages/landing-page.js'
import type { SeedSection } from './seed-section.js'

/** A relation another feature adds to this one's items, wired by the composition root. */
export interface Embedded {
  /** The embedded value's schema (one object, or an array), with its description. */
  readonly schema: TSchema
  /** How a page's worth is read, through the contributing feature's service. */
  readonly relation: Relation<{ readonly id: number }>
}

/** The relations other features add to a feature's items, by name, in the order of the features. */
export type EmbeddedRelations = Readonly<Record<string, Embedded>>

/**
 * What a feature's routes are given besides the services: the relations others embed in its items,
 * and the charge their reading takes from the caller's rate limit (undefined when it is off).
 */
export interface RoutesOptions {
  readonly embedded: EmbeddedRelations
  readonly chargeRateLimit: RateLimitCharger | undefined
}

/** `S`: the services the feature's routes and resolvers need (its own, and others' it reads through). */
export interface Feature<S extends object> {
  readonly name: string
  /** Builds the feature's service; the composition root gives it its dependencies. */
  readonly createService: (...args: never[]) => unknown
  /** REST routes, registered under every API mount (src/http/versioning.ts). */
  readonly routes: FastifyPluginAsyncTypebox<S & RoutesOptions>
  /** Its part of the GraphQL schema: SDL, and resolvers and subscription fields over the services. */
  readonly graphql?: {
    readonly typeDefs: string
    resolvers(services: S): ResolverMap
    subscriptions?(services: S): Readonly<Record<string, SubscriptionField>>
  }
  /** What it publishes on the events port, by topic, with each one's shape (src/events/events.ts). */
  readonly topics?: Readonly<Record<string, object>>
  /**
   * Relations it adds to another feature's items (`include=<name>` on that feature's GET answers):
   * a user's posts are the posts feature's to read, so the posts feature offers them to users.
   * The feature that embeds never imports the one it embeds: no cycle between features.
   */
  readonly embeds?: readonly {
    /** The feature whose items embed it. */
    readonly in: string
    readonly name: string
    readonly schema: TSchema
    readonly relation: (services: S) => Relation<{ readonly id: number }>
  }[]
  /** Its addresses in the API's index, by their name there (`user_posts_url`), in the order they are listed. */
  readonly apiIndex?: Readonly<Record<string, IndexedAddress>>
  /** The landing page's count of its resource: what an anonymous caller could list. */
  readonly landingCount?: {
    readonly label: string
    readonly count: (db: Db) => Promise<number>
  }
  /** Its section of the data files `threadline export` writes and `threadline import` reads. */
  readonly data?: DataSection
  /** Its generated rows: the demo data, and `threadline seed`. */
  readonly seed?: SeedSection
}

/** The embedded relations' schemas, by name, for the item schema (Represented). */
export const embeddedSchemas = (embedded: EmbeddedRelations): Record<string, TSchema> =>
  Object.fromEntries(Object.entries(embedded).map(([name, { schema }]) => [name, schema]))

/** The embedded relations, by name, for the item's Embeddable. */
export const embeddedRelations = (embedded: EmbeddedRelations): Record<string, Relation<{ readonly id: number }>> =>
  Object.fromEntries(Object.entries(embedded).map(([name, { relation }]) => [name, relation]))
