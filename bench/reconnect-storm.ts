// A reconnect storm: N event-stream subscribers (graphql-sse, as browsers' EventSource) of
// commentAdded on one instance all lose their connection at once; while they are away, comments
// are written through two instances on the same database; then every subscriber reconnects at
// the same moment with Last-Event-ID, the last id it received. Measured: whether each received
// exactly the comments it missed, in order, none twice; the time from its reconnect to its last
// missed comment (p50, p99, max); and /health's latency on the subscribers' instance meanwhile.
// The servers run with the shipped defaults, the rate limit included: each subscriber comes from
// an address of its own, as many people's browsers would.
import { spawn } from 'node:child_process'
import { request as httpRequest, type ClientRequest } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { type RunningServer, stats } from './lib.js'

interface StreamEvent {
  id: string
  at: number
}

interface StreamSubscriber {
  events: StreamEvent[]
  request: ClientRequest
  /** When its answer's head arrived. */
  openedAt: number
}

export interface StormResult {
  subscribers: number
  missedComments: number
  /** Subscribers that received exactly what they missed, in order, none twice. */
  exact: number
  /** From the reconnect to the stream's answer head (its subscription admitted, its replay read). */
  openedMs: { p50: number; p99: number; max: number }
  /** From the reconnect to its last missed comment. */
  caughtUpMs: { p50: number; p99: number; max: number }
  healthMs: { p50: number; p99: number; max: number; samples: number }
}

/** The loopback address subscriber `n` connects from (Linux routes all of 127.0.0.0/8 to lo); another range than deliveries.ts's. */
const address = (n: number) => `127.3.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`

const OPEN_AT_ONCE = 200

/** Opens one event stream of commentAdded on the post; resolves once its head has arrived. */
function openStream(url: string, postId: string, n: number, lastEventId?: string): Promise<StreamSubscriber> {
  const body = JSON.stringify({ query: `subscription { commentAdded(postId: "${postId}") { id content } }` })
  return new Promise((resolve, reject) => {
    const events: StreamEvent[] = []
    const request = httpRequest(
      `${url}/graphql/stream`,
      {
        method: 'POST',
        agent: false,
        localAddress: address(n),
        headers: {
          accept: 'text/event-stream',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
        },
      },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`stream ${n}: ${response.statusCode}`))
          response.resume()
          return
        }
        // Only the events' ids are read (the comments' order and completeness are checked by id):
        // this process parses 200,000 events beside the server on the same machine.
        let tail = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          const text = tail + chunk
          let from = 0
          for (let at = text.indexOf('id: ', from); at !== -1; at = text.indexOf('id: ', from)) {
            const end = text.indexOf('\n', at)
            if (end === -1) break
            events.push({ id: text.slice(at + 4, end), at: performance.now() })
            from = end + 1
          }
          tail = text.slice(from).slice(-64)
        })
        response.on('error', () => undefined)
        resolve({ events, request, openedAt: performance.now() })
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

/** `size` fresh streams, opened in batches (the storm is the reconnect, not this). */
async function openStreams(url: string, postId: string, size: number): Promise<StreamSubscriber[]> {
  const opened: StreamSubscriber[] = []
  for (let from = 0; from < size; from += OPEN_AT_ONCE) {
    opened.push(...(await Promise.all(Array.from({ length: Math.min(OPEN_AT_ONCE, size - from) }, (_, i) => openStream(url, postId, from + i)))))
  }
  return opened
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(5)
  }
}

/**
 * Asks /health one request after another (10 ms apart) until stopped; the latency of each, in ms.
 * From a process of its own: this one is busy reading the subscribers' streams, and its own delays
 * would be counted as the server's.
 */
const HEALTH_PROBE = `
const samples = []
let running = true
process.stdin.on('data', () => (running = false))
process.stdin.resume()
while (running) {
  const started = performance.now()
  const response = await fetch(process.argv[1] + '/health')
  await response.arrayBuffer()
  samples.push(performance.now() - started)
  await new Promise((resolve) => setTimeout(resolve, 10))
}
process.stdout.write(JSON.stringify(samples))
process.exit(0)
`

function probeHealth(url: string): { stop: () => Promise<number[]> } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', HEALTH_PROBE, url], { stdio: ['pipe', 'pipe', 'inherit'] })
  let output = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    stop: async () => {
      child.stdin.write('stop\n')
      await exited
      return JSON.parse(output) as number[]
    },
  }
}

export async function reconnectStorm(
  subscribersOn: RunningServer,
  otherInstance: RunningServer,
  token: string,
  post: { userId: string; id: string },
  { subscribers: size, comments }: { subscribers: number; comments: number },
): Promise<StormResult> {
  const comment = async (on: RunningServer, content: string) => {
    const response = await fetch(`${on.url}/api/v1/users/${post.userId}/posts/${post.id}/comments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content }),
    })
    if (response.status !== 201) throw new Error(`comment: ${response.status} ${await response.text()}`)
    return String(((await response.json()) as { data: { id: number } }).data.id)
  }

  // Every subscriber live, proved by a first comment each receives; its id is where it resumes.
  const first = await openStreams(subscribersOn.url, post.id, size)
  const warmUp = await comment(subscribersOn, 'storm warm-up')
  await until(() => first.every((s) => s.events.some((e) => e.id === warmUp)), 30_000, 'the warm-up comment')
  const lastIds = first.map((s) => s.events.at(-1)?.id)

  // The network drops every stream; the comments written meanwhile go through both instances.
  for (const s of first) s.request.destroy()
  await sleep(500)
  const missed: string[] = []
  for (let i = 0; i < comments; i++) missed.push(await comment(i % 2 === 0 ? subscribersOn : otherInstance, `missed ${i}`))

  // All at once, each with its Last-Event-ID; /health asked all along.
  const health = probeHealth(subscribersOn.url)
  await sleep(300)
  const reconnectAt = performance.now()
  const again = await Promise.all(lastIds.map((lastId, n) => openStream(subscribersOn.url, post.id, n, lastId)))
  const last = missed.at(-1)
  // Ids come in order: caught up once the last one seen is the last missed (or past it).
  const caughtUp = (s: StreamSubscriber) => Number(s.events.at(-1)?.id ?? 0) >= Number(last)
  await until(() => again.every(caughtUp), 60_000, 'every subscriber to catch up')
  const healthSamples = await health.stop()

  // A live comment after the storm, so that a duplicate on its way would have arrived.
  const after = await comment(subscribersOn, 'storm after')
  await until(() => again.every((s) => Number(s.events.at(-1)?.id ?? 0) >= Number(after)), 30_000, 'the comment after the storm')
  const expected = JSON.stringify([...missed, after])
  const exact = again.filter((s) => JSON.stringify(s.events.map((e) => e.id)) === expected).length
  const times = again.map((s) => (s.events.find((e) => e.id === last)?.at ?? Number.NaN) - reconnectAt)
  const opened = stats(again.map((s) => s.openedAt - reconnectAt))
  for (const s of again) s.request.destroy()

  const caught = stats(times)
  const healthStats = stats(healthSamples)
  const round = (ms: number) => Math.round(ms * 10) / 10
  return {
    subscribers: size,
    missedComments: comments,
    exact,
    openedMs: { p50: round(opened.p50), p99: round(opened.p99), max: round(opened.max) },
    caughtUpMs: { p50: round(caught.p50), p99: round(caught.p99), max: round(caught.max) },
    healthMs: { p50: round(healthStats.p50), p99: round(healthStats.p99), max: round(healthStats.max), samples: healthSamples.length },
  }
}
