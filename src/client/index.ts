// threadline/client: the typed SDK for Threadline's REST API, GraphQL and subscriptions.
export { type ClientOptions, createClient, type ThreadlineClient } from './create-client.js'
export type { PersistedQueryOptions } from './persisted-queries.js'
export type { ResourceHelpers } from './resource-helpers.js'
export { ThreadlineError, type ThreadlineErrorDetail } from './threadline-error.js'
export type * from './client-types.js'
export type { components, operations, paths } from './openapi.js'
