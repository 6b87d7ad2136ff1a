// The features, in the order they are mounted, and what joins them: their services (built here,
// each given what it depends on), their GraphQL parts, their event topics, the relations they embed
// in each other's items, the landing page's counts and the API index's addresses. One line per
// feature in FEATURES; src/app.ts registers each feature's routes under every API mount and hands the GraphQL parts to
// the endpoint. This file and app.ts are the only places features meet; the lint
// (eslint.config.js) and the test projects (vitest.config.ts) read the
// list of features from this file's imports, so a feature missing here is a lint error.
import { albumsFeature } from './albums/albums.feature.js'
import { CALLER_TOPICS, type CallerTopics } from './core/caller-changed.js'
import type { Embedded, EmbeddedRelations, Feature } from './feature.js'
import { commentsFeature } from './comments/comments.feature.js'
import type { CommentsTopics } from './comments/comments.events.js'
import type { Database } from './db/create-database.js'
import type { Events, TopicSchemas } from './events/events.js'
import { type GraphQLPart, typeDefsOf } from './graphql/schema.js'
import type { IndexedAddress, ResourceCount } from './pages/landing-page.js'
import { photosFeature } from './photos/photos.feature.js'
import { postsFeature } from './posts/posts.feature.js'
import { todosFeature } from './todos/todos.feature.js'
import { tokensFeature } from './tokens/tokens.feature.js'
import type { TokensServiceDeps } from './tokens/tokens.service.js'
import { usersFeature } from './users/users.feature.js'
import type { UsersServiceDeps } from './users/users.service.js'

export const FEATURES: readonly Feature<Services>[] = [usersFeature, postsFeature, commentsFeature, todosFeature, albumsFeature, photosFeature, tokensFeature]

/** The topics the features publish (what subscriptions listen to). */
export type FeatureTopics = CommentsTopics

export const FEATURE_TOPICS: TopicSchemas<FeatureTopics> = Object.assign({}, ...FEATURES.map(({ topics }) => topics ?? {})) as TopicSchemas<FeatureTopics>

/** Every topic on the events port: the core's, then each feature's. */
export type AppTopics = CallerTopics & FeatureTopics

export const APP_TOPICS: TopicSchemas<AppTopics> = { ...CALLER_TOPICS, ...FEATURE_TOPICS }

export interface ServicesDeps {
  db: Database['db']
  events: Events<AppTopics>
  passwordChanges: UsersServiceDeps['passwordChanges']
  scryptN: number
  tokenTtlMs: number
  signInAllowance: TokensServiceDeps['signInAllowance']
  /** An outside OpenID Connect issuer whose access tokens sign callers in too. */
  oidc?: TokensServiceDeps['oidc']
  /** The store's data version, where it has one (SQLite): the services that keep what they read know when it is stale. */
  dataVersion?: () => number
  /** The store's changes, where the callers of tokens may be kept by them (SQLite, whose feed hears every commit at once). */
  changes?: TokensServiceDeps['changes']
}

export type Services = ReturnType<typeof createServices>

/** Each feature's service, given what it depends on. */
export function createServices({ db, events, passwordChanges, scryptN, tokenTtlMs, signInAllowance, oidc, dataVersion, changes }: ServicesDeps) {
  const users = usersFeature.createService({ db, events, passwordChanges, scryptN })
  return {
    users,
    posts: postsFeature.createService({ db }),
    comments: commentsFeature.createService({ db, events, ...(dataVersion === undefined ? {} : { dataVersion }) }),
    todos: todosFeature.createService({ db }),
    albums: albumsFeature.createService({ db }),
    photos: photosFeature.createService({ db }),
    tokens: tokensFeature.createService({
      db,
      events,
      users,
      tokenTtlMs,
      signInAllowance,
      ...(oidc === undefined ? {} : { oidc }),
      ...(changes === undefined ? {} : { changes }),
    }),
  }
}

/** What each feature brings to the GraphQL schema, in the order of FEATURES. */
export function graphqlParts(services: Services): GraphQLPart[] {
  return FEATURES.flatMap(({ graphql }) =>
    graphql === undefined ? [] : [{ typeDefs: graphql.typeDefs, resolvers: graphql.resolvers(services), subscriptions: graphql.subscriptions?.(services) }],
  )
}

/** The schema's SDL, without services (for tools and tests that only read it). */
export const graphqlTypeDefs = (): string => typeDefsOf(FEATURES.flatMap(({ graphql }) => (graphql === undefined ? [] : [graphql])))

/**
 * What each feature's items embed from the others (`include`), by feature name: each relation a
 * feature offers, given the services it reads through. A relation offered to a feature that is not
 * registered is a mistake in this list, refused at start.
 */
export function embeddedIn(services: Services): ReadonlyMap<string, EmbeddedRelations> {
  const byFeature = new Map<string, Record<string, Embedded>>(FEATURES.map(({ name }) => [name, {}]))
  for (const feature of FEATURES) {
    for (const offered of feature.embeds ?? []) {
      const relations = byFeature.get(offered.in)
      if (relations === undefined) throw new Error(`${feature.name} offers ${offered.name} to ${offered.in}, which is not a feature`)
      relations[offered.name] = { schema: offered.schema, relation: offered.relation(services) }
    }
  }
  return byFeature
}

/** The landing page's counts, in the order of FEATURES: what an anonymous caller could list of each resource. */
export const landingCounts = (db: Database['db']): Promise<ResourceCount[]> =>
  Promise.all(
    FEATURES.flatMap((feature) => {
      const { landingCount } = feature
      return landingCount === undefined ? [] : [landingCount.count(db).then((count) => ({ name: feature.name, label: landingCount.label, count }))]
    }),
  )

/** The resources' addresses in the API's index (the landing page's JSON), in the order of FEATURES. */
export const API_INDEX: Readonly<Record<string, IndexedAddress>> = Object.assign({}, ...FEATURES.map(({ apiIndex }) => apiIndex ?? {})) as Record<
  string,
  IndexedAddress
>
