// The in-flight limit, scheduled fairly: a caller alone takes every slot the global limit allows and
// is never paced; a newcomer is served ahead of a greedy caller's backlog; a caller's requests past
// its queue are refused with 429 and Retry-After; probes take no slot.
// Runs once, on SQLite: its subject is the scheduler's slots, sockets and timers, not the store.
import { connect, type Socket } from 'node:net'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { registerErrorHandling } from '../../src/http/error-handler.js'
import { createFairScheduler, type FairSchedulerOptions } from '../../src/limits/fair-scheduler.js'
import { type InFlightOptions, limitRequestsInFlight } from '../../src/http/in-flight.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { holdLoop } from '../helpers/hold-loop.js'
import { type Conversation, openRaw } from '../helpers/raw-connection.js'
import { createTestClock } from '../helpers/test-clock.js'

/** Turns of the event loop counted while a test spins them (see the slow requests' test). */
let loopTurn = 0

/** A bare app with the scheduler (on a clock the test may move), one route whose handlers finish when the test says, and a probe. */
async function gatedApp(options: FairSchedulerOptions, inFlight?: InFlightOptions) {
  const app = Fastify()
  registerErrorHandling(app, { graphql: (error) => ({ errors: [{ message: error.message }] }) })
  app.decorateRequest('caller', null)
  const clock = createTestClock()
  const scheduler = createFairScheduler({ ...options, now: clock.now })
  limitRequestsInFlight(app, scheduler, inFlight)
  const running: string[] = []
  const finishers = new Map<string, () => void>()
  const startedOnLoopTurn = new Map<string, number>()
  const startedAt = new Map<string, number>()
  app.get('/work/:name', { config: { access: 'public' } }, async (request) => {
    const { name } = request.params as { name: string }
    running.push(name)
    startedOnLoopTurn.set(name, loopTurn)
    startedAt.set(name, performance.now())
    await new Promise<void>((resolve) => finishers.set(name, resolve))
    running.splice(running.indexOf(name), 1)
    return { name }
  })
  app.get('/probe', { config: { access: 'public', unmetered: true } }, async () => ({ up: true }))
  // Holds the event loop, as a SQLite statement does; the order in which these and /cheap start is kept.
  const order: string[] = []
  app.get('/spin/:name', { config: { access: 'public' } }, async (request) => {
    const { name } = request.params as { name: string }
    order.push(name)
    holdLoop(30)
    return { name }
  })
  app.get('/cheap/:name', { config: { access: 'public' } }, async (request) => {
    const { name } = request.params as { name: string }
    order.push(name)
    // Its answer leaves on a later turn of the loop, as a socket write's does.
    await new Promise((resolve) => setImmediate(resolve))
    return { name }
  })
  // An answer of `mb` megabytes: more than the sockets' buffers take from a client that does not read.
  app.get('/big/:mb', { config: { access: 'public' } }, async (request, reply) => {
    const { mb } = request.params as { mb: string }
    return reply.type('text/plain').send('x'.repeat(Number(mb) * 2 ** 20))
  })
  await app.ready()
  const isRunning = (name: string) => vi.waitFor(() => expect(running).toContain(name), { timeout: 3000, interval: 1 })
  return {
    app,
    clock,
    scheduler,
    running,
    order,
    isRunning,
    finish: (name: string) => finishers.get(name)?.(),
    loopTurnOf: (name: string) => startedOnLoopTurn.get(name),
    startOf: (name: string) => startedAt.get(name),
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

describe('a caller alone', () => {
  let gated: Awaited<ReturnType<typeof gatedApp>>
  beforeAll(async () => {
    gated = await gatedApp({ concurrency: 4, maxQueuedPerCaller: 2 })
  })
  afterAll(() => gated.app.close())

  it('has as many requests in their handlers as the global limit allows, more than two, queues two more and refuses the next with 429 and Retry-After', async () => {
    const mine = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((name) => gated.app.inject({ url: `/work/${name}`, remoteAddress: '10.1.0.1' }))
    await vi.waitFor(() => expect(gated.running.length).toBe(4), { timeout: 1000, interval: 5 })
    await settle()
    expect(gated.running.sort()).toEqual(['a', 'b', 'c', 'd'])
    const refused = await mine[6]!
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.json().error.code).toBe('RATE_LIMITED')

    // Each answer hands its slot to the next in line, never more than four at once.
    gated.finish('a')
    await vi.waitFor(() => expect(gated.running.sort()).toEqual(['b', 'c', 'd', 'e']), { timeout: 1000, interval: 5 })
    for (const name of ['b', 'c', 'd']) gated.finish(name)
    await vi.waitFor(() => expect(gated.running.sort()).toEqual(['e', 'f']), { timeout: 1000, interval: 5 })
    gated.finish('e')
    gated.finish('f')
    expect((await Promise.all(mine.slice(0, 6))).map((res) => res.statusCode)).toEqual([200, 200, 200, 200, 200, 200])
  })

  it('is never held back by a share of the clock: its next request after a long one starts at once', async () => {
    const long = gated.app.inject({ url: '/work/long', remoteAddress: '10.1.0.4' })
    await gated.isRunning('long')
    // 600 ms in a handler: a share of half the clock would hold the next request back for 300 ms.
    gated.clock.advance(600)
    gated.finish('long')
    expect((await long).statusCode).toBe(200)
    const sentAt = performance.now()
    const next = gated.app.inject({ url: '/work/next', remoteAddress: '10.1.0.4' })
    await gated.isRunning('next')
    expect(gated.startOf('next')! - sentAt).toBeLessThan(100)
    gated.finish('next')
    expect((await next).statusCode).toBe(200)
  })

  it('gives the slot back when the client goes away while its request is handled', async () => {
    const controller = new AbortController()
    const gone = gated.app.inject({ url: '/work/gone', remoteAddress: '10.1.0.3', signal: controller.signal }).catch(() => undefined)
    const others = ['second', 'third', 'fourth'].map((name) => gated.app.inject({ url: `/work/${name}`, remoteAddress: '10.1.0.3' }))
    await vi.waitFor(() => expect(gated.running.length).toBe(4), { timeout: 1000, interval: 5 })
    const fifth = gated.app.inject({ url: '/work/fifth', remoteAddress: '10.1.0.3' })
    await settle()
    expect(gated.running).not.toContain('fifth')
    controller.abort()
    gated.finish('gone')
    await gone
    await gated.isRunning('fifth')
    for (const name of ['second', 'third', 'fourth', 'fifth']) gated.finish(name)
    expect((await Promise.all([...others, fifth])).map((res) => res.statusCode)).toEqual([200, 200, 200, 200])
  })
  it('skips the work of a request whose client went away while it waited for a slot', async () => {
    const held = ['h1', 'h2', 'h3', 'h4'].map((name) => gated.app.inject({ url: `/work/${name}`, remoteAddress: '127.0.0.1' }))
    await vi.waitFor(() => expect(gated.running.length).toBe(4), { timeout: 1000, interval: 5 })
    // Over a real socket, closed by the client while the request waits.
    const address = await gated.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = new URL(address)
    const socket = connect(Number(port), '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write('GET /work/gone-waiting HTTP/1.1\r\nHost: localhost\r\n\r\n')
    await vi.waitFor(() => expect(gated.scheduler.load().waiting).toBe(1), { timeout: 1000, interval: 1 })
    socket.destroy()
    await settle()
    const after = gated.app.inject({ url: '/work/after', remoteAddress: '127.0.0.1' })
    gated.finish('h1')
    await gated.isRunning('after')
    expect(gated.startOf('gone-waiting')).toBeUndefined()
    for (const name of ['h2', 'h3', 'h4', 'after']) gated.finish(name)
    expect((await Promise.all([...held, after])).map((res) => res.statusCode)).toEqual([200, 200, 200, 200, 200])
  })
})

describe('answers their clients do not read', () => {
  /** Raw connections that ask for a large answer and never read it; resolves once their answers are being sent. */
  async function unreadAnswers(port: number, count: number) {
    const conversations = await Promise.all(Array.from({ length: count }, () => openRaw(port)))
    for (const { socket } of conversations) {
      socket.pause()
      socket.write('GET /big/32 HTTP/1.1\r\nHost: localhost\r\n\r\n')
    }
    return conversations
  }

  it('hold no slot once their handlers are done: other requests are served while the answers wait', async () => {
    const gated = await gatedApp({ concurrency: 2, maxQueuedPerCaller: 64 }, { sendTimeoutMs: 60_000 })
    const port = Number(new URL(await gated.app.listen({ port: 0, host: '127.0.0.1' })).port)
    const unread = await unreadAnswers(port, 4)
    await vi.waitFor(() => expect(unread.every(({ socket }) => socket.readableLength > 0 || socket.bytesRead > 0)).toBe(true), { timeout: 5000, interval: 5 })
    expect(gated.scheduler.load().running).toBe(0)
    const served = gated.app.inject({ url: '/cheap/while-unread', remoteAddress: '10.5.0.2' })
    expect((await served).statusCode).toBe(200)
    for (const { socket } of unread) socket.destroy()
    await gated.app.close()
  })

  it('are dropped, their connections closed, when they make no progress for the send timeout; a client that reads slowly but steadily gets its whole answer', async () => {
    const gated = await gatedApp({ concurrency: 2, maxQueuedPerCaller: 64 }, { sendTimeoutMs: 300 })
    // The server's end of each connection, by the client's port: a client that does not read cannot see its connection closed.
    const serverSockets = new Map<number, Socket>()
    gated.app.server.on('connection', (socket: Socket) => serverSockets.set(socket.remotePort!, socket))
    const port = Number(new URL(await gated.app.listen({ port: 0, host: '127.0.0.1' })).port)
    const unread = await unreadAnswers(port, 2)
    // A reader that takes a little every 100 ms: its answer always makes progress within 300 ms.
    const steady = await openRaw(port)
    steady.socket.write('GET /big/4 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    const pacer = setInterval(() => {
      steady.socket.resume()
      setTimeout(() => steady.socket.pause(), 20)
    }, 100)
    const ports = new Map([...unread, steady].map((conversation) => [conversation, conversation.socket.localPort!]))
    const serverEnd = (conversation: Conversation) => serverSockets.get(ports.get(conversation)!)
    await vi.waitFor(() => expect(unread.map((conversation) => serverEnd(conversation)?.destroyed)).toEqual([true, true]), { timeout: 10_000, interval: 20 })
    await steady.closed
    clearInterval(pacer)
    expect(steady.received()).toMatch(/^HTTP\/1.1 200/)
    expect(steady.received().length).toBeGreaterThan(4 * 2 ** 20)
    for (const { socket } of unread) socket.destroy()
    await gated.app.close()
  })
})

describe('callers that contend', () => {
  let gated: Awaited<ReturnType<typeof gatedApp>>
  beforeAll(async () => {
    gated = await gatedApp({ concurrency: 2, maxQueuedPerCaller: 64 })
  })
  afterAll(() => gated.app.close())

  it('serve a light caller within two of a greedy caller’s slow requests, ahead of its backlog of 40', async () => {
    const greedy = Array.from({ length: 40 }, (_, i) => gated.app.inject({ url: `/work/greedy-${i}`, remoteAddress: '10.3.0.1' }))
    await vi.waitFor(() => expect(gated.running.length).toBe(2), { timeout: 1000, interval: 5 })
    // The greedy caller's requests are slow: 30 ms each in their handlers.
    let done = 0
    const finishGreedy = async () => {
      const name = gated.running.find((running) => running.startsWith('greedy'))!
      gated.clock.advance(30)
      gated.finish(name)
      done++
      await vi.waitFor(() => expect(gated.running.length).toBe(2), { timeout: 1000, interval: 1 })
    }
    await finishGreedy()
    await finishGreedy()
    const light = gated.app.inject({ url: '/work/light', remoteAddress: '10.3.0.2' })
    await settle()
    const before = done
    while (!gated.running.includes('light')) await finishGreedy()
    expect(done - before).toBeLessThanOrEqual(2)
    gated.finish('light')
    expect((await light).statusCode).toBe(200)
    const drain = setInterval(() => gated.running.filter((name) => name.startsWith('greedy')).forEach((name) => gated.finish(name)), 1)
    expect((await Promise.all(greedy)).every((res) => res.statusCode === 200)).toBe(true)
    clearInterval(drain)
  })

  it('serve five requests of a light caller within two of a greedy caller’s that hold the event loop 30 ms each, however the light ones’ answers are delayed by them', async () => {
    gated.order.length = 0
    const greedy = Array.from({ length: 30 }, (_, i) => gated.app.inject({ url: `/spin/greedy-${i}`, remoteAddress: '10.3.0.6' }))
    await vi.waitFor(() => expect(gated.order.length).toBeGreaterThanOrEqual(3), { timeout: 3000, interval: 1 })
    // One at a time first: each answer leaves after a greedy request has held the loop, which is not the light caller's doing.
    for (let i = 0; i < 3; i++) expect((await gated.app.inject({ url: `/cheap/light-${i}`, remoteAddress: '10.3.0.7' })).statusCode).toBe(200)
    const burst = Array.from({ length: 5 }, (_, i) => gated.app.inject({ url: `/cheap/burst-${i}`, remoteAddress: '10.3.0.7' }))
    expect((await Promise.all(burst)).map((res) => res.statusCode)).toEqual([200, 200, 200, 200, 200])
    const first = gated.order.findIndex((name) => name.startsWith('burst'))
    const last = gated.order.findLastIndex((name) => name.startsWith('burst'))
    const greedyBetween = gated.order.slice(first, last).filter((name) => name.startsWith('greedy')).length
    expect(greedyBetween).toBeLessThanOrEqual(2)
    expect((await Promise.all(greedy)).every((res) => res.statusCode === 200)).toBe(true)
  })

  it('start the requests of a caller whose last one was slow a turn of the loop apart, so that sockets are read between them', async () => {
    // A request that holds its handler past 10 ms makes the caller slow.
    const slow = gated.app.inject({ url: '/work/slow-first', remoteAddress: '10.3.0.3' })
    await gated.isRunning('slow-first')
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
    const [p, q] = [gated.loopTurnOf('p'), gated.loopTurnOf('q')]
    expect(p).toBeDefined()
    expect(q).toBeGreaterThan(p!)
    gated.finish('p')
    gated.finish('q')
    expect((await Promise.all(sent)).map((res) => res.statusCode)).toEqual([200, 200])
  })

  it('answer probes without a slot while every slot is taken', async () => {
    const held = ['x', 'y', 'z'].map((name) => gated.app.inject({ url: `/work/${name}`, remoteAddress: '10.3.0.4' }))
    await vi.waitFor(() => expect(gated.running.length).toBe(2), { timeout: 1000, interval: 5 })
    expect((await gated.app.inject({ url: '/probe', remoteAddress: '10.3.0.5' })).statusCode).toBe(200)
    expect(gated.running).not.toContain('z')
    for (const name of ['x', 'y']) gated.finish(name)
    await gated.isRunning('z')
    gated.finish('z')
    expect((await Promise.all(held)).map((res) => res.statusCode)).toEqual([200, 200, 200])
  })
})

describe('the app', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ HTTP_MAX_IN_FLIGHT: '1', HTTP_MAX_QUEUED_PER_CALLER: '3' })
  })
  afterAll(() => t.close())

  it('answers a burst from one address in turn, refusing past the queue with 429 and Retry-After, while another address is served', async () => {
    const burst = Array.from({ length: 40 }, () => t.app.inject({ url: '/api/v1/users?limit=5', remoteAddress: '10.2.0.1' }))
    const other = await t.app.inject({ url: '/api/v1/users/1', remoteAddress: '10.2.0.2' })
    expect(other.statusCode).toBe(200)
    const answers = await Promise.all(burst)
    const refused = answers.filter((res) => res.statusCode === 429)
    expect(answers.filter((res) => res.statusCode === 200).length).toBeGreaterThanOrEqual(3)
    expect(refused.length).toBeGreaterThan(0)
    expect(answers.every((res) => res.statusCode === 200 || res.statusCode === 429)).toBe(true)
    for (const res of refused) {
      expect(res.headers['retry-after']).toBe('1')
      expect(res.json().error.code).toBe('RATE_LIMITED')
    }
    // Every slot was given back: the address is served again.
    expect((await t.app.inject({ url: '/api/v1/users/1', remoteAddress: '10.2.0.1' })).statusCode).toBe(200)
  })
})
