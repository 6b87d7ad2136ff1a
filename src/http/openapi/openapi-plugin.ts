// The API description: an OpenAPI 3.1 document that @fastify/swagger generates from the routes' own
// TypeBox schemas (paths, path parameters, bodies, answers), completed here with what those schemas
// do not say: the collection query language, who may call, the errors, the headers and examples.
// Built once, on the first request for it, and served as bytes at /openapi.json and /openapi.yaml.
// Describes the versioned paths (/api/v1, /api/v2); the unversioned ones are the same operations
// with the version taken from Accept (see docs/architecture.md, "OpenAPI").
import { createRequire } from 'node:module'
import fastifySwagger from '@fastify/swagger'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import { MAX_PAGE, MAX_SEARCH_LENGTH } from '../../collections/collection-query.js'
import type { CollectionSpec, FieldSpec } from '../../collections/collection-spec.js'
import { DEFAULT_PAGE_LIMIT, MAX_OFFSET_ITEMS, MAX_PAGE_LIMIT } from '../../collections/pagination.js'
import { ErrorBody } from '../envelope.js'
import { API_MOUNTS, API_VERSIONS, type ApiVersion } from '../versioning.js'

export const OPENAPI_JSON_PATH = '/openapi.json'
export const OPENAPI_YAML_PATH = '/openapi.yaml'

export interface OpenApiOptions {
  /** max-age of the document's answers, as for other anonymous reads. @default 0 */
  cacheMaxAgeS: number
}

const { version: packageVersion } = createRequire(import.meta.url)('../../../package.json') as { version: string }

/** The mounts described, by prefix. */
const DESCRIBED_MOUNTS = new Map<string, ApiVersion>(
  API_MOUNTS.flatMap((mount) => (mount.version === 'negotiated' ? [] : [[mount.prefix, mount.version] as const])),
)

type Resource = 'user' | 'post' | 'comment' | 'todo' | 'token'

interface OperationText {
  /** The operationId without its version (`listUsers`; `listUsersV1` in the document). */
  name: string
  summary: string
  /** Who may call it, and what else a caller should know. */
  description: string
  resource: Resource
  /** A request body that passes the route's body schema. */
  body?: Record<string, unknown>
}

/**
 * Every REST operation, by method and path within a mount. A REST route missing here stops the
 * app at start-up: what is served is described.
 */
