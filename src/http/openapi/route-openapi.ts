// What a REST route declares for the API description, beside the `summary`, `description`, `tags` and
// `operationId` of its schema: the resource it answers with (a feature's tag, noun and example), an
// example body, and the error statuses only the feature knows it may answer. Carried in the route's
// `config.openapi`, so that adding a route means editing the route, and this layer names no resource.
import type { AnswerHeader } from './headers.js'

/** The `meta.timestamp` of every example answer, and the date the features' examples use. */
export const EXAMPLE_TIMESTAMP = '2026-11-25T22:27:04.243Z'

/** A feature's part of the document, shared by its routes. */
export interface ResourceOpenApi {
  /** The tag its operations are grouped under, listed in the document in the order routes are registered. */
  tag: { name: string; description: string }
  /** What one item is called in the answers' descriptions: "The user.", "A page of users.". */
  noun: string
  /** One item as the API shows it. */
  example: Record<string, unknown>
}

/** The route's part, in `config.openapi`. */
export interface RouteOpenApi {
  resource: ResourceOpenApi
  /** A request body that passes the route's body schema. */
  requestExample?: Record<string, unknown>
  /**
   * Its request body's component, where the body is not the resource's for the method (`PostCreate`
   * for a POST): a create at the top level names the parent its nested twin reads from the path.
   */
  body?: string
  /** Error statuses beyond those read from the route's method, access, path and body (409 where the data can conflict). */
  errors?: readonly number[]
  /** A 201 that is not a resource at a new `Location`: what it is, and the headers it carries instead. */
  created?: { description: string; headers: readonly AnswerHeader[] }
}
