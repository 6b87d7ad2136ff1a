// The API description's plugin: an OpenAPI 3.1 document that @fastify/swagger generates from the routes'
// own schemas (paths, parameters, bodies, answers, and each operation's summary, description, tag and
// id), completed with what those schemas do not say (document-completion.ts): the collection query
// language, who may call, the errors, the headers and examples; each resource's schemas shared as
// components. Built once, on the first request for it, and served as bytes at /openapi.json and
// /openapi.yaml. Describes the versioned paths (/api/v1, /api/v2); the unversioned ones are the same
// operations with the version taken from Accept (see docs/decisions/0030-openapi-generated.md).
import fastifySwagger from '@fastify/swagger'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import { PACKAGE_VERSION } from '../../package-info.js'
import { ErrorBody } from '../error-body.js'
import { API_MOUNTS, type ApiVersion } from '../versioning.js'
import { scopeNeeded } from '../access.js'
import { takesIdempotencyKeys } from '../../idempotency/idempotent-writes.js'
import { completeDocument, NOTES, type Notes, type OpenApiDocument } from './document-completion.js'
import { isDescribedError, responseComponents } from './error-responses.js'
import { CONDITIONS, HEADERS, PREFERENCES, RETRIES } from './headers.js'
import type { ResourceOpenApi, RouteOpenApi } from './route-openapi.js'

export const OPENAPI_JSON_PATH = '/openapi.json'
export const OPENAPI_YAML_PATH = '/openapi.yaml'

export interface OpenApiOptions {
  /** max-age of the document's answers, as for other anonymous reads. @default 0 */
  cacheMaxAgeS: number
}

/** The mounts described, by prefix. */
const DESCRIBED_MOUNTS = new Map<string, ApiVersion>(
  API_MOUNTS.flatMap((mount) => (mount.version === 'negotiated' ? [] : [[mount.prefix, mount.version] as const])),
)

/**
 * Starts collecting the routes (an onRoute hook; nothing runs per request) and serves the
 * document at /openapi.json and /openapi.yaml. Register before the routes it describes.
 */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  // The features' tags, by name, in the order their routes are registered.
  const tags = new Map<string, ResourceOpenApi['tag']>()
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Threadline',
        version: PACKAGE_VERSION,
        description:
          "Users, their posts, the comments on posts and users' todos. Every path is served at `/api/v1`, `/api/v2` and " +
          'unversioned (`/users`, the version named by `Accept: application/vnd.threadline+json; version=N`, else v1); ' +
          'this document describes the versioned paths. v1 and v2 differ only in how collections page. ' +
          'Reads are public; writes need `Authorization: Bearer <token>` (POST /api/v1/tokens). A token that is sent must be valid. ' +
          "GETs also read json-server 0.17's query words (`_page`, `_limit`, `_sort` and `_order`, `_start` and `_end`, `x_gte`, `x_lte`, " +
          '`x_ne`, `_expand`) as the parameters given here that mean exactly the same; a word that has none is refused with a 400 naming it.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'This service' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A token from POST /tokens or `threadline tokens create`, or (where the service is configured with an OpenID Connect issuer) ' +
              "an access token of that issuer. Each operation's requirement names the scope its token needs: `read` (GET requests, " +
              'GraphQL queries and subscriptions) or `write` (all the user may do, reads included). A token without it is refused 403 ' +
              'with `WWW-Authenticate: Bearer error="insufficient_scope"`. Answers to a request with a token carry `X-OAuth-Scopes` ' +
              "(the token's scope) and `X-Accepted-OAuth-Scopes` (the scope the operation needs).",
          },
        },
        schemas: { Error: ErrorBody as unknown as Record<string, unknown> },
        headers: HEADERS,
        parameters: { ...CONDITIONS, ...PREFERENCES, ...RETRIES },
        responses: responseComponents(),
      } as Record<string, unknown>,
    },
    hideUntagged: true,
    transform: ({ schema, url, route }) => describeRoute(schema, url, route),
    transformObject: (documentObject) =>
      completeDocument((documentObject as unknown as { openapiObject: OpenApiDocument }).openapiObject, [...tags.values()]) as never,
  })

  // Fail at start-up, as for access rules, when a REST route has no description.
  app.addHook('onRoute', (route) => {
    const mount = describedMount(route)
    if (mount === undefined || route.method === 'HEAD') return
    const { tag } = routeOpenApiOf(route, route.url.slice(mount.prefix.length)).resource
    if (!tags.has(tag.name)) tags.set(tag.name, tag)
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

/** What a described route declares for the document; it stops the app if something is missing. */
function routeOpenApiOf(route: Pick<RouteOptions, 'method' | 'schema' | 'config'>, path: string): RouteOpenApi {
  const where = `Route ${String(route.method)} ${path}`
  const { operationId, summary, description, tags } = route.schema ?? {}
  const openapi = route.config?.openapi
  if (!operationId || !summary || !description || tags === undefined || tags.length === 0 || openapi === undefined) {
    throw new Error(`${where} is not described: its schema needs an operationId, summary, description and tags, its config an openapi`)
  }
  if (!tags.includes(openapi.resource.tag.name)) throw new Error(`${where} is not tagged ${openapi.resource.tag.name}, its resource's tag`)
  const unknown = (openapi.errors ?? []).filter((status) => !isDescribedError(status))
  if (unknown.length > 0) throw new Error(`${where} declares errors the document has no answer for: ${unknown.join(', ')}`)
  return openapi
}

/** @fastify/swagger's per-route transform: the versioned id, access, the notes for completion; everything else hidden. */
function describeRoute(schema: FastifySchema | undefined, url: string, route: RouteOptions): { schema: FastifySchema; url: string } {
  const mount = describedMount(route)
  if (mount === undefined || route.method === 'HEAD' || Array.isArray(route.method)) return { schema: { hide: true }, url }
  const method = route.method
  const openapi = routeOpenApiOf(route, url.slice(mount.prefix.length))
  const access = route.config?.access ?? 'public'
  const scope = scopeNeeded(method, route.config)
  const notes: Notes = {
    version: mount.version,
    method,
    access,
    openapi,
    collection: route.config?.collection,
    representation: route.config?.representation,
    idempotencyKeys: takesIdempotencyKeys(method, route.config),
  }
  return {
    url,
    schema: {
      ...schema,
      // The route names the operation; each version describes it under its own id.
      operationId: `${schema?.operationId}V${mount.version}`,
      // A copy: one array shared by two operations would be written once and aliased in the YAML.
      tags: [...(schema?.tags ?? [])],
      // Public operations take a token too (and refuse a bad one): anonymous or bearer. The
      // bearer's requirement names the scope its token needs.
      security: access === 'signed-in' ? [{ bearerAuth: [scope] }] : [{}, { bearerAuth: [scope] }],
      ...(method === 'DELETE' ? { response: { 204: { description: 'Done: nothing to say.', type: 'null' } } } : {}),
      [NOTES]: notes,
    } as FastifySchema,
  }
}
