// The events port's contract, run against every adapter: in-process always, Redis when it answers
// (under CI=true it must). What differs (interruptions) is tested in redis-events.test.ts.
import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import type { CommentAdded } from '../../src/comments/comments.events.js'
import type { Events } from '../../src/events/events.js'
import { APP_TOPICS, type AppTopics } from '../../src/features.js'
import { createMemoryEvents } from '../../src/events/memory-events.js'
import { createRedisEvents } from '../../src/events/redis-events.js'
import { uniquePrefix } from '../helpers/private-redis.js'
import { redisUrl } from '../helpers/services.js'
import { until } from '../helpers/until.js'

const sharedUrl = await redisUrl()
const log = Fastify({ logger: false }).log

const adapters: [string, () => Promise<Events<AppTopics>>][] = [
  ['in-process', async () => createMemoryEvents<AppTopics>()],
  ...(sharedUrl === undefined
    ? []
    : [
        ['Redis', () => createRedisEvents({ url: sharedUrl, keyPrefix: uniquePrefix(), log, topics: APP_TOPICS })] as [
          string,
          () => Promise<Events<AppTopics>>,
        ],
      ]),
]

const at = '2025-06-01T12:00:00.000Z'
const event = (id: number, content = `comment ${id}`): CommentAdded => ({
  comment: { id, postId: 7, authorId: 3, author: { id: 3, name: 'Bob' }, email: null, content, createdAt: at, updatedAt: at },
  post: { id: 7, userId: 2, title: 'A post', content: '.', status: 'published', publishedAt: at, createdAt: at, updatedAt: at },
  author: {
    id: 3,
    name: 'Bob',
    email: 'bob@example.com',
    age: null,
    avatar: null,
    role: 'user',
    username: null,
    phone: null,
    website: null,
    address: null,
    company: null,
    createdAt: at,
    updatedAt: at,
  },
})

const opened: Events<AppTopics>[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((events) => events.close()))
})

describe.each(adapters)('the %s events adapter', (_name, create) => {
  const open = async () => {
    const events = await create()
    opened.push(events)
    return events
  }

  it('tells every listener of a name each event, in the order published, as it was published', async () => {
    const events = await open()
    const first: CommentAdded[] = []
    const second: CommentAdded[] = []
    events.subscribe('commentAdded', (e) => first.push(e))
    events.subscribe('commentAdded', (e) => second.push(e))
    for (let id = 1; id <= 3; id++) await events.publish('commentAdded', event(id))
    await until(() => first.length === 3 && second.length === 3)
    expect(first).toEqual([event(1), event(2), event(3)])
    expect(second).toEqual(first)
  })

  it('stops telling a listener once it unsubscribes, and counts the listeners of this process', async () => {
    const events = await open()
    const kept: CommentAdded[] = []
    const left: CommentAdded[] = []
    events.subscribe('commentAdded', (e) => kept.push(e))
    const unsubscribe = events.subscribe('commentAdded', (e) => left.push(e))
    expect(events.listenerCount('commentAdded')).toBe(2)
    unsubscribe()
    expect(events.listenerCount('commentAdded')).toBe(1)
    await events.publish('commentAdded', event(1))
    await until(() => kept.length === 1)
    expect(left).toEqual([])
  })

  it('keeps a listener that throws (a bug) from the others and from the publisher', async () => {
    const events = await open()
    const heard: CommentAdded[] = []
    events.subscribe('commentAdded', () => {
      throw new Error('a broken listener')
    })
    events.subscribe('commentAdded', (e) => heard.push(e))
    await expect(events.publish('commentAdded', event(1))).resolves.toBeUndefined()
    await until(() => heard.length === 1)
    expect(heard).toEqual([event(1)])
  })

  it('never rejects a publish, even once closed, and reports no fault while all is well', async () => {
    const events = await create()
    events.subscribe('commentAdded', () => undefined)
    await events.publish('commentAdded', event(1))
    expect(events.stats).toEqual({ publishFailures: 0, interruptions: 0 })
    await events.close()
    expect(events.listenerCount('commentAdded')).toBe(0)
    await expect(events.publish('commentAdded', event(2))).resolves.toBeUndefined()
  })
})