const OPERATIONS: Record<string, OperationText> = {
  'GET /users': { name: 'listUsers', summary: 'List users', description: 'Anyone.', resource: 'user' },
  'GET /users/:id': { name: 'getUser', summary: 'Get a user', description: 'Anyone.', resource: 'user' },
  'POST /users': {
    name: 'createUser',
    summary: 'Create a user',
    description: 'Admins only. The answer says where the user is, in `Location`.',
    resource: 'user',
    body: { name: 'Grace Hopper', email: 'grace@example.com', age: 85, password: 'cobol-forever' },
  },
  'PUT /users/:id': {
    name: 'replaceUser',
    summary: 'Replace a user',
    description:
      'The user, or an admin. `name` and `email` are required; `age` and `avatar` left out become null; ' +
      '`role` (only an admin sets it) and `password` left out stay. The last admin cannot be demoted (409).',
    resource: 'user',
    body: { name: 'Grace B. Hopper', email: 'grace@example.com' },
  },
  'PATCH /users/:id': {
    name: 'updateUser',
    summary: 'Change part of a user',
    description: 'The user, or an admin. Only the fields sent change (a JSON merge patch); null clears an optional field.',
    resource: 'user',
    body: { age: 86 },
  },
  'DELETE /users/:id': {
    name: 'deleteUser',
    summary: 'Delete a user',
    description: 'The user, or an admin. Their posts, comments, todos and tokens go too. The last admin cannot be deleted (409).',
    resource: 'user',
  },
  'GET /users/:userId/posts': {
    name: 'listPosts',
    summary: "List a user's posts",
    description: 'Anyone; drafts only for their owner and admins.',
    resource: 'post',
  },
  'GET /users/:userId/posts/:postId': {
    name: 'getPost',
    summary: 'Get a post',
    description: 'Anyone; a draft only for its owner and admins (404 for everyone else).',
    resource: 'post',
  },
  'POST /users/:userId/posts': {
    name: 'createPost',
    summary: 'Create a post',
    description: 'The owner, or an admin. `status` defaults to `published`.',
    resource: 'post',
    body: { title: 'On compilers', content: 'A compiler translates programs.', status: 'draft' },
  },
  'PUT /users/:userId/posts/:postId': {
    name: 'replacePost',
    summary: 'Replace a post',
    description: 'The owner, or an admin. `title` and `content` are required; `status` left out is `published`.',
    resource: 'post',
    body: { title: 'On compilers', content: 'A compiler translates programs into machine code.' },
  },
  'PATCH /users/:userId/posts/:postId': {
    name: 'updatePost',
    summary: 'Change part of a post',
    description: 'The owner, or an admin. Only the fields sent change (a JSON merge patch).',
    resource: 'post',
    body: { status: 'published' },
  },
  'DELETE /users/:userId/posts/:postId': {
    name: 'deletePost',
    summary: 'Delete a post',
    description: 'The owner, or an admin. Its comments go too.',
    resource: 'post',
  },
  'GET /users/:userId/posts/:postId/comments': {
    name: 'listComments',
    summary: "List a post's comments",
    description: 'Anyone who may see the post.',
    resource: 'comment',
  },
  'GET /users/:userId/posts/:postId/comments/:commentId': {
    name: 'getComment',
    summary: 'Get a comment',
    description: 'Anyone who may see the post.',
    resource: 'comment',
  },
  'POST /users/:userId/posts/:postId/comments': {
    name: 'createComment',
    summary: 'Comment on a post',
    description: 'Signed in; the author is the caller.',
    resource: 'comment',
    body: { content: 'Nicely put.' },
  },
  'PATCH /users/:userId/posts/:postId/comments/:commentId': {
    name: 'updateComment',
    summary: 'Change a comment',
    description: 'The author, or an admin.',
    resource: 'comment',
    body: { content: 'Nicely put, indeed.' },
  },
  'DELETE /users/:userId/posts/:postId/comments/:commentId': {
    name: 'deleteComment',
    summary: 'Delete a comment',
    description: "The author, the post's owner, or an admin.",
    resource: 'comment',
  },
  'GET /users/:userId/todos': { name: 'listTodos', summary: "List a user's todos", description: 'Anyone.', resource: 'todo' },
  'GET /users/:userId/todos/:todoId': { name: 'getTodo', summary: 'Get a todo', description: 'Anyone.', resource: 'todo' },
  'POST /users/:userId/todos': {
    name: 'createTodo',
    summary: 'Create a todo',
    description: 'The owner, or an admin. A new todo is not completed.',
    resource: 'todo',
    body: { text: 'Write the A-0 manual' },
  },
  'PATCH /users/:userId/todos/:todoId': {
    name: 'updateTodo',
    summary: 'Change a todo',
    description: 'The owner, or an admin. Only the fields sent change (a JSON merge patch).',
    resource: 'todo',
    body: { completed: true },
  },
  'DELETE /users/:userId/todos/:todoId': {
    name: 'deleteTodo',
    summary: 'Delete a todo',
    description: 'The owner, or an admin.',
    resource: 'todo',
  },
  'POST /tokens': {
    name: 'signIn',
    summary: 'Sign in for a token',
    description: 'Anyone with a password. A wrong e-mail or password is 401. The token is shown once.',
    resource: 'token',
    body: { email: 'grace@example.com', password: 'cobol-forever' },
  },
  'DELETE /tokens/current': {
    name: 'revokeToken',
    summary: 'Revoke the token in use',
    description: 'Signed in; the token sent is revoked.',
    resource: 'token',
  },
}

const TAGS: Record<Resource, { name: string; description: string }> = {
  user: { name: 'Users', description: 'People, and who may administer the service.' },
  post: { name: 'Posts', description: "A user's posts; drafts are seen only by their owner and admins." },
  comment: { name: 'Comments', description: 'The comments on a post; the author is whoever is signed in.' },
  todo: { name: 'Todos', description: "A user's todos." },
  token: { name: 'Tokens', description: 'Bearer tokens: sign in for one, revoke it.' },
}

