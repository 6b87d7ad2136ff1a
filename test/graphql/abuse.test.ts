// The query limits at the endpoint: each abusive document is refused before anything runs, with
// BAD_REQUEST and the limit it broke, and the service goes on serving.
import { getIntrospectionQuery } from 'graphql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { codesOf, graphql } from '../helpers/graphql-client.js'

describe('GraphQL limits at the endpoint', () => {
  let t: TestApp
  let statements = 0
  beforeAll(async () => {
    t = await buildTestApp({}, { onQuery: () => statements++ })
  })
  afterAll(() => t.close())

  /** Asserts the document is refused with BAD_REQUEST naming `limit`, and that no SQL ran. */
  async function expectRefused(query: string, limit: string | RegExp) {
    statements = 0
    const answer = await graphql(t, query, { headers: { accept: 'application/graphql-response+json' } })
    expect(answer.status).toBe(400)
    expect(answer.body.data).toBeUndefined()
    expect(codesOf(answer)[0]).toBe('BAD_REQUEST')
    const errors = answer.body.errors ?? []
    if (typeof limit === 'string') expect(errors.map((error) => error.extensions?.limit)).toContain(limit)
    else expect(errors.some((error) => limit.test(error.message))).toBe(true)
    expect(statements).toBe(0)
    return answer
  }

  /** `{ viewer { posts { author { posts ... { id } } } } }`, `levels` deep: three tokens a level. */
  const nested = (levels: number) => {
    const names = Array.from({ length: levels - 1 }, (_, i) => (i === 0 ? 'viewer' : i % 2 === 1 ? 'posts' : 'author'))
    return `{ ${names.join(' { ')} { id ${'} '.repeat(levels - 1)}}`
  }

  it('refuses a query deeper than 10 levels, and serves one of 10', async () => {
    const refused = await expectRefused(
      '{ users { posts { author { posts { author { posts { author { posts { author { posts { id } } } } } } } } } } }',
      'depth',
    )
    expect(refused.body.errors?.[0]?.message).toMatch(/11 levels deep; the limit is 10/)
    const served = await graphql(
      t,
      '{ user(id: "1") { posts(limit: 1) { author { posts(limit: 1) { author { posts(limit: 1) { author { posts(limit: 1) { author { id } } } } } } } } } }',
    )
    expect(served.body.errors).toBeUndefined()
  })

  it('refuses a costly query: three nested lists at 100 each, or a variable limit counted at 100', async () => {
    await expectRefused('{ users(limit: 100) { posts(limit: 100) { comments(limit: 100) { id } } } }', 'cost')
    await expectRefused('query($n: Int) { users(limit: $n) { posts(limit: $n) { comments(limit: $n) { id } } } }', 'cost')
    const served = await graphql(t, '{ users { posts { comments { author { name } } } } }')
    expect(served.body.errors).toBeUndefined()
  })

  it('refuses wide aliasing and directive floods', async () => {
    const aliases = Array.from({ length: 16 }, (_, i) => `a${i}: users { id }`).join(' ')
    await expectRefused(`{ ${aliases} }`, 'aliases')
    const fifteen = await graphql(t, `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: viewer { id }`).join(' ')} }`)
    expect(fifteen.body.errors).toBeUndefined()
    await expectRefused(`query Q($t: Boolean = true) { users { id ${'@include(if: $t) '.repeat(6)} } }`, 'directives')
  })

  it('keeps fragment cycles a validation error', async () => {
    await expectRefused('{ users { ...A } } fragment A on User { name ...B } fragment B on User { id ...A }', /Cannot spread fragment "A" within itself/)
  })

  it('refuses a document of more than 4,000 tokens, or nested past 500 brackets, without overflowing the stack', async () => {
    await expectRefused(`{ ${Array.from({ length: 2100 }, (_, i) => `f${i}: __typename`).join(' ')} }`, /contains more than 4000 tokens/)
    // graphql's parser recurses per level and overflows the stack near 2,000: these never reach it.
    await expectRefused(nested(1400), /nests brackets more than 500 deep/)
    await expectRefused(`{${'a{'.repeat(1999)}`, /nests brackets more than 500 deep/)
    await expectRefused(`{ user(id: ${'['.repeat(600)}1${']'.repeat(600)}) { id } }`, /nests brackets more than 500 deep/)
    // Within both bounds, the depth rule refuses it.
    await expectRefused(nested(400), 'depth')
    const served = await graphql(t, '{ __typename }')
    expect(served.body).toEqual({ data: { __typename: 'Query' } })
  })

  it('serves the standard introspection query (what GraphiQL sends), and refuses an introspection flood', async () => {
    const answer = await graphql(
      t,
      getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }),
    )
    expect(answer.body.errors).toBeUndefined()
    expect((answer.body.data?.__schema as { types: unknown[] }).types.length).toBeGreaterThan(20)
    const flood = `{ __schema { types { fields { type { fields { type { fields { type { fields { type { fields { name } } } } } } } } } } } }`
    await expectRefused(flood, /.+/)
  })
})
