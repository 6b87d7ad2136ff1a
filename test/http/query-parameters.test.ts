// One rule for the query string: a parameter an operation does not take is 400 BAD_REQUEST with
// details, on a single resource and on a write as on a list, never ignored. What each operation
// takes is read from the API description, so a new route is held to the rule without a new line here.
import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FEATURES } from '../../src/features.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(() => t.close())

interface Operation {
  method: NonNullable<InjectOptions['method']>
  path: string
  parameters: { name: string; in: string }[]
}

/** The operations of the API description under /api/v1, with their query parameters. */
async function describedOperations(): Promise<Operation[]> {
  const document = (await t.request({ url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>
  }>()
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/api/v1/'))
    .flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, operation]) => ({
          method: method.toUpperCase() as Operation['method'],
          path,
          parameters: (operation.parameters ?? []).filter((p) => p.in === 'query'),
        })),
    )
}

/** The limits of the lists a user's answers embed: those the features offer users (src/features.ts), in their order. */
const userListLimits = FEATURES.flatMap(({ embeds = [] }) => embeds.filter((offered) => offered.in === 'users').map(({ name }) => `${name}.limit`))

describe('query parameters an operation does not take', () => {
  it('refuses them on a single resource with 400 and one detail each, as a list refuses them', async () => {
    const one = await t.request({ url: `/api/v1/users/${t.bob.id}?_embed=posts&nonsense=1` })
    expect(one.statusCode, one.body).toBe(400)
    expect(one.json().error).toEqual({
      code: 'BAD_REQUEST',
      message: 'The query parameters are not valid',
      details: [
        // json-server's word, refused in its own words (test/collections/json-server-words.test.ts).
        { field: '_embed', message: expect.stringMatching(/^embeds every one of the posts in json-server, oldest first; include=posts/) },
        { field: 'nonsense', message: `is not a parameter of this operation: the parameters here are ${['select', 'include', ...userListLimits].join(', ')}` },
      ],
    })
    const list = await t.request({ url: '/api/v1/users?nonsense=1' })
    expect(list.statusCode).toBe(400)
    expect(list.json().error.details).toEqual([{ field: 'nonsense', message: 'is not a field of this collection' }])
  })

  it("takes on a single resource those its API description gives it (select, include, the lists' limits), their values judged where they are read", async () => {
    const getUser = (await describedOperations()).find((operation) => operation.method === 'GET' && operation.path === '/api/v1/users/{id}')
    expect(getUser?.parameters.map((parameter) => parameter.name)).toEqual(['select', 'include', ...userListLimits])
    const taken = await t.request({ url: `/api/v1/users/${t.bob.id}?select=name&include=posts,todos&posts.limit=1&todos.limit=2&page=1` })
    expect(taken.statusCode).toBe(400)
    expect(taken.json().error.details.map((detail: { field: string }) => detail.field)).toEqual(['page'])
    const served = await t.request({ url: `/api/v1/users/${t.bob.id}?select=name&include=posts,todos&posts.limit=1&todos.limit=2` })
    expect(served.statusCode, served.body).toBe(200)
    expect(served.json().data).toEqual({ id: t.bob.id, name: t.bob.name, posts: [], todos: [] })
    const judged = await t.request({ url: `/api/v1/users/${t.bob.id}?select=colour&posts.limit=2` })
    expect(judged.statusCode).toBe(400)
    expect(judged.json().error.details).toEqual([
      { field: 'select', message: expect.stringMatching(/^`colour` is unknown/) },
      { field: 'posts.limit', message: 'applies only with include=posts' },
    ])
  })

  it("refuses a list's parameters on a single resource, and any on an operation that takes none", async () => {
    const paged = await t.request({ url: `/api/v1/users/${t.bob.id}?limit=5&sort=name` })
    expect(paged.statusCode).toBe(400)
    expect(paged.json().error.details.map((detail: { field: string }) => detail.field)).toEqual(['limit', 'sort'])
    const write = await t.request({ method: 'PATCH', url: `/api/v1/users/${t.bob.id}?dryRun=true`, token: t.tokens.bob, json: { name: 'Bobby' } })
    expect(write.statusCode).toBe(400)
    expect(write.json().error.details).toEqual([{ field: 'dryRun', message: 'is not a parameter of this operation: this operation takes no query parameters' }])
    // Refused before anything ran.
    expect((await t.request({ url: `/api/v1/users/${t.bob.id}` })).json().data.name).toBe(t.bob.name)
  })

  it('refuses them on every operation of the API description but the lists, before the operation runs', async () => {
    const operations = (await describedOperations()).filter((operation) => !operation.parameters.some((parameter) => parameter.name === 'limit'))
    expect(operations.length).toBeGreaterThan(10)
    const answers = await Promise.all(
      operations.map(async ({ method, path }) => {
        const url = `${path.replace(/\{[^}]+\}/g, '1')}?nonsense=1`
        const res = await t.request({ method, url, token: t.tokens.admin, ...(method === 'GET' || method === 'DELETE' ? {} : { json: {} }) })
        return {
          operation: `${method} ${path}`,
          status: res.statusCode,
          fields: (res.json().error?.details ?? []).map((detail: { field: string }) => detail.field),
        }
      }),
    )
    expect(answers.filter(({ status, fields }) => status !== 400 || fields.join() !== 'nonsense')).toEqual([])
  })
})
