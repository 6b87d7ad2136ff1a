// The conventions `npm run bench` prices one at a time (bench/serve-without.mjs hands buildApp the
// one to leave out): each is there as shipped, and gone when the app is told to leave it out, so
// that the table's figures are the cost of the convention its row names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MEASURABLE_CONVENTIONS, type MeasurableConvention } from '../../src/app.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

/** Whether an answer shows the convention. */
const SHOWN: Record<MeasurableConvention, { url: string; headers?: Record<string, string>; shows: (headers: Record<string, unknown>) => boolean }> = {
  validators: { url: '/users?limit=1', shows: (headers) => headers.etag !== undefined && headers['last-modified'] !== undefined },
  // An answer over 1 KiB, to a client that takes gzip.
  compression: { url: '/users?limit=30', headers: { 'accept-encoding': 'gzip' }, shows: (headers) => headers['content-encoding'] === 'gzip' },
  headers: { url: '/users?limit=1', shows: (headers) => headers['x-request-id'] !== undefined && headers['x-content-type-options'] === 'nosniff' },
}

const apps = new Map<MeasurableConvention | 'none', TestApp>()
beforeAll(async () => {
  for (const left of ['none', ...MEASURABLE_CONVENTIONS] as const) {
    const t = await buildTestApp({}, left === 'none' ? {} : { measureWithout: new Set([left]) })
    for (let i = 0; i < 30; i++) await t.createUser({ name: `Filler ${i}`, email: `filler${i}@example.com` })
    apps.set(left, t)
  }
})
afterAll(async () => {
  for (const t of apps.values()) await t.close()
})

describe('the conventions a benchmark prices', () => {
  it.each(MEASURABLE_CONVENTIONS)('are served as shipped, and %s is left out only when buildApp is told to', async (convention) => {
    const { url, headers, shows } = SHOWN[convention]
    for (const [left, t] of apps) {
      const res = await t.app.inject({ method: 'GET', url, headers })
      expect(res.statusCode).toBe(200)
      expect(shows(res.headers), `${convention} on the app without ${left}`).toBe(left !== convention)
    }
  })
})
