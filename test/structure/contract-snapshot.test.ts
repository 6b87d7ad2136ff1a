// The public contract, kept byte for byte across restructures: the OpenAPI document and
// the GraphQL SDL as served, compared with the copies committed beside this file. A change to either
// that is meant must update the copy in the same commit (THREADLINE_UPDATE_CONTRACT=1 writes them),
// so that the diff shows it to the reviewer.
import { readFileSync, writeFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

const SNAPSHOTS = {
  openapi: new URL('./contract/openapi.json', import.meta.url),
  sdl: new URL('./contract/schema.graphql', import.meta.url),
}

function matchesCommitted(which: keyof typeof SNAPSHOTS, served: string): void {
  if (process.env.THREADLINE_UPDATE_CONTRACT === '1') writeFileSync(SNAPSHOTS[which], served)
  expect(served).toBe(readFileSync(SNAPSHOTS[which], 'utf8'))
}

describe('the public contract', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it('serves the committed OpenAPI document', async () => {
    const res = await t.app.inject({ url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    matchesCommitted('openapi', `${JSON.stringify(res.json(), null, 2)}\n`)
  })

  it('serves the committed GraphQL SDL', async () => {
    const res = await t.app.inject({ url: '/graphql/schema.graphql' })
    expect(res.statusCode).toBe(200)
    matchesCommitted('sdl', res.body)
  })
})
