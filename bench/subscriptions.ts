// Subscription fan-out on one instance: N WebSocket subscribers (graphql-transport-ws) of
// commentAdded on one post, against a real `threadline serve`; one comment at a time is created
// over REST, and each subscriber's delivery is timed from the 201. Prints, per N: delivery
// latency over all deliveries (p50, p99), the time to the last subscriber of each comment (p50,
// p99 over the comments), deliveries lost, and the server's memory per idle subscriber. The subscribers live in this process: their own parsing is inside the figures.
// Then a reconnect storm (reconnect-storm.ts): --storm event-stream subscribers dropped at once
// while --storm-comments comments are written through two instances, reconnecting together with
// Last-Event-ID; on two fresh instances with the shipped defaults (the rate limit included).
//
//   npm run bench:subscriptions [-- --subscribers 1000,10000 --comments 20 --storm 1000 --storm-comments 200]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openSubscribers, type Subscriber, untilDelivered } from './deliveries.js'
import { build, machine, rssOf, startServe, stats, threadline } from './lib.js'
import { reconnectStorm, type StormResult } from './reconnect-storm.js'

const { values: args } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000,10000' },
    comments: { type: 'string', default: '20' },
    storm: { type: 'string', default: '1000' },
    'storm-comments': { type: 'string', default: '200' },
  },
})

async function main(): Promise<void> {
  build()
  const dir = join('bench', '.data')
  mkdirSync(dir, { recursive: true })
  const dbPath = join(dir, 'subscriptions.db')
  rmSync(dbPath, { force: true })
  const env = { DATABASE_URL: `sqlite:${dbPath}` }
  threadline(['migrate'], env)
  threadline(['seed', '--users', '10', '--posts', '10', '--comments', '0', '--todos', '0'], env)
  const token = threadline(['tokens', 'create', '--user', '2'], env).trim()
  const server = await startServe({
    ...env,
    RATE_LIMIT_MAX: '0',
    // Every subscriber comes from this one address: the per-caller bounds are lifted as for
    // 10,000 callers (the per-event ceiling, GRAPHQL_EVENT_MAX_DELIVERY_COST, stays at its default).
    GRAPHQL_MAX_CONNECTIONS_PER_CALLER: '1000000',
    GRAPHQL_SUBSCRIPTION_CALLER_COST: '1000000000',
    GRAPHQL_SUBSCRIPTION_DELIVERY_COST: '1000000000000',
    GRAPHQL_WS_KEEPALIVE_MS: '0',
  })
  const results = []
  try {
    for (const size of args.subscribers.split(',').map(Number)) {
      const before = rssOf(server.pid)
      const subscribers: Subscriber[] = []
      await openSubscribers(subscribers, server.url, '1', size)
      const comment = async (content: string) => {
        const response = await fetch(`${server.url}/api/v1/users/1/posts/1/comments`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ content }),
        })
        if (response.status !== 201) throw new Error(`comment: ${response.status}`)
        return performance.now()
      }
      // A first comment proves every subscription is live before anything is timed.
      await comment(`warm-up ${size}`)
      await untilDelivered(subscribers, `warm-up ${size}`, 30_000)
      const idleBytesPerSubscriber = (rssOf(server.pid) - before) / size

      const latencies: number[] = []
      const lasts: number[] = []
      let lost = 0
      for (let i = 0; i < Number(args.comments); i++) {
        const content = `comment ${size}.${i}`
        const created = await comment(content)
        await untilDelivered(subscribers, content, 10_000)
        const times = subscribers.map((s) => s.arrivals.get(content)).filter((t): t is number => t !== undefined)
        lost += size - times.length
        const delays = times.map((t) => t - created)
        latencies.push(...delays)
        lasts.push(Math.max(...delays))
      }
      const all = stats(latencies)
      const last = stats(lasts)
      const result = {
        subscribers: size,
        comments: Number(args.comments),
        deliveryMs: { p50: round(all.p50), p99: round(all.p99), lastP50: round(last.p50), lastP99: round(last.p99), lastMax: round(last.max) },
        lost,
        idleKiBPerSubscriber: Math.round(idleBytesPerSubscriber / 1024),
      }
      results.push(result)
      console.log(
        `${String(size).padStart(6)} subscribers: delivery p50 ${result.deliveryMs.p50} ms, p99 ${result.deliveryMs.p99} ms, ` +
          `last subscriber p50 ${result.deliveryMs.lastP50} ms, p99 ${result.deliveryMs.lastP99} ms (over ${args.comments} comments), ` +
          `lost ${lost}, ${result.idleKiBPerSubscriber} KiB of server memory per idle subscriber`,
      )
      for (const s of subscribers) s.socket.terminate()
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
  } finally {
    await server.stop()
  }

  // The storm: two instances on the same database, every setting at its default.
  const storm = Number(args.storm) > 0 ? await runStorm(env, token) : undefined
  mkdirSync(join('bench', 'results'), { recursive: true })
  writeFileSync(
    join('bench', 'results', 'subscriptions.json'),
    `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), results, ...(storm === undefined ? {} : { storm }) }, null, 2)}\n`,
  )
  console.log('written to bench/results/subscriptions.json')
}

const round = (ms: number) => Math.round(ms * 10) / 10

async function runStorm(env: Record<string, string>, token: string): Promise<StormResult> {
  const [subscribersOn, other] = await Promise.all([startServe(env), startServe(env)])
  try {
    const result = await reconnectStorm(
      subscribersOn,
      other,
      token,
      { userId: '2', id: '2' },
      { subscribers: Number(args.storm), comments: Number(args['storm-comments']) },
    )
    console.log(
      `reconnect storm: ${result.subscribers} event streams dropped, ${result.missedComments} comments written through 2 instances; ` +
        `${result.exact} of ${result.subscribers} received exactly what they missed, in order; ` +
        `streams open again p50 ${result.openedMs.p50} ms, p99 ${result.openedMs.p99} ms; ` +
        `caught up p50 ${result.caughtUpMs.p50} ms, p99 ${result.caughtUpMs.p99} ms, max ${result.caughtUpMs.max} ms; ` +
        `/health p50 ${result.healthMs.p50} ms, p99 ${result.healthMs.p99} ms (${result.healthMs.samples} probes)`,
    )
    return result
  } finally {
    await Promise.all([subscribersOn.stop(), other.stop()])
  }
}

await main()