const AT = '2026-11-25T22:27:04.243Z'
const EXAMPLES: Record<Resource, Record<string, unknown>> = {
  user: { id: 11, name: 'Grace Hopper', email: 'grace@example.com', age: 85, avatar: null, role: 'user', createdAt: AT, updatedAt: AT },
  post: {
    id: 101,
    userId: 11,
    title: 'On compilers',
    content: 'A compiler translates programs.',
    status: 'published',
    publishedAt: AT,
    createdAt: AT,
    updatedAt: AT,
  },
  comment: { id: 501, postId: 101, authorId: 1, author: { id: 1, name: 'Leanne Graham' }, content: 'Nicely put.', createdAt: AT, updatedAt: AT },
  todo: { id: 201, userId: 11, text: 'Write the A-0 manual', completed: false, createdAt: AT, updatedAt: AT },
  token: { token: 'tl_8kq3J1dYx0aQ7nW2uVt5rS9pL4mE6cB1zH0gF3yK2iA', expiresAt: '2026-12-25T22:27:04.243Z' },
}

const PAGINATION_EXAMPLE: Record<ApiVersion, Record<string, unknown>> = {
  1: { page: 1, limit: 20, total: 1, pages: 1, nextCursor: null },
  2: { limit: 20, nextCursor: null, hasMore: false },
}

const PAGING: Record<ApiVersion, string> = {
  1: 'v1 pages by `page` and reports the total: `meta.pagination` is `{page, limit, total, pages, nextCursor}` (`{limit, total, nextCursor}` given a `cursor`).',
  2: 'v2 pages by `cursor` and skips the count: `meta.pagination` is `{limit, nextCursor, hasMore}` (`{page, limit, nextCursor, hasMore}` given a `page`).',
}

const header = (description: string, schema: Record<string, unknown>) => ({ description, schema })
const HEADERS = {
  XRequestId: header("The request's id: the X-Request-Id sent, or one made up. Quote it when reporting a problem.", { type: 'string' }),
  ApiVersion: header('The API version that served the request.', { type: 'integer', enum: [...API_VERSIONS] }),
  XRateLimitLimit: header('Requests allowed per window to this caller (when rate limiting is on).', { type: 'integer' }),
  XRateLimitRemaining: header('Requests left in the current window.', { type: 'integer' }),
  XRateLimitReset: header('Seconds until the window starts again.', { type: 'integer' }),
  RateLimit: header('The IETF draft\'s view of the same: `"anonymous";r=299;t=60`.', { type: 'string' }),
  RateLimitPolicy: header('The allowance: `"anonymous";q=300;w=60` (requests, window in seconds).', { type: 'string' }),
  RetryAfter: header('Seconds to wait before trying again.', { type: 'integer', minimum: 1 }),
  ETag: header('A weak validator of what the answer says; send it back in If-None-Match (reads) or If-Match (writes).', { type: 'string' }),
  LastModified: header("The newest `updatedAt` in the answer, as an HTTP date; If-Modified-Since is honoured for single resources.", { type: 'string' }),
  CacheControl: header('`public, max-age=N` for anonymous reads, `private, no-cache` with a token; `no-store` for a new token.', { type: 'string' }),
  Vary: header('`Accept, Authorization, Accept-Encoding`.', { type: 'string' }),
  Link: header('RFC 8288 links to the `next`, `prev` (where there is one) and `first` pages, with the same query.', { type: 'string' }),
  Location: header('The path of the created resource.', { type: 'string', format: 'uri-reference' }),
  WWWAuthenticate: header('`Bearer realm="threadline"`, with `error="invalid_token"` when the token sent was refused.', { type: 'string' }),
} as const

/** The request headers of conditional requests (RFC 9110 §13). */
const CONDITIONS = {
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    description: 'ETags you hold: 304 Not Modified, without a body, when one is current.',
    schema: { type: 'string' },
    example: 'W/"y2F7QZgBpbUhzgzJub39IA88Jyo"',
  },
  IfModifiedSince: {
    name: 'If-Modified-Since',
    in: 'header',
    description: 'An HTTP date: 304 when the resource has not changed since (single resources only; If-None-Match wins).',
    schema: { type: 'string' },
    example: 'Wed, 25 Nov 2026 22:27:04 GMT',
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    description: 'The ETag you read: the write happens only if it is still current, else 412.',
    schema: { type: 'string' },
    example: 'W/"y2F7QZgBpbUhzgzJub39IA88Jyo"',
  },
} as const

