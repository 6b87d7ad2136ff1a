// Timing subscription deliveries: N graphql-ws subscribers of commentAdded on one server, comments
// created one at a time over REST on another (or the same), each delivery timed from the send and
// from the 201. Shared by bench/scale-out.ts, bench/subscriptions.ts and bench/suite.ts.
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket from 'ws'
import { type RunningServer, stats } from './lib.js'

export interface Subscriber {
  socket: WebSocket
  /** Arrival time of each delivery, by comment content. */
  arrivals: Map<string, number>
  /** Why deliveries stopped, if they did: the server's `error` or `complete` of the subscription, or the socket's close. */
  ended?: string
}

const OPEN_AT_ONCE = 200

/**
 * The loopback address subscriber `n` connects from: each its own, as many people's browsers would,
 * so that the server's per-caller bounds (connections, subscription budget, deliveries) apply to
 * each subscriber at their defaults. Linux routes all of 127.0.0.0/8 to the loopback interface.
 */
const subscriberAddress = (n: number) => `127.1.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`

function subscribe(url: string, postId: string, n: number): Promise<Subscriber> {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', { localAddress: subscriberAddress(n) })
  const subscriber: Subscriber = { socket, arrivals: new Map<string, number>() }
  const query = `subscription { commentAdded(postId: "${postId}") { id content author { name } } }`
  return new Promise((resolve, reject) => {
    socket.once('error', reject)
    // Refused (a per-caller connection limit, say): a close before the ack; after it, a no-op.
    socket.once('close', (code, reason) => reject(new Error(`subscriber closed before its ack: ${code} ${reason.toString()}`)))
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init' })))
    socket.on('close', (code, reason) => (subscriber.ended ??= `closed ${code} ${reason.toString()}`))
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString()) as { type: string; payload?: { data?: { commentAdded?: { content: string } } } }
      if (message.type === 'connection_ack') {
        socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }))
        resolve(subscriber)
      } else if (message.type === 'next') {
        const content = message.payload?.data?.commentAdded?.content
        if (content !== undefined) subscriber.arrivals.set(content, performance.now())
      } else if (message.type === 'error' || message.type === 'complete') {
        subscriber.ended ??= `${message.type} ${JSON.stringify(message.payload ?? null).slice(0, 300)}`
      }
    })
  })
}

export async function untilDelivered(subscribers: readonly Subscriber[], content: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (subscribers.some((s) => !s.arrivals.has(content)) && Date.now() < deadline) await sleep(2)
}

/**
 * Adds `size` live subscribers of `postId` on the server at `url` to `into`, in batches: thousands of
 * handshakes at once would time the server's accept queue. On a failure, those opened are in `into`
 * for the caller to close.
 */
export async function openSubscribers(into: Subscriber[], url: string, postId: string, size: number): Promise<void> {
  const target = into.length + size
  while (into.length < target) {
    const opened = into.length
    const batch = await Promise.allSettled(Array.from({ length: Math.min(OPEN_AT_ONCE, target - opened) }, (_, i) => subscribe(url, postId, opened + i)))
    for (const result of batch) if (result.status === 'fulfilled') into.push(result.value)
    const failed = batch.find((result) => result.status === 'rejected')
    if (failed !== undefined) throw failed.reason
  }
}

export interface Delivery {
  subscribers: number
  comments: number
  fromSendMs: { p50: number; p99: number }
  from201Ms: { p50: number; p99: number }
  lastSubscriberFromSendMs: { p50: number; p99: number }
  lost: number
  /** When deliveries were lost: how many subscribers the server ended or closed, and the first one's reason. */
  ended?: string
}

/** `size` subscribers on `listenOn`; `comments` comments created one at a time on `commentOn`; each delivery timed. */
export async function timeDeliveries(
  listenOn: RunningServer,
  commentOn: RunningServer,
  token: string,
  postPath: string,
  label: string,
  { subscribers: size, comments }: { subscribers: number; comments: number },
): Promise<Delivery> {
  const postId = postPath.split('/').at(-1) ?? ''
  const subscribers: Subscriber[] = []
  try {
    await openSubscribers(subscribers, listenOn.url, postId, size)
    const comment = async (content: string) => {
      const sent = performance.now()
      const response = await fetch(`${commentOn.url}${postPath}/comments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content }),
      })
      if (response.status !== 201) throw new Error(`comment: ${response.status} ${await response.text()}`)
      return { sent, created: performance.now() }
    }
    // A first comment proves every subscription is live before anything is timed.
    await comment(`warm-up ${label}`)
    await untilDelivered(subscribers, `warm-up ${label}`, 10_000)
    const fromSend: number[] = []
    const from201: number[] = []
    const lasts: number[] = []
    let lost = 0
    for (let i = 0; i < comments; i++) {
      const content = `${label} ${i}`
      const { sent, created } = await comment(content)
      await untilDelivered(subscribers, content, 5000)
      const times = subscribers.map((s) => s.arrivals.get(content)).filter((t): t is number => t !== undefined)
      lost += size - times.length
      fromSend.push(...times.map((t) => t - sent))
      from201.push(...times.map((t) => t - created))
      if (times.length > 0) lasts.push(Math.max(...times) - sent)
      await sleep(20)
    }
    const endedOnes = subscribers.filter((s) => s.ended !== undefined)
    const send = stats(fromSend)
    const ok = stats(from201)
    const last = stats(lasts)
    return {
      subscribers: size,
      comments,
      fromSendMs: { p50: round(send.p50), p99: round(send.p99) },
      from201Ms: { p50: round(ok.p50), p99: round(ok.p99) },
      lastSubscriberFromSendMs: { p50: round(last.p50), p99: round(last.p99) },
      lost,
      ...(endedOnes.length === 0 ? {} : { ended: `${endedOnes.length} subscribers ended, the first: ${endedOnes[0]?.ended}` }),
    }
  } finally {
    for (const s of subscribers) s.socket.terminate()
  }
}

/** Creates a post for user 1 on `server`; returns its path. */
export async function createPost(server: RunningServer, token: string): Promise<string> {
  const response = await fetch(`${server.url}/api/v1/users/1/posts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Subscribed to', content: 'Comments on this post are timed.' }),
  })
  const body = (await response.json()) as { data?: { id: number } }
  if (response.status !== 201 || body.data === undefined) throw new Error(`creating a post: ${response.status}`)
  return `/api/v1/users/1/posts/${body.data.id}`
}

const round = (ms: number) => Math.round(ms * 10) / 10
