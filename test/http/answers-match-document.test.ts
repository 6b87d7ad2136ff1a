// Every answer is what the API description says it is: real answers (lists and single resources,
// with operators, `select` and `include`, writes, and refusals) validated against the response
// schema the served OpenAPI document gives for their path, method and status, as a contract
// checker such as Prism does with a recorded exchange.
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories, type Factories } from '../helpers/factories.js'

interface Response {
  $ref?: string
  content?: Record<string, { schema: unknown }>
}
interface Document {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>
  components: { responses?: Record<string, Response> }
}

let t: TestApp
let make: Factories
let document: Document
// ajv-formats is CommonJS: its default import is the plugin itself.
const addFormats = addFormatsModule as unknown as FormatsPlugin
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)

beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_MAX: '100000' })
  make = createFactories(t)
  document = (await t.request({ method: 'GET', url: '/openapi.json' })).json()
  ajv.addSchema(document, 'openapi')
})
afterAll(() => t.close())

/** The document's path template that `path` (no query) is an instance of. */
function templateOf(path: string): string {
  const found = Object.keys(document.paths).find((template) => new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`).test(path))
  if (found === undefined) throw new Error(`${path} is not in the document`)
  return found
}

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

/** The validator of the JSON answer with this status to `method` on the path template. */
function validatorOf(method: string, template: string, status: number) {
  const declared = document.paths[template]?.[method.toLowerCase()]?.responses[String(status)]
  expect(declared, `${method} ${template} declares ${status}`).toBeDefined()
  const base = declared?.$ref === undefined ? `#/${pointer('paths', template, method.toLowerCase(), 'responses', String(status))}` : declared.$ref
  const schemaRef = `openapi${base}/content/${pointer('application/json')}/schema`
  return ajv.getSchema(schemaRef) ?? ajv.compile({ $ref: schemaRef })
}

/** Validates the answer to `method url` against the document; resolves with the answer's body. */
async function expectDescribed(method: string, url: string, options: { token?: string; json?: unknown; status: number }): Promise<unknown> {
  const res = await t.request({
    method: method as 'GET',
    url,
    ...(options.token === undefined ? {} : { token: options.token }),
    ...(options.json === undefined ? {} : { json: options.json }),
  })
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(options.status)
  const validate = validatorOf(method, templateOf(`/api/v1${url.split('?')[0] ?? ''}`), options.status)
  const body: unknown = res.json()
  expect(validate(body), `${method} ${url}: ${JSON.stringify(validate.errors)}`).toBe(true)
  return body
}

describe('answers, validated against the served OpenAPI document', () => {
  it('describes lists and single resources, plain and with operators, select and include', async () => {
    const post = await make.post(t.alice)
    await make.draft(t.alice)
    await make.comment(post, t.bob)
    await make.todo(t.alice)
    const alice = t.alice.id
    const urls = [
      '/users',
      '/users?age[gte]=0&role[in]=user,admin&sort=-createdAt',
      `/users/${alice}`,
      `/users?select=name&include=posts,todos&posts.limit=2`,
      `/users/${alice}?include=posts,todos`,
      `/users/${alice}/posts`,
      `/users/${alice}/posts?publishedAt[null]=false&select=title,publishedAt&include=author,comments`,
      `/users/${alice}/posts/${post.id}?include=author,comments&comments.limit=1`,
      `/users/${alice}/posts/${post.id}/comments?include=author,post`,
      `/users/${alice}/posts/${post.id}/comments?select=content`,
      `/users/${alice}/todos?completed[ne]=true&select=text`,
    ]
    for (const url of urls) await expectDescribed('GET', url, { token: t.tokens.alice, status: 200 })
  })

  it('describes writes and refusals', async () => {
    await expectDescribed('POST', `/users/${t.alice.id}/posts`, { token: t.tokens.alice, json: { title: 'Described', content: 'x' }, status: 201 })
    await expectDescribed('GET', '/users?age[between]=1', { status: 400 })
    await expectDescribed('GET', '/users?select=nope', { status: 400 })
    await expectDescribed('GET', '/users/999999', { status: 404 })
    await expectDescribed('POST', `/users/${t.alice.id}/posts`, { json: { title: 'x', content: 'x' }, status: 401 })
  })

  it('refuses what the document does not describe (the check can fail)', () => {
    const validate = validatorOf('GET', '/api/v1/users/{userId}/posts', 200)
    const meta = { timestamp: new Date().toISOString(), pagination: { limit: 20, nextCursor: null } }
    expect(validate({ data: [{ id: 1 }], meta })).toBe(true)
    expect(validate({ data: [{ title: 'no id' }], meta })).toBe(false)
    expect(validate({ data: [{ id: 1, title: 7 }], meta })).toBe(false)
    expect(validate({ data: [{ id: 1, author: { id: 2 } }], meta })).toBe(false)
  })
})