type HeaderName = keyof typeof HEADERS
const headerRefs = (names: Record<string, HeaderName>) =>
  Object.fromEntries(Object.entries(names).map(([name, component]) => [name, { $ref: `#/components/headers/${component}` }]))

/** What every answer carries (the rate-limit headers when rate limiting is on). */
const COMMON_HEADERS: Record<string, HeaderName> = {
  'X-Request-Id': 'XRequestId',
  'API-Version': 'ApiVersion',
  'X-RateLimit-Limit': 'XRateLimitLimit',
  'X-RateLimit-Remaining': 'XRateLimitRemaining',
  'X-RateLimit-Reset': 'XRateLimitReset',
  RateLimit: 'RateLimit',
  'RateLimit-Policy': 'RateLimitPolicy',
}
const READ_HEADERS: Record<string, HeaderName> = {
  ETag: 'ETag',
  'Last-Modified': 'LastModified',
  'Cache-Control': 'CacheControl',
  Vary: 'Vary',
}

/** The error answers, by status: the component's name, what it means, an example message. */
const ERRORS: Record<number, { name: string; description: string; example: Record<string, unknown>; headers?: Record<string, HeaderName> }> = {
  400: {
    name: 'BadRequest',
    description: 'A query parameter is unknown or has a bad value, or the body is not JSON (`BAD_REQUEST`, with `details`).',
    example: { code: 'BAD_REQUEST', message: 'The query parameters are not valid', details: [{ field: 'sort', message: '"colour" is not a field of this collection' }] },
  },
  401: {
    name: 'Unauthenticated',
    description: 'No valid bearer token where one is needed, or a token sent that is not valid (`UNAUTHENTICATED`).',
    example: { code: 'UNAUTHENTICATED', message: 'Authentication required: send Authorization: Bearer <token>' },
    headers: { 'WWW-Authenticate': 'WWWAuthenticate' },
  },
  403: { name: 'Forbidden', description: 'Signed in, but not allowed to do this (`FORBIDDEN`).', example: { code: 'FORBIDDEN', message: 'Only an admin may do this' } },
  404: {
    name: 'NotFound',
    description: 'No such resource, or not under the parent in the path, or not visible to the caller (`NOT_FOUND`).',
    example: { code: 'NOT_FOUND', message: 'User not found' },
  },
  406: {
    name: 'NotAcceptable',
    description: 'Accept admits no JSON, or names an unknown API version (`NOT_ACCEPTABLE`).',
    example: { code: 'NOT_ACCEPTABLE', message: 'This API answers in application/json or application/vnd.threadline+json' },
  },
  409: { name: 'Conflict', description: 'The change conflicts with the data: a taken e-mail address, the last admin (`CONFLICT`).', example: { code: 'CONFLICT', message: 'The e-mail address is taken' } },
  412: {
    name: 'PreconditionFailed',
    description: 'If-Match names no current representation (`PRECONDITION_FAILED`).',
    example: { code: 'PRECONDITION_FAILED', message: 'The resource has changed since you read it' },
  },
  413: { name: 'PayloadTooLarge', description: 'The body is larger than 1 MiB (`PAYLOAD_TOO_LARGE`).', example: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than 1 MiB' } },
  415: {
    name: 'UnsupportedMediaType',
    description: 'The body is not application/json or application/merge-patch+json in UTF-8 (`UNSUPPORTED_MEDIA_TYPE`).',
    example: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the request body as application/json' },
  },
  422: {
    name: 'ValidationError',
    description: "The body is JSON but breaks the resource's rules (`VALIDATION_ERROR`, one detail per field).",
    example: { code: 'VALIDATION_ERROR', message: 'The request body is not valid', details: [{ field: 'email', message: 'must be a valid e-mail address' }] },
  },
  429: {
    name: 'RateLimited',
    description: 'Over the allowance (`RATE_LIMITED`); retry after Retry-After seconds.',
    example: { code: 'RATE_LIMITED', message: 'Too many requests: 300 per 60 s. Retry in 12 s.' },
    headers: { 'Retry-After': 'RetryAfter' },
  },
  500: {
    name: 'InternalError',
    description: 'Something went wrong on the service\'s side (`INTERNAL_ERROR`); the message quotes the request id.',
    example: { code: 'INTERNAL_ERROR', message: 'Something went wrong on our side; quote request id 3f1c9a' },
  },
  503: {
    name: 'ServiceUnavailable',
    description: 'The store is busy or unreachable, or the rate limit cannot be checked (`SERVICE_UNAVAILABLE`); retry after Retry-After seconds.',
    example: { code: 'SERVICE_UNAVAILABLE', message: 'The database is busy; retry in a moment' },
    headers: { 'Retry-After': 'RetryAfter' },
  },
}

/** What the route transform hands to the document transform, on each operation; removed from the document. */
const NOTES = 'x-threadline-notes'
interface Notes {
  version: ApiVersion
  method: string
  access: string
  text: OperationText
  collection: CollectionSpec | undefined
}

/** The error statuses an operation can answer, from what it takes and who may call it. */
function errorStatusesOf(notes: { method: string; access: string; hasPathParameters: boolean; hasBody: boolean; resource: Resource }): number[] {
  const { method, access, hasPathParameters, hasBody, resource } = notes
  const writes = method !== 'GET'
  return [
    400,
    401,
    ...(access === 'signed-in' ? [403] : []),
    ...(hasPathParameters ? [404] : []),
    406,
    ...(writes && resource === 'user' ? [409] : []),
    ...(method === 'PUT' || method === 'PATCH' || method === 'DELETE' ? [412] : []),
    ...(hasBody ? [413, 415, 422] : []),
    429,
    500,
    503,
  ]
}

/**
 * Starts collecting the routes (an onRoute hook; nothing runs per request) and serves the
 * document at /openapi.json and /openapi.yaml. Register before the routes it describes.
 */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Threadline',
        version: packageVersion,
        description:
          'Users, their posts, the comments on posts and users\' todos. Every path is served at `/api/v1`, `/api/v2` and ' +
          'unversioned (`/users`, the version named by `Accept: application/vnd.threadline+json; version=N`, else v1); ' +
          'this document describes the versioned paths. v1 and v2 differ only in how collections page. ' +
          'Reads are public; writes need `Authorization: Bearer <token>` (POST /api/v1/tokens). A token that is sent must be valid.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'This service' }],
      tags: Object.values(TAGS),
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token from POST /tokens or `threadline tokens create`.' },
        },
        schemas: { Error: ErrorBody as unknown as Record<string, unknown> },
        headers: HEADERS,
        parameters: CONDITIONS,
        responses: errorComponents(),
      } as Record<string, unknown>,
    },
    hideUntagged: true,
    transform: ({ schema, url, route }) => describeRoute(schema, url, route),
    transformObject: (documentObject) =>
      completeDocument((documentObject as unknown as { openapiObject: OpenApiDocument }).openapiObject) as never,
  })

  // Fail at start-up, as for access rules, when a REST route has no description.
  app.addHook('onRoute', (route) => {
    const mount = describedMount(route)
    if (mount === undefined || route.method === 'HEAD') return
    operationTextOf(String(route.method), route.url.slice(mount.prefix.length))
  })

  // Built on the first request for it (not at start-up: most instances never serve it), then kept.
  let documents: { json: string; yaml: string } | undefined
  const documentsOf = () => (documents ??= { json: JSON.stringify(app.swagger()), yaml: app.swagger({ yaml: true }) })
  const cacheControl = `public, max-age=${options.cacheMaxAgeS}`
  app.get(OPENAPI_JSON_PATH, { config: { access: 'public' } }, async (_request, reply) =>
    reply.header('cache-control', cacheControl).type('application/json; charset=utf-8').send(documentsOf().json),
  )
  app.get(OPENAPI_YAML_PATH, { config: { access: 'public' } }, async (_request, reply) =>
    reply.header('cache-control', cacheControl).type('application/yaml; charset=utf-8').send(documentsOf().yaml),
  )
}

