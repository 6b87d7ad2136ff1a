// Redis stopped and started again under load, on a redis-server of the test's own: a real
// `threadline serve` keeps answering (the rate limiter fails open by default), tells its
// subscribers that events may be missed, and once Redis is back delivers again and counts again,
// without a restart; a subscriber that subscribes again after the last comment it received gets
// those of the outage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { canRunPrivateRedis, PrivateRedis } from '../helpers/private-redis.js'
import { type ServeProcess, startServe, tokenFromCli } from '../helpers/serve-process.js'
import { freshSqliteFile, type TestDatabase } from '../helpers/test-store.js'
import { until } from '../helpers/until.js'

describe.skipIf(!canRunPrivateRedis())('Redis outage under load', () => {
  let redis: PrivateRedis
  let serve: ServeProcess
  let store: TestDatabase
  beforeAll(async () => {
    redis = await PrivateRedis.onFreePort()
    await redis.start()
    store = freshSqliteFile()
    serve = await startServe({ DATABASE_URL: store.url, REDIS_URL: redis.url, RATE_LIMIT_MAX: '1000000' })
  }, 60_000)
  afterAll(async () => {
    await serve?.stop()
    await redis?.stop()
    await store?.drop()
  })

  it('keeps serving, tells subscribers, and delivers and counts again once Redis is back', async () => {
    const token = await tokenFromCli(store.url, 2)
    const comment = async (content: string) =>
      (
        await fetch(`${serve.address}/api/v1/users/1/posts/1/comments`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ content }),
        })
      ).status

    // A subscriber to every comment.
    const messages: {
      type: string
      id?: string
      payload?: { data?: { commentAdded?: { id: string; content: string } } | null; errors?: { extensions: { code: string } }[] }
    }[] = []
    const socket = new WebSocket(`${serve.address.replace('http', 'ws')}/graphql`, 'graphql-transport-ws')
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString()) as (typeof messages)[number]
      messages.push(message)
      if (message.type === 'connection_ack')
        socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { commentAdded { id content } }' } }))
    })
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init' })))
    const delivered = (content: string, subscription = '1') => messages.some((m) => m.id === subscription && m.payload?.data?.commentAdded?.content === content)
    const commentUntilDelivered = async (prefix: string) => {
      for (let i = 0; ; i++) {
        expect(await comment(`${prefix} ${i}`)).toBe(201)
        try {
          await until(() => delivered(`${prefix} ${i}`), 500)
          return
        } catch {
          // Not subscribed yet, or Redis not back yet: another one.
        }
      }
    }
    await until(() => messages.some((m) => m.type === 'connection_ack'), 5000)
    await commentUntilDelivered('before')

    // Readers all along, each answer recorded with the limiter's count.
    const answers: { status: number; remaining: string | null; phase: string }[] = []
    const failures: string[] = []
    let phase = 'before'
    let reading = true
    const readers = Array.from({ length: 3 }, async () => {
      while (reading) {
        try {
          const response = await fetch(`${serve.address}/api/v1/users/1`)
          await response.arrayBuffer()
          answers.push({ status: response.status, remaining: response.headers.get('x-ratelimit-remaining'), phase })
        } catch (error) {
          failures.push(String(error))
        }
      }
    })
    await until(() => answers.length >= 30, 10_000)

    await redis.stop()
    phase = 'away'
    await until(() => messages.some((m) => m.payload?.errors?.[0]?.extensions.code === 'SERVICE_UNAVAILABLE'), 15_000)
    expect(await comment('while away')).toBe(201)
    const awayAt = answers.length
    await until(() => answers.length >= awayAt + 30, 10_000)
    expect((await (await fetch(`${serve.address}/ready`)).json()) as unknown).toMatchObject({ status: 'degraded', checks: { redis: { status: 'down' } } })

    await redis.start()
    phase = 'back'
    await commentUntilDelivered('after')
    // The outage's comment never reached the subscriber; subscribed again after the last comment it
    // received before the outage, it comes first.
    expect(delivered('while away')).toBe(false)
    const lastBeforeId = messages.filter((m) => m.payload?.data?.commentAdded?.content.startsWith('before') === true).at(-1)?.payload?.data?.commentAdded?.id
    socket.send(JSON.stringify({ id: '2', type: 'subscribe', payload: { query: `subscription { commentAdded(after: "${lastBeforeId}") { id content } }` } }))
    await until(() => delivered('while away', '2'), 5000)
    const resumed = messages.filter((m) => m.id === '2').map((m) => m.payload?.data?.commentAdded?.content)
    expect(resumed[0]).toBe('while away')
    // Counting again, in Redis: the restarted one (no persistence) starts the allowance over, above
    // where it stood before the outage, and it goes down request by request. Until the limiter's
    // client is connected again, the first answers after the restart are still counted in memory.
    const lastBefore = Number(answers.filter((a) => a.phase === 'before' && a.remaining !== null).at(-1)?.remaining)
    const countedBack = () => answers.filter((a) => a.phase === 'back' && a.remaining !== null).map((a) => Number(a.remaining))
    await until(() => {
      const counted = countedBack()
      const startedOver = counted.findIndex((remaining) => remaining > lastBefore)
      return startedOver !== -1 && counted.length >= startedOver + 5 && counted.at(-1)! < counted[startedOver]!
    }, 15_000)
    reading = false
    await Promise.all(readers)
    socket.close()

    expect(answers.filter((a) => a.status !== 200)).toEqual([])
    expect(answers.filter((a) => a.phase === 'away').length).toBeGreaterThanOrEqual(30)
    expect(failures).toEqual([])
    expect(serve.child.exitCode).toBeNull()
    expect((await (await fetch(`${serve.address}/ready`)).json()) as unknown).toMatchObject({ status: 'ok', checks: { redis: { status: 'up' } } })
  }, 90_000)
})
