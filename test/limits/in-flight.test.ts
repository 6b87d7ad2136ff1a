// Requests in flight per caller: a caller's requests past the limit wait their turn, one more past
// the queue is refused with 429 and Retry-After, and other callers are never held behind them.
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { registerErrorHandling } from '../../src/http/error-handler.js'
import { limitRequestsInFlight } from '../../src/limits/in-flight.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

/** A bare app with the limit and one route whose handlers finish when the test says. */
async function gatedApp(maxPerCaller: number, maxQueuedPerCaller: number) {
  const app = Fastify()
  registerErrorHandling(app, { graphql: (error) => ({ errors: [{ message: error.message }] }) })
  app.decorateRequest('caller', null)
  limitRequestsInFlight(app, { maxPerCaller, maxQueuedPerCaller })
  const running: string[] = []
  const finishers = new Map<string, () => void>()
  app.get('/work/:name', { config: { access: 'public' } }, async (request) => {
    const { name } = request.params as { name: string }
    running.push(name)
    await new Promise<void>((resolve) => finishers.set(name, resolve))
    running.splice(running.indexOf(name), 1)
    return { name }
  })
  await app.ready()
  return { app, running, finish: (name: string) => finishers.get(name)?.() }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

describe('requests in flight per caller', () => {
  let gated: Awaited<ReturnType<typeof gatedApp>>
  let app: FastifyInstance
  beforeAll(async () => {
    gated = await gatedApp(2, 2)
    app = gated.app
  })
  afterAll(() => app.close())

  it('lets two of a caller in, queues two, refuses the fifth with 429 and Retry-After, and serves another caller at once', async () => {
    const mine = ['a', 'b', 'c', 'd', 'e'].map((name) => app.inject({ url: `/work/${name}`, remoteAddress: '10.1.0.1' }))
    await settle()
    expect(gated.running.sort()).toEqual(['a', 'b'])
    const fifth = await mine[4]!
    expect(fifth.statusCode).toBe(429)
    expect(fifth.headers['retry-after']).toBe('1')
    expect(fifth.json().error.code).toBe('RATE_LIMITED')

    // Another client address is not held behind them.
    const other = app.inject({ url: '/work/other', remoteAddress: '10.1.0.2' })
    await settle()
    expect(gated.running).toContain('other')
    gated.finish('other')
    expect((await other).statusCode).toBe(200)

    // Each answer hands its turn to the next in line, never more than two at once.
    gated.finish('a')
    await settle()
    expect(gated.running.sort()).toEqual(['b', 'c'])
    gated.finish('b')
    gated.finish('c')
    await settle()
    expect(gated.running).toEqual(['d'])
    gated.finish('d')
    expect((await Promise.all(mine.slice(0, 4))).map((res) => res.statusCode)).toEqual([200, 200, 200, 200])
  })

  it('gives the turn back when the client goes away while its request is handled', async () => {
    const controller = new AbortController()
    const gone = app.inject({ url: '/work/gone', remoteAddress: '10.1.0.3', signal: controller.signal }).catch(() => undefined)
    const second = app.inject({ url: '/work/second', remoteAddress: '10.1.0.3' })
    await settle()
    const third = app.inject({ url: '/work/third', remoteAddress: '10.1.0.3' })
    await settle()
    expect(gated.running).not.toContain('third')
    controller.abort()
    gated.finish('gone')
    await gone
    await settle()
    expect(gated.running).toContain('third')
    gated.finish('second')
    gated.finish('third')
    expect((await second).statusCode).toBe(200)
    expect((await third).statusCode).toBe(200)
  })
})

describe('the app', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ HTTP_MAX_IN_FLIGHT_PER_CALLER: '1', HTTP_MAX_QUEUED_PER_CALLER: '3' })
  })
  afterAll(() => t.close())

  it('answers a burst from one address in turn, refusing past the queue with 429 and Retry-After, while another address is served', async () => {
    const burst = Array.from({ length: 40 }, () => t.app.inject({ url: '/api/v1/users?limit=5', remoteAddress: '10.2.0.1' }))
    const other = await t.app.inject({ url: '/api/v1/users/1', remoteAddress: '10.2.0.2' })
    expect(other.statusCode).toBe(200)
    const answers = await Promise.all(burst)
    const refused = answers.filter((res) => res.statusCode === 429)
    expect(answers.filter((res) => res.statusCode === 200).length).toBeGreaterThanOrEqual(4)
    expect(refused.length).toBeGreaterThan(0)
    expect(answers.every((res) => res.statusCode === 200 || res.statusCode === 429)).toBe(true)
    for (const res of refused) {
      expect(res.headers['retry-after']).toBe('1')
      expect(res.json().error.code).toBe('RATE_LIMITED')
    }
    // Every turn was given back: the address is served again.
    expect((await t.app.inject({ url: '/api/v1/users/1', remoteAddress: '10.2.0.1' })).statusCode).toBe(200)
  })
})