function describedMount(route: { prefix?: string; url: string }): { prefix: string; version: ApiVersion } | undefined {
  const prefix = route.prefix ?? ''
  const version = DESCRIBED_MOUNTS.get(prefix)
  return version === undefined || !route.url.startsWith(prefix) ? undefined : { prefix, version }
}

function operationTextOf(method: string, path: string): OperationText {
  const text = OPERATIONS[`${method} ${path}`]
  if (text === undefined) throw new Error(`Route ${method} ${path} is not described in src/http/openapi.ts (OPERATIONS)`)
  return text
}

/** @fastify/swagger's per-route transform: tags, id, access; everything else hidden. */
function describeRoute(schema: FastifySchema | undefined, url: string, route: RouteOptions): { schema: FastifySchema; url: string } {
  const mount = describedMount(route)
  if (mount === undefined || route.method === 'HEAD' || Array.isArray(route.method)) return { schema: { hide: true }, url }
  const method = route.method
  const text = operationTextOf(method, url.slice(mount.prefix.length))
  const access = route.config?.access ?? 'public'
  const notes: Notes = { version: mount.version, method, access, text, collection: route.config?.collection }
  return {
    url,
    schema: {
      ...schema,
      operationId: `${text.name}V${mount.version}`,
      summary: text.summary,
      description: text.description,
      tags: [TAGS[text.resource].name],
      // Public operations take a token too (and refuse a bad one): anonymous or bearer.
      security: access === 'signed-in' ? [{ bearerAuth: [] }] : [{}, { bearerAuth: [] }],
      ...(method === 'DELETE' ? { response: { 204: { description: 'Done: nothing to say.', type: 'null' } } } : {}),
      [NOTES]: notes,
    } as FastifySchema,
  }
}

interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  [key: string]: unknown
}
interface Operation {
  parameters?: Record<string, unknown>[]
  requestBody?: { content: Record<string, { schema: unknown; example?: unknown }> }
  responses: Record<string, Record<string, unknown>>
  [NOTES]?: Notes
  [key: string]: unknown
}

/** @fastify/swagger's whole-document transform: parameters, answers, headers and examples per operation. */
function completeDocument(document: OpenApiDocument): OpenApiDocument {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const operation of Object.values(item)) {
      const notes = operation[NOTES]
      if (notes === undefined) continue
      delete operation[NOTES]
      completeOperation(operation, notes, path.includes('{'))
    }
  }
  return document
}

function completeOperation(operation: Operation, notes: Notes, hasPathParameters: boolean): void {
  const { version, method, access, text, collection } = notes
  const example = EXAMPLES[text.resource]
  const conditions = method === 'GET' ? ['IfNoneMatch', ...(collection === undefined ? ['IfModifiedSince'] : [])] : method === 'POST' ? [] : ['IfMatch']
  if (conditions.length > 0) {
    operation.parameters = [...(operation.parameters ?? []), ...conditions.map((name) => ({ $ref: `#/components/parameters/${name}` }))]
  }
  if (collection !== undefined) {
    operation.parameters = [...(operation.parameters ?? []), ...collectionParameters(collection)]
    operation.description = `${text.description} ${PAGING[version]}`
  }
  const json = operation.requestBody?.content['application/json']
  if (operation.requestBody !== undefined && json !== undefined) {
    json.example = text.body
    if (method === 'PATCH') operation.requestBody.content['application/merge-patch+json'] = { ...json }
  }

  const responses: Record<string, Record<string, unknown>> = {}
  for (const [status, response] of Object.entries(operation.responses)) {
    const content = response.content as Record<string, { example?: unknown }> | undefined
    const media = content?.['application/json']
    if (status === '200' && method === 'GET') {
      response.description = collection === undefined ? `The ${text.resource}.` : `A page of ${text.resource}s.`
      response.headers = headerRefs({ ...COMMON_HEADERS, ...READ_HEADERS, ...(collection === undefined ? {} : { Link: 'Link' }) })
      if (media !== undefined) {
        media.example =
          collection === undefined
            ? { data: example, meta: { timestamp: AT } }
            : { data: [example], meta: { timestamp: AT, pagination: PAGINATION_EXAMPLE[version] } }
      }
    } else if (status === '201') {
      response.description = text.resource === 'token' ? 'The token, shown this once.' : `Created: the ${text.resource}.`
      response.headers = headerRefs({ ...COMMON_HEADERS, ...(text.resource === 'token' ? { 'Cache-Control': 'CacheControl' } : { Location: 'Location' }) })
      if (media !== undefined) media.example = { data: example, meta: { timestamp: AT } }
    } else if (status === '204') {
      response.headers = headerRefs(COMMON_HEADERS)
    } else {
      response.description = `The ${text.resource}, as it is now.`
      response.headers = headerRefs(COMMON_HEADERS)
      if (media !== undefined) media.example = { data: example, meta: { timestamp: AT } }
    }
    responses[status] = response
  }
  if (method === 'GET') responses['304'] = { $ref: '#/components/responses/NotModified' }
  const statuses = errorStatusesOf({ method, access, hasPathParameters, hasBody: operation.requestBody !== undefined, resource: text.resource })
  for (const status of statuses) responses[String(status)] = { $ref: `#/components/responses/${ERRORS[status]?.name}` }
  operation.responses = responses
}

