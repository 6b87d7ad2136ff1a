// Runs once, on SQLite: the document is made from the routes, not from the data.
import { compileErrors, validate } from '@readme/openapi-parser'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import type { RouteOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { operatorsOf } from '../../src/collections/collection-query.js'
import { API_MOUNTS } from '../../src/http/versioning.js'
import { Represented } from '../../src/http/representation.js'
import { FEATURES } from '../../src/features.js'
import { User } from '../../src/users/users.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

interface Operation {
  operationId: string
  summary: string
  security: Record<string, string[]>[]
  parameters?: { name: string; in: string; example?: unknown; schema: Record<string, unknown> }[]
  requestBody?: { content: Record<string, { example?: unknown }> }
  responses: Record<string, { $ref?: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown; example?: unknown }> }>
}
interface Document {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components: {
    schemas: Record<string, unknown>
    responses: Record<string, { content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> }>
  }
}

let t: TestApp
/** Every route the app registered, as it was registered. */
const routes: (RouteOptions & { prefix: string })[] = []
let body: string
let document: Document

beforeAll(async () => {
  t = await buildTestApp({}, { onRoute: (route) => void routes.push(route) })
  const res = await t.request({ method: 'GET', url: '/openapi.json' })
  expect(res.statusCode).toBe(200)
  body = res.body
  document = res.json()
})
afterAll(() => t.close())

/** `/users/:userId/posts` as OpenAPI writes it. */
const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}')

/** The REST routes of one mount: every route declares a schema; the 405 answers and HEAD copies do not count. */
const restRoutesOf = (prefix: string) =>
  routes.filter((route) => route.prefix === prefix && route.schema !== undefined && route.method !== 'HEAD' && route.method !== 'OPTIONS')

const operations = () =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  )

const versioned = API_MOUNTS.filter((mount) => mount.version !== 'negotiated')

const SCHEMAS = '#/components/schemas/'

/** The schema with each `$ref` to a shared schema replaced by that schema, as a reader of the document resolves it. */
function dereferenced(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(dereferenced)
  if (typeof schema !== 'object' || schema === null) return schema
  const { $ref } = schema as { $ref?: unknown }
  if (typeof $ref === 'string' && $ref.startsWith(SCHEMAS)) return dereferenced(document.components.schemas[$ref.slice(SCHEMAS.length)])
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, dereferenced(value)]))
}

