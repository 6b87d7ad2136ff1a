// The graphql-http audit suite (the GraphQL-over-HTTP specification's own conformance checks),
// run against the live server through a real port with a real HTTP client.
import { serverAudits } from 'graphql-http'
import { fetch } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

describe('GraphQL over HTTP conformance (graphql-http serverAudits)', () => {
  let t: TestApp
  let url: string
  beforeAll(async () => {
    t = await buildTestApp()
    url = `${await t.app.listen({ host: '127.0.0.1', port: 0 })}/graphql`
  })
  afterAll(() => t.close())

  const audits = serverAudits({ url: () => url, fetchFn: fetch })

  it.each(audits.map((audit) => [audit.id, audit.name, audit] as const))('%s %s', async (_id, _name, audit) => {
    const result = await audit.fn()
    // Every audit passes: the MUSTs, and the SHOULDs and MAYs too.
    expect(result.status === 'ok' ? 'ok' : `${result.status}: ${result.reason}`).toBe('ok')
  })
})
