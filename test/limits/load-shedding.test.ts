// Runs once, on SQLite: the subject is the event loop's delay and the scheduler, not the store.
// Load shed by the loop's delay, through the real app: while the loop is behind and work waits, the
// requests of callers not measured yet (or slow) are answered 503 SERVICE_UNAVAILABLE with
// Retry-After, in the error envelope on REST and in GraphQL's errors; /health is answered and says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { holdLoop } from '../helpers/hold-loop.js'
import { until } from '../helpers/until.js'

describe('load shed by the loop’s delay', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ HTTP_MAX_IN_FLIGHT: '1', HTTP_SHED_LOOP_DELAY_MS: '100' })
    // Ready: what the loop is held by from here is a loop behind on requests.
    await t.app.ready()
  })
  afterAll(() => t.close())

  it('answers new callers’ waiting requests 503 with Retry-After on REST and GraphQL while the loop is behind, and /health says so', async () => {
    // The monitor measures the delay between two of its samples, the first one 10 ms after it
    // starts: a loop held before that (the app just built) would be seen by nobody.
    await new Promise((resolve) => setTimeout(resolve, 50))
    holdLoop(300)
    // A turn of the loop: the monitor's timer runs, late by the time the loop was held.
    await new Promise((resolve) => setTimeout(resolve, 1))
    const health = await t.app.inject({ url: '/health', remoteAddress: '10.9.0.1' })
    expect(health.statusCode).toBe(200)
    expect(health.json()).toMatchObject({ status: 'ok', loop: { shedding: true } })
    expect(health.json().loop.delayMs).toBeGreaterThan(100)

    const rest = await Promise.all(Array.from({ length: 4 }, () => t.app.inject({ url: '/api/v1/users/1', remoteAddress: '10.9.0.2' })))
    const graphql = await Promise.all(
      Array.from({ length: 4 }, () =>
        t.app.inject({ method: 'POST', url: '/graphql', remoteAddress: '10.9.0.3', payload: { query: '{ user(id: 1) { id } }' } }),
      ),
    )
    const shedRest = rest.filter((res) => res.statusCode === 503)
    expect(shedRest.length).toBeGreaterThan(0)
    for (const res of shedRest) {
      expect(res.headers['retry-after']).toBe('1')
      expect(res.json().error.code).toBe('SERVICE_UNAVAILABLE')
    }
    const shedGraphql = graphql.filter((res) => res.statusCode === 503)
    expect(shedGraphql.length).toBeGreaterThan(0)
    for (const res of shedGraphql) expect(res.json().errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE')
    // What was not shed was answered.
    expect([...rest, ...graphql].every((res) => res.statusCode === 200 || res.statusCode === 503)).toBe(true)
  })

  it('sheds nothing once the loop has caught up', async () => {
    await until(async () => (await t.app.inject({ url: '/health' })).json().loop.shedding === false, 5000)
    const answers = await Promise.all(Array.from({ length: 4 }, () => t.app.inject({ url: '/api/v1/users/1', remoteAddress: '10.9.0.4' })))
    expect(answers.map((res) => res.statusCode)).toEqual([200, 200, 200, 200])
  })
})

describe('load shed after a start', () => {
  let t: TestApp
  afterAll(() => t.close())

  it('is not set off by what the start held: once ready, the loop is not behind and new callers are answered', async () => {
    t = await buildTestApp({ HTTP_MAX_IN_FLIGHT: '1', HTTP_SHED_LOOP_DELAY_MS: '100' })
    // The start's own synchronous work (modules, routes compiled) held the loop past a window.
    holdLoop(700)
    await t.app.ready()
    const health = await t.app.inject({ url: '/health', remoteAddress: '10.9.1.1' })
    expect(health.json().loop).toMatchObject({ shedding: false })
    expect(health.json().loop.delayMs).toBeLessThan(100)
    const answers = await Promise.all(Array.from({ length: 4 }, () => t.app.inject({ url: '/api/v1/users/1', remoteAddress: '10.9.1.2' })))
    expect(answers.map((res) => res.statusCode)).toEqual([200, 200, 200, 200])
  })
})
