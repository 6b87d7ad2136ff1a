// Requests in flight per caller: a caller's requests past the limit wait their turn, one more past
// the queue is refused with 429 and Retry-After, and other callers are never held behind them.
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { registerErrorHandling } from '../../src/http/error-handler.js'
import { type InFlightPolicy, limitRequestsInFlight } from '../../src/limits/in-flight.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

/** Turns of the event loop counted while a test spins them (see the busy share's last test). */
let loopTurn = 0

/** A bare app with the limit and one route whose handlers finish when the test says. */
async function gatedApp(policy: InFlightPolicy) {
  const app = Fastify()
  registerErrorHandling(app, { graphql: (error) => ({ errors: [{ message: error.message }] }) })
  app.decorateRequest('caller', null)
  limitRequestsInFlight(app, policy)
  const running: string[] = []
  const finishers = new Map<string, () => void>()
  const startedOnTurn = new Map<string, number>()
  app.get('/work/:name', { config: { access: 'public' } }, async (request) => {
    const { name } = request.params as { name: string }
    running.push(name)
    startedOnTurn.set(name, loopTurn)
    await new Promise<void>((resolve) => finishers.set(name, resolve))
    running.splice(running.indexOf(name), 1)
    return { name }
  })
  await app.ready()
  return { app, running, finish: (name: string) => finishers.get(name)?.(), turnOf: (name: string) => startedOnTurn.get(name) }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

describe('requests in flight per caller', () => {
  let gated: Awaited<ReturnType<typeof gatedApp>>
  let app: FastifyInstance
  beforeAll(async () => {
    // Handlers here are held for as long as a test likes: the busy share is the next block's.
    gated = await gatedApp({ maxPerCaller: 2, maxQueuedPerCaller: 2, maxBusyPercentPerCaller: 0 })
    app = gated.app
  })
  afterAll(() => app.close())

  it('lets two of a caller in, queues two, refuses the fifth with 429 and Retry-After, and serves another caller at once', async () => {
    const mine = ['a', 'b', 'c', 'd', 'e'].map((name) => app.inject({ url: `/work/${name}`, remoteAddress: '10.1.0.1' }))
    // A caller's requests start one turn of the loop apart.
    await vi.waitFor(() => expect(gated.running.length).toBe(2), { timeout: 1000, interval: 5 })
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
    await vi.waitFor(() => expect(gated.running.sort()).toEqual(['b', 'c']), { timeout: 1000, interval: 5 })
    gated.finish('b')
    gated.finish('c')
    await vi.waitFor(() => expect(gated.running).toEqual(['d']), { timeout: 1000, interval: 5 })
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

describe('the busy share per caller', () => {
  let gated: Awaited<ReturnType<typeof gatedApp>>
  beforeAll(async () => {
    gated = await gatedApp({ maxPerCaller: 2, maxQueuedPerCaller: 8, maxBusyPercentPerCaller: 50 })
  })
  afterAll(() => gated.app.close())

  it('holds back the next request of a caller that kept its handlers busy past its share, even one sent after the last answer, while another caller is served at once', async () => {
    const started = performance.now()
    const slow = gated.app.inject({ url: '/work/slow', remoteAddress: '10.3.0.1' })
    await settle()
    expect(gated.running).toEqual(['slow'])
    // 600 ms busy at a 50% share leaves 300 ms of debt: 150 ms past the burst, paid back in 300 ms.
    await new Promise((resolve) => setTimeout(resolve, 600))
    gated.finish('slow')
    expect((await slow).statusCode).toBe(200)
    const busyMs = performance.now() - started

    const next = gated.app.inject({ url: '/work/next', remoteAddress: '10.3.0.1' })
    const other = gated.app.inject({ url: '/work/other', remoteAddress: '10.3.0.2' })
    await settle()
    expect(gated.running).toEqual(['other'])
    gated.finish('other')
    expect((await other).statusCode).toBe(200)

    await vi.waitFor(() => expect(gated.running).toContain('next'), { timeout: 3000, interval: 10 })
    const heldMs = performance.now() - started - busyMs
    expect(heldMs).toBeGreaterThanOrEqual(busyMs / 2 - 150 - 50)
    gated.finish('next')
    expect((await next).statusCode).toBe(200)
  })

  it('starts the requests of a caller whose last one was slow a turn of the loop apart, so that sockets are read between them', async () => {
    // A request that holds its handler past 10 ms makes the caller slow.
    const slow = gated.app.inject({ url: '/work/slow-first', remoteAddress: '10.3.0.3' })
    await vi.waitFor(() => expect(gated.running).toContain('slow-first'), { timeout: 1000, interval: 1 })
    await new Promise((resolve) => setTimeout(resolve, 30))
    gated.finish('slow-first')
    expect((await slow).statusCode).toBe(200)

    let spinning = true
    const spin = () => {
      loopTurn++
      if (spinning) setImmediate(spin)
    }
    spin()
    const sent = ['p', 'q'].map((name) => gated.app.inject({ url: `/work/${name}`, remoteAddress: '10.3.0.3' }))
    await vi.waitFor(() => expect(gated.running.length).toBe(2), { timeout: 1000, interval: 1 })
    spinning = false
    const [p, q] = [gated.turnOf('p'), gated.turnOf('q')]
    expect(p).toBeDefined()
    expect(q).toBeGreaterThan(p!)
    gated.finish('p')
    gated.finish('q')
    expect((await Promise.all(sent)).map((res) => res.statusCode)).toEqual([200, 200])
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
