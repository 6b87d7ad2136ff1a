// The GraphQL endpoint over HTTP: content negotiation and status codes, GET for queries only,
// CSRF refusal, malformed requests, batches, the schema and GraphiQL pages and their switches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'
import { countLoopTurns } from '../helpers/loop-turns.js'

describe('the GraphQL endpoint', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  const countTodos = async () =>
    (
      await t.database.db
        .selectFrom('todos')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n
  const post = (body: string, headers: Record<string, string>, token?: string) => t.request({ method: 'POST', url: '/graphql', payload: body, headers, token })

  describe('content negotiation', () => {
    it('answers application/graphql-response+json when accepted, and application/json otherwise', async () => {
      const cases: [string | undefined, string][] = [
        [undefined, 'application/json; charset=utf-8'],
        ['*/*', 'application/json; charset=utf-8'],
        ['application/json', 'application/json; charset=utf-8'],
        ['application/json, multipart/mixed', 'application/json; charset=utf-8'],
        ['application/graphql-response+json', 'application/graphql-response+json; charset=utf-8'],
        ['application/graphql-response+json, application/json;q=0.9', 'application/graphql-response+json; charset=utf-8'],
        ['application/graphql-response+json;q=0.5, application/json', 'application/json; charset=utf-8'],
      ]
      for (const [accept, type] of cases) {
        const answer = await graphql(t, '{ __typename }', { headers: accept === undefined ? {} : { accept } })
        expect({ accept, status: answer.status, type: answer.headers['content-type'] }).toEqual({ accept, status: 200, type })
        expect(answer.body).toEqual({ data: { __typename: 'Query' } })
      }
    })

    it('is 406 when the client takes neither JSON type', async () => {
      const answer = await graphql(t, '{ __typename }', { headers: { accept: 'text/html' } })
      expect(answer.status).toBe(406)
      expect(codesOf(answer)).toEqual(['NOT_ACCEPTABLE'])
    })

    it('answers a refused document with 200 as application/json and 400 without data as graphql-response+json', async () => {
      for (const query of ['{ users { id ', '{ nosuchfield }', 'query($n: Int!) { users(limit: $n) { id } }']) {
        const legacy = await graphql(t, query)
        expect(legacy.status).toBe(200)
        expect(codesOf(legacy)).toEqual(['BAD_REQUEST'])
        const modern = await graphql(t, query, { headers: { accept: 'application/graphql-response+json' } })
        expect(modern.status).toBe(400)
        expect(modern.body.data).toBeUndefined()
        expect(modern.body.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST')
      }
    })

    it('answers 200 with partial data and errors as graphql-response+json', async () => {
      const answer = await graphql(t, '{ user(id: "999") { id } users { id } }', { headers: { accept: 'application/graphql-response+json' } })
      expect(answer.status).toBe(200)
      expect(answer.body.data?.user).toBeNull()
      expect(codesOf(answer)).toEqual(['NOT_FOUND'])
    })
  })

  describe('GET', () => {
    it('serves queries, with variables and operationName from the query string', async () => {
      const params = new URLSearchParams({
        query: 'query One($id: ID!) { user(id: $id) { name } }',
        variables: JSON.stringify({ id: String(t.bob.id) }),
        operationName: 'One',
      })
      const response = await t.request({ method: 'GET', url: `/graphql?${params}` })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ data: { user: { name: 'Bob' } } })
      expect(response.headers.etag).toMatch(/^W\//)
      const again = await t.request({ method: 'GET', url: `/graphql?${params}`, headers: { 'if-none-match': String(response.headers.etag) } })
      expect(again.statusCode).toBe(304)
    })

    it('refuses a mutation with 405 and Allow: POST, for GET and HEAD, and runs nothing', async () => {
      const before = await countTodos()
      const query = encodeURIComponent('mutation { addTodo(text: "via GET") { id } }')
      for (const method of ['GET', 'HEAD'] as const) {
        const response = await t.request({ method, url: `/graphql?query=${query}`, token: t.tokens.alice })
        expect(response.statusCode).toBe(405)
        expect(response.headers.allow).toBe('POST')
      }
      const named = encodeURIComponent('query Q { __typename } mutation M { addTodo(text: "x") { id } }')
      const response = await t.request({ method: 'GET', url: `/graphql?query=${named}&operationName=M`, token: t.tokens.alice })
      expect(response.statusCode).toBe(405)
      expect(response.json().errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED')
      expect(await countTodos()).toBe(before)
    })

    it('answers an operation that cannot be chosen as a GraphQL error, not a failure', async () => {
      for (const url of [
        `/graphql?query=${encodeURIComponent('query A { __typename } query B { __typename }')}`,
        `/graphql?query=${encodeURIComponent('{ __typename }')}&operationName=Nope`,
      ]) {
        const response = await t.request({ method: 'GET', url })
        expect(response.statusCode).toBe(200)
        expect(response.json().errors[0].extensions.code).toBe('BAD_REQUEST')
      }
    })

    it('refuses bad parameters with 400', async () => {
      for (const url of [
        '/graphql',
        '/graphql?query=',
        `/graphql?query=${encodeURIComponent('{ __typename }')}&variables=not-json`,
        '/graphql?query=a&query=b',
      ]) {
        const response = await t.request({ method: 'GET', url })
        expect({ url, status: response.statusCode }).toEqual({ url, status: 400 })
        expect(response.json().errors[0].extensions.code).toBe('BAD_REQUEST')
      }
    })
  })

  describe('POST', () => {
    it('refuses, with 415 and nothing run, the bodies a cross-site form can send without a preflight', async () => {
      const before = await countTodos()
      const mutation = 'mutation { addTodo(text: "csrf") { id } }'
      const attempts: [string, string][] = [
        ['text/plain', JSON.stringify({ query: mutation })],
        ['application/x-www-form-urlencoded', `query=${encodeURIComponent(mutation)}`],
        ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n${mutation}\r\n--x--\r\n`],
        ['application/merge-patch+json', JSON.stringify({ query: mutation })],
      ]
      for (const [type, body] of attempts) {
        const response = await post(body, { 'content-type': type }, t.tokens.alice)
        expect({ type, status: response.statusCode }).toEqual({ type, status: 415 })
        expect(response.json().errors[0].extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE')
      }
      expect(await countTodos()).toBe(before)
    })

    it('refuses malformed requests with 400 in the GraphQL error shape', async () => {
      const bodies = [
        '{ "not a JSON',
        '{"notquery": "{ __typename }"}',
        '{"query": 1}',
        '{"query": ["{ __typename }"]}',
        '{"query": "{ __typename }", "variables": [1]}',
        '{"query": "{ __typename }", "operationName": 5}',
        '"just a string"',
      ]
      for (const body of bodies) {
        const response = await post(body, { 'content-type': 'application/json' })
        expect({ body, status: response.statusCode }).toEqual({ body, status: 400 })
        expect(response.json()).toEqual({ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_REQUEST' }) as object })] })
      }
    })

    it('allows null variables, operationName and extensions', async () => {
      const response = await post(JSON.stringify({ query: '{ __typename }', variables: null, operationName: null, extensions: null }), {
        'content-type': 'application/json',
      })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ data: { __typename: 'Query' } })
    })

    it('never reads a JSON query as a ready-made document', async () => {
      const before = await countTodos()
      const ast = JSON.stringify({
        kind: 'Document',
        definitions: [{ kind: 'OperationDefinition', operation: 'mutation', selectionSet: { kind: 'SelectionSet', selections: [] } }],
      })
      for (const query of [ast, 'null', '[]', '42', '"text"', 'true']) {
        const answer = await graphql(t, query, { token: t.tokens.alice })
        expect({ query, status: answer.status, codes: codesOf(answer) }).toEqual({ query, status: 200, codes: ['BAD_REQUEST'] })
        expect(answer.body.errors?.[0]?.message).toMatch(/^Syntax Error/)
      }
      expect(await countTodos()).toBe(before)
    })

    it('answers a refused token with 401 in the GraphQL error shape', async () => {
      const answer = await graphql(t, '{ __typename }', { token: 'tl_not-a-token' })
      expect(answer.status).toBe(401)
      expect(answer.headers['www-authenticate']).toContain('invalid_token')
      expect(codesOf(answer)).toEqual(['UNAUTHENTICATED'])
    })

    it('runs a batch in order, one answer per operation', async () => {
      const response = await t.request({
        method: 'POST',
        url: '/graphql',
        token: t.tokens.bob,
        json: [
          { query: 'mutation($t: String!) { addTodo(text: $t) { text } }', variables: { t: 'batched' } },
          { query: '{ viewer { todos { text } } }' },
          { query: '{ nope }' },
        ],
      })
      expect(response.statusCode).toBe(200)
      const [added, read, refused] = response.json()
      expect(added).toEqual({ data: { addTodo: { text: 'batched' } } })
      expect(read.data.viewer.todos).toContainEqual({ text: 'batched' })
      expect(refused.errors[0].extensions.code).toBe('BAD_REQUEST')
    })

    it('runs a batch’s operations a loop turn apart: the loop is held for one operation at a time', async () => {
      // Loop turns counted while the batch runs: without a turn between its operations, a batch
      // ran in two or three whatever its size.
      const turns = countLoopTurns()
      const response = await t.request({ method: 'POST', url: '/graphql', json: Array.from({ length: 10 }, () => ({ query: '{ user(id: 1) { id } }' })) })
      const counted = turns()
      expect(response.statusCode).toBe(200)
      expect(response.json()).toHaveLength(10)
      expect(counted).toBeGreaterThanOrEqual(10)
    })

    it('refuses an empty batch, a batch over the limit, and a malformed member', async () => {
      const one = { query: '{ __typename }' }
      for (const body of [[], Array.from({ length: 11 }, () => one), [one, 'x']]) {
        const response = await t.request({ method: 'POST', url: '/graphql', json: body })
        expect(response.statusCode).toBe(400)
        expect(response.json().errors[0].extensions.code).toBe('BAD_REQUEST')
      }
      const ten = await t.request({ method: 'POST', url: '/graphql', json: Array.from({ length: 10 }, () => one) })
      expect(ten.statusCode).toBe(200)
      expect(ten.json()).toHaveLength(10)
    })
  })

  describe('other methods', () => {
    it('answers a method /graphql does not serve with 405, Allow, and a GraphQL error body', async () => {
      for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
        const response = await t.request({ method, url: '/graphql', json: { query: '{ __typename }' } })
        expect(response.statusCode).toBe(405)
        expect(response.headers.allow).toBe('GET, HEAD, POST, OPTIONS')
        expect(response.json()).toEqual({ errors: [{ message: expect.stringContaining(method) as string, extensions: { code: 'METHOD_NOT_ALLOWED' } }] })
      }
      const rest = await t.request({ method: 'PUT', url: '/api/v1/users' })
      expect(rest.json().error.code).toBe('METHOD_NOT_ALLOWED')
    })
  })

  describe('schema and GraphiQL', () => {
    it('serves the schema as SDL', async () => {
      const response = await t.request({ method: 'GET', url: '/graphql/schema.graphql' })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe('text/plain; charset=utf-8')
      for (const part of [
        'type User {',
        'posts(',
        'type Mutation {',
        'createPost(input: CreatePostInput!): Post!',
        'addTodo(text: String!): Todo!',
        'input AddCommentInput {',
      ]) {
        expect(response.body).toContain(part)
      }
    })

    it('serves GraphiQL', async () => {
      const response = await t.request({ method: 'GET', url: '/graphiql' })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toContain('text/html')
    })
  })
})

describe('the GraphQL switches', () => {
  it('turns introspection (and the SDL) and GraphiQL off', async () => {
    const t = await buildTestApp({ GRAPHQL_INTROSPECTION: 'false', GRAPHIQL: 'false' })
    try {
      const introspection = await graphql(t, '{ __schema { types { name } } }')
      expect(codesOf(introspection)).toContain('BAD_REQUEST')
      expect(new Set(codesOf(introspection))).toEqual(new Set(['BAD_REQUEST']))
      expect(introspection.body.data).toBeUndefined()
      expect((await graphql(t, '{ users { id } }')).body.data).toEqual({ users: expect.any(Array) as unknown[] })
      expect((await t.request({ method: 'GET', url: '/graphql/schema.graphql' })).statusCode).toBe(404)
      expect((await t.request({ method: 'GET', url: '/graphiql' })).statusCode).toBe(404)
    } finally {
      await t.close()
    }
  })

  it('turns batching off', async () => {
    const t = await buildTestApp({ GRAPHQL_MAX_BATCH: '0' })
    try {
      const response = await t.request({ method: 'POST', url: '/graphql', json: [{ query: '{ __typename }' }] })
      expect(response.statusCode).toBe(400)
      expect(response.json().errors[0].message).toMatch(/turned off/)
    } finally {
      await t.close()
    }
  })
})