describe('the API description', () => {
  it('is an OpenAPI 3.1 document that a validator accepts', async () => {
    expect(document.openapi).toBe('3.1.0')
    const result = await validate(JSON.parse(body))
    expect(result.valid ? '' : compileErrors(result)).toBe('')
    expect(result.warnings).toEqual([])
  })

  it("passes Redocly's recommended lint rules without an error or a warning", async () => {
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source: body, absoluteRef: 'openapi.json', config })
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`)).toEqual([])
  })

  it('describes every REST route of both versions, with every method, and nothing else', () => {
    const served = versioned.flatMap((mount) => restRoutesOf(mount.prefix).map((route) => `${String(route.method)} ${openApiPath(route.url)}`))
    // At least the 41 of users, posts, comments, todos (each under its parent and at the top level) and tokens; each feature after them adds its own.
    expect(served.length).toBeGreaterThanOrEqual(2 * 41)
    const described = operations().map(({ path, method }) => `${method} ${path}`)
    expect(described.sort()).toEqual(served.sort())
    // The unversioned mount serves the same operations as each version.
    const unversioned = restRoutesOf('').map((route) => `${String(route.method)} ${openApiPath(route.url)}`)
    expect(unversioned.map((route) => route.replace(' ', ' /api/v1')).sort()).toEqual(served.filter((route) => route.includes('/api/v1/')).sort())
  })

  it('leaves out the unversioned paths, GraphQL, the documents themselves, HEAD, OPTIONS and 405 answers', () => {
    const paths = Object.keys(document.paths)
    expect(paths.every((path) => path.startsWith('/api/v1/') || path.startsWith('/api/v2/'))).toBe(true)
    expect(operations().every(({ method }) => ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method))).toBe(true)
    // PUT is not served on a todo: no operation for it.
    expect(document.paths['/api/v1/users/{userId}/todos/{todoId}']?.put).toBeUndefined()
  })

  it('asks for a bearer token on signed-in routes, and takes an optional one on public routes', () => {
    const accessByRoute = new Map(
      versioned.flatMap((mount) => restRoutesOf(mount.prefix).map((route) => [`${String(route.method)} ${openApiPath(route.url)}`, route.config?.access])),
    )
    for (const { path, method, operation } of operations()) {
      const access = accessByRoute.get(`${method} ${path}`)
      expect(access, `${method} ${path}`).toBeDefined()
      // The scope the bearer's token needs: read for GET, write for the writes but those that say otherwise.
      // (Signing in and revoking the token in use take any token.)
      const scope = method === 'GET' || /^\/api\/v[12]\/tokens(\/current)?$/.test(path) ? 'read' : 'write'
      expect(operation.security, `${method} ${path}`).toEqual(access === 'signed-in' ? [{ bearerAuth: [scope] }] : [{}, { bearerAuth: [scope] }])
    }
    expect(document.paths['/api/v1/users']?.post?.security).toEqual([{ bearerAuth: ['write'] }])
    expect(document.paths['/api/v1/users/{id}']?.get?.security).toEqual([{}, { bearerAuth: ['read'] }])
    expect(document.paths['/api/v1/tokens']?.post?.security).toEqual([{}, { bearerAuth: ['read'] }])
    expect(document.paths['/api/v1/tokens/current']?.delete?.security).toEqual([{ bearerAuth: ['read'] }])
  })

  it('declares each error answer, with the error body, and the success answers with their statuses', () => {
    for (const { path, method, operation } of operations()) {
      const where = `${method} ${path}`
      const statuses = Object.keys(operation.responses)
      expect(statuses, where).toEqual(expect.arrayContaining(['400', '401', '406', '429', '500', '503']))
      if (operation.security.length === 1) expect(statuses, where).toContain('403')
      if (path.includes('{')) expect(statuses, where).toContain('404')
      if (operation.requestBody !== undefined) expect(statuses, where).toEqual(expect.arrayContaining(['413', '415', '422']))
      if (['PUT', 'PATCH', 'DELETE'].includes(method)) expect(statuses, where).toContain('412')
      // PUT and PATCH answer 204 when the caller sends Prefer: return=minimal.
      const success = { GET: ['200', '304'], POST: ['201'], PUT: ['200', '204'], PATCH: ['200', '204'], DELETE: ['204'] }[method] ?? []
      expect(statuses.filter((status) => status < '400').sort(), where).toEqual(success)
      if (['POST', 'PUT', 'PATCH'].includes(method)) {
        expect(operation.parameters, where).toContainEqual({ $ref: '#/components/parameters/Prefer' })
        for (const status of success) expect(Object.keys(operation.responses[status]?.headers ?? {}), `${where} ${status}`).toContain('Preference-Applied')
      }
      // Every write takes an Idempotency-Key but sign-in and revocation, whose answers are never kept.
      const keyed = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) && !path.endsWith('/tokens') && !path.endsWith('/tokens/current')
      const keyParameter = { $ref: '#/components/parameters/IdempotencyKey' }
      if (keyed) {
        expect(operation.parameters, where).toContainEqual(keyParameter)
        expect(statuses, where).toEqual(expect.arrayContaining(['409', '422']))
        for (const status of success) expect(Object.keys(operation.responses[status]?.headers ?? {}), `${where} ${status}`).toContain('Idempotent-Replayed')
      } else {
        expect(operation.parameters ?? [], where).not.toContainEqual(keyParameter)
      }
    }
    for (const [name, response] of Object.entries(document.components.responses)) {
      if (name === 'NotModified') expect(response.content).toBeUndefined()
      else expect(response.content?.['application/json']?.schema, name).toEqual({ $ref: '#/components/schemas/Error' })
    }
    expect(document.paths['/api/v1/users/{id}']?.put?.responses['409']).toEqual({ $ref: '#/components/responses/Conflict' })
    // The conditions that lead to 304 and 412.
    expect(document.paths['/api/v1/users/{id}']?.get?.parameters).toContainEqual({ $ref: '#/components/parameters/IfNoneMatch' })
    expect(document.paths['/api/v1/users/{id}']?.patch?.parameters).toContainEqual({ $ref: '#/components/parameters/IfMatch' })
  })

  it('declares the response headers: caching, rate limits, Link, Location, Retry-After, request id and version', () => {
    const common = ['X-Request-Id', 'API-Version', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy']
    for (const { method, operation } of operations()) {
      const success = operation.responses[method === 'POST' ? '201' : method === 'DELETE' ? '204' : '200']
      expect(Object.keys(success?.headers ?? {})).toEqual(expect.arrayContaining(common))
      if (method === 'GET') expect(Object.keys(success?.headers ?? {})).toEqual(expect.arrayContaining(['ETag', 'Last-Modified', 'Cache-Control', 'Vary']))
    }
    expect(document.paths['/api/v2/users']?.get?.responses['200']?.headers).toHaveProperty('Link')
    expect(document.paths['/api/v1/users/{userId}/todos']?.post?.responses['201']?.headers).toHaveProperty('Location')
    expect(Object.keys(document.components.responses.RateLimited?.headers ?? {})).toEqual(expect.arrayContaining([...common, 'Retry-After']))
    expect(document.components.responses.ServiceUnavailable?.headers).toHaveProperty('Retry-After')
    expect(document.components.responses.NotModified?.headers).toHaveProperty('ETag')
  })

  it("describes the collection query language on every list, from the collection's own fields", () => {
    // Every list the app serves, with its collection and what its items may be represented with
    // (select, include when something may be embedded, and each embedded list's limit).
    const lists = restRoutesOf('/api/v1').flatMap((route) => {
      const spec = route.config?.collection
      if (route.method !== 'GET' || spec === undefined) return []
      const relations = Object.entries(route.config?.representation?.relations ?? {})
      const representation = [
        'select',
        ...(relations.length > 0 ? ['include'] : []),
        ...relations.flatMap(([name, kind]) => (kind === 'list' ? [`${name}.limit`] : [])),
      ]
      return [{ path: openApiPath(route.url.slice('/api/v1'.length)), spec, representation }]
    })
    expect(lists.map(({ path }) => path)).toEqual(
      expect.arrayContaining(['/users', '/users/{userId}/posts', '/users/{userId}/posts/{postId}/comments', '/users/{userId}/todos']),
    )
    expect(lists.find(({ path }) => path === '/users/{userId}/todos')?.representation).toEqual(['select'])
    for (const mount of versioned) {
      for (const { path, spec, representation } of lists) {
        const parameters = document.paths[`${mount.prefix}${path}`]?.get?.parameters ?? []
        const query = parameters.filter((p) => p.in === 'query').map((p) => p.name)
        const filterable = [...spec.fields.values()].filter((field) => field.filterable)
        const filters = filterable.flatMap((field) => [field.name, ...operatorsOf(field).map((operator) => `${field.name}[${operator}]`)])
        expect(query.sort(), path).toEqual([...filters, 'sort', 'q', 'fields', 'page', 'limit', 'cursor', ...representation].sort())
      }
    }
    const users = (document.paths['/api/v1/users']?.get?.parameters ?? []).filter((p) => p.in === 'query')
    expect(users.find((p) => p.name === 'role')?.schema).toMatchObject({ type: 'array', items: { type: 'string', enum: ['user', 'admin'] } })
    expect(users.find((p) => p.name === 'limit')?.schema).toMatchObject({ type: 'integer', minimum: 1 })
    expect(users.some((p) => p.name === 'avatar')).toBe(false)
    // Each operator that fits the field, typed as its values: ranges not on enumerations, null only where a value may be missing.
    expect(users.filter((p) => p.name.startsWith('age[')).map((p) => p.name)).toEqual([
      'age[eq]',
      'age[ne]',
      'age[gt]',
      'age[gte]',
      'age[lt]',
      'age[lte]',
      'age[in]',
      'age[null]',
    ])
    expect(users.filter((p) => p.name.startsWith('role[')).map((p) => p.name)).toEqual(['role[eq]', 'role[ne]', 'role[in]'])
    expect(users.some((p) => p.name === 'name[null]')).toBe(false)
    expect(users.find((p) => p.name === 'age[gte]')?.schema).toEqual({ type: 'integer' })
    expect(users.find((p) => p.name === 'age[null]')?.schema).toEqual({ type: 'boolean' })
    expect(users.find((p) => p.name === 'role[in]')?.schema).toEqual({ type: 'string', pattern: '^(?:user|admin)(?:,(?:user|admin))*$' })
    // A single resource takes only its representation; other operations no query parameters.
    const one = document.paths['/api/v1/users/{id}']
    expect(one?.get?.parameters?.filter((p) => p.in === 'query').map((p) => p.name)).toEqual(lists.find(({ path }) => path === '/users')?.representation)
    expect(one?.patch?.parameters?.some((p) => p.in === 'query')).toBe(false)
  })

  it('has an example for every operation: its answer, its body, its path parameters', () => {
    for (const { path, method, operation } of operations()) {
      const where = `${method} ${path}`
      for (const media of Object.values(operation.requestBody?.content ?? {})) expect(media.example, where).toBeDefined()
      const success = operation.responses[method === 'POST' ? '201' : '200']
      const media = success?.content?.['application/json']
      if (method !== 'DELETE') expect(media?.example, where).toBeDefined()
      for (const parameter of operation.parameters?.filter((p) => p.in === 'path') ?? []) expect(parameter.example, where).toBeDefined()
    }
  })

  it("uses the routes' own schemas", () => {
    const answer = document.paths['/api/v1/users/{id}']?.get?.responses['200']?.content?.['application/json']?.schema
    // A user embeds what the features after it offer it, in the order of the features.
    const offered = FEATURES.flatMap(({ embeds = [] }) => embeds.filter((relation) => relation.in === 'users').map(({ name, schema }) => [name, schema]))
    const RepresentedUser = Represented(User, Object.fromEntries(offered))
    expect(dereferenced(answer)).toMatchObject({ properties: { data: JSON.parse(JSON.stringify(RepresentedUser)) } })
    const created = document.paths['/api/v1/users']?.post?.responses['201']?.content?.['application/json']?.schema
    expect(dereferenced(created)).toMatchObject({ properties: { data: JSON.parse(JSON.stringify(User)) } })
  })

  it("shares each resource's schemas as components named after it, which every operation points at", () => {
    const isShared = (schema: unknown) => {
      const { $ref } = (schema ?? {}) as { $ref?: string }
      return $ref?.startsWith(SCHEMAS) === true && document.components.schemas[$ref.slice(SCHEMAS.length)] !== undefined
    }
    for (const { path, method, operation } of operations()) {
      const where = `${method} ${path}`
      for (const media of Object.values(operation.requestBody?.content ?? {}) as { schema?: unknown }[]) expect(isShared(media.schema), where).toBe(true)
      for (const [status, response] of Object.entries(operation.responses)) {
        type Envelope = { properties: { data: { items?: unknown }; meta: unknown } }
        const answer = response.content?.['application/json']?.schema as (Envelope & { anyOf?: Envelope[] }) | undefined
        if (answer === undefined) continue
        // A create's 201: the resource, or a bulk write's resources.
        for (const { properties } of answer.anyOf ?? [answer]) {
          expect(isShared(properties.data.items ?? properties.data), `${where} ${status}`).toBe(true)
          expect(isShared(properties.meta), `${where} ${status}`).toBe(true)
        }
      }
    }
    const schemaOf = (path: string, method: string, status: string) =>
      (document.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.schema as { properties: Record<string, unknown> }).properties
    for (const mount of versioned) {
      expect(schemaOf(`${mount.prefix}/users`, 'get', '200')).toEqual({
        data: { type: 'array', items: { $ref: `${SCHEMAS}UserRepresentation` } },
        meta: { $ref: `${SCHEMAS}CollectionMeta` },
      })
      expect(schemaOf(`${mount.prefix}/users/{id}`, 'put', '200')).toEqual({ data: { $ref: `${SCHEMAS}User` }, meta: { $ref: `${SCHEMAS}ResourceMeta` } })
      const update = document.paths[`${mount.prefix}/users/{id}`]?.patch?.requestBody?.content as Record<string, { schema: unknown }>
      expect(update['application/json']?.schema).toEqual({ $ref: `${SCHEMAS}UserUpdate` })
      expect(update['application/merge-patch+json']?.schema).toEqual({ $ref: `${SCHEMAS}UserUpdate` })
    }
    // An item embedded whole in another points at its own schema.
    expect(document.components.schemas.UserRepresentation).toMatchObject({ properties: { posts: { items: { $ref: `${SCHEMAS}Post` } } } })
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['Error', 'User', 'UserRepresentation', 'UserCreate', 'UserReplace', 'UserUpdate', 'ResourceMeta', 'CollectionMeta']),
    )
  })

  it('serves the same document as YAML', async () => {
    const res = await t.request({ method: 'GET', url: '/openapi.yaml' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/yaml; charset=utf-8')
    expect(parseYaml(res.body)).toEqual(document)
  })

  it('is public, counted by the rate limit, and revalidated with its ETag', async () => {
    const res = await t.request({ method: 'GET', url: '/openapi.json' })
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers['x-ratelimit-limit']).toBeDefined()
    expect(res.headers['cache-control']).toBe('public, max-age=0')
    expect(res.headers.etag).toMatch(/^W\/"[\w-]+"$/)
    expect(res.body).toBe(body)
    const again = await t.request({ method: 'GET', url: '/openapi.json', headers: { 'if-none-match': String(res.headers.etag) } })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
    const yaml = await t.request({ method: 'GET', url: '/openapi.yaml' })
    const yamlAgain = await t.request({ method: 'GET', url: '/openapi.yaml', headers: { 'if-none-match': String(yaml.headers.etag) } })
    expect(yamlAgain.statusCode).toBe(304)
    // A bad token is refused here too, as everywhere.
    expect((await t.request({ method: 'GET', url: '/openapi.json', token: 'tl_nope' })).statusCode).toBe(401)
    expect((await t.request({ method: 'POST', url: '/openapi.json' })).statusCode).toBe(405)
  })
})

describe('with OPENAPI=false', () => {
  it('serves no API description', async () => {
    const off = await buildTestApp({ OPENAPI: 'false' })
    try {
      for (const url of ['/openapi.json', '/openapi.yaml']) {
        const res = await off.request({ method: 'GET', url })
        expect(res.statusCode).toBe(404)
        expect(res.json().error.code).toBe('NOT_FOUND')
      }
      expect((await off.request({ method: 'GET', url: '/api/v1/users' })).statusCode).toBe(200)
    } finally {
      await off.close()
    }
  })
})