function errorComponents(): Record<string, unknown> {
  const components: Record<string, unknown> = {
    NotModified: {
      description: 'Not modified: If-None-Match (or If-Modified-Since) matched; no body, the same validators.',
      headers: headerRefs({ ...COMMON_HEADERS, ...READ_HEADERS }),
    },
  }
  for (const { name, description, example, headers } of Object.values(ERRORS)) {
    components[name] = {
      description,
      headers: headerRefs({ ...COMMON_HEADERS, ...headers }),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: { error: example } } },
    }
  }
  return components
}

/** The collection query language for one collection, as query parameters. */
function collectionParameters(spec: CollectionSpec): Record<string, unknown>[] {
  const fields = [...spec.fields.values()]
  const names = (keep: (field: FieldSpec) => boolean) => fields.filter(keep).map((field) => field.name)
  const sortable = names((field) => field.sortable)
  const searchable = names((field) => field.searchable)
  const anyOf = (list: string[]) => `(?:${list.join('|')})`
  const filters = fields
    .filter((field) => field.filterable)
    .map((field) => ({
      name: field.name,
      in: 'query',
      description:
        `Only items whose \`${field.name}\` equals the value; repeated, any of the values.` +
        (field.nullable ? ' `null` matches a missing value.' : ''),
      style: 'form',
      explode: true,
      schema: { type: 'array', maxItems: 100, items: filterValueSchema(field) },
    }))
  return [
    ...filters,
    {
      name: 'sort',
      in: 'query',
      description: `Comma-separated fields, \`-\` for descending: ${sortable.join(', ')}. \`id\` always breaks ties.`,
      schema: { type: 'string', pattern: `^-?${anyOf(sortable)}(?:,-?${anyOf(sortable)})*$` },
      example: '-createdAt',
    },
    {
      name: 'q',
      in: 'query',
      description: `Case-insensitive substring search (\`%\` and \`_\` are literal) in \`fields\`, by default ${searchable.join(', ')}.`,
      schema: { type: 'string', maxLength: MAX_SEARCH_LENGTH },
    },
    {
      name: 'fields',
      in: 'query',
      description: 'Comma-separated fields `q` searches (only with `q`).',
      schema: { type: 'string', pattern: `^${anyOf(searchable)}(?:,${anyOf(searchable)})*$` },
    },
    {
      name: 'page',
      in: 'query',
      description: `The page, from 1 (the default mode in v1). Pages by offset stop at page × limit = ${MAX_OFFSET_ITEMS} (400 past it); \`cursor\` goes further.`,
      schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE },
    },
    {
      name: 'limit',
      in: 'query',
      description: `Items per page: default ${DEFAULT_PAGE_LIMIT}; above ${MAX_PAGE_LIMIT} capped (meta.pagination.limit says).`,
      schema: { type: 'integer', minimum: 1, default: DEFAULT_PAGE_LIMIT },
    },
    {
      name: 'cursor',
      in: 'query',
      description: "An opaque position: a page's `nextCursor`, or from a `Link`. Bound to the query's filters, sort and search.",
      schema: { type: 'string' },
    },
  ]
}

function filterValueSchema(field: FieldSpec): Record<string, unknown> {
  const base: Record<string, unknown> =
    field.type === 'integer'
      ? { type: 'integer' }
      : field.type === 'boolean'
        ? { type: 'boolean' }
        : field.type === 'timestamp'
          ? { type: 'string', format: 'date-time' }
          : field.values === undefined
            ? { type: 'string' }
            : { type: 'string', enum: [...field.values] }
  return field.nullable ? { anyOf: [base, { type: 'string', const: 'null' }] } : base
}
