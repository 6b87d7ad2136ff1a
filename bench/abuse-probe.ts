// bench:abuse's probe, on a thread of its own: GET /health and GET /api/v1/users/1 every 50 ms, open
// loop, each timed from when it was due (and with `graphql`, a small POST /graphql as often). On its
// own thread (its own event loop and heap), what it times is the server's answer, not the attacker's
// loop: in one thread with the attack, the probe's answers waited on the attacker's work (64 callers'
// answers of 180 KB each read and parsed) and /health read 1 s where the server's loop was late by
// at most 80 ms.
//
// startProbe (the attack's side) starts the thread; the thread runs runProbe until told to stop.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { setTimeout as sleep } from 'node:timers/promises'
import { Agent, request } from 'undici'
import { stats } from './lib.js'

export interface ProbeResult {
  p50: number
  p99: number
  max: number
  n: number
  statuses: Record<string, number>
}

export type Probes = Record<'health' | 'user', ProbeResult> & {
  graphql?: ProbeResult
  /** The loop delays the server's /health answers reported (a server that reports one): their p99 and max. */
  reportedLoopDelay?: { p99Ms: number; maxMs: number; n: number }
}

export interface ProbeOptions {
  url: string
  /** Times a small POST /graphql too. */
  graphql: boolean
  /** Where /health is asked from. */
  healthAddress: string
  /** Where /api/v1/users/1 is asked from, in turn (so that the probe stays inside the anonymous allowance). */
  userAddresses: readonly string[]
  /** Where POST /graphql is asked from, in turn. */
  graphqlAddresses: readonly string[]
  /** At most this many of each. */
  maxRequests: number
}

type Probed = 'health' | 'user' | 'graphql'

/** What a small POST /graphql of the probe asks. */
const PROBE_GRAPHQL = JSON.stringify({ query: '{ user(id: "1") { id name } }' })

const round = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? Number.NaN : Math.round(ms * 10) / 10)

/**
 * Starts the probe on a thread of its own, once the thread has asked each thing once from each of
 * its addresses (not timed: a new thread's first requests load and compile its modules, and open
 * its connections); `stop` ends it and gives its figures.
 */
export async function startProbe(options: ProbeOptions): Promise<{ stop(): Promise<Probes> }> {
  const url = new URL(import.meta.url).href
  // Under tsx, a worker loads TypeScript once tsx's loader is registered in it.
  const worker = new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}) })`, {
    eval: true,
    workerData: options,
  })
  const failed = new Promise<never>((_resolve, reject) => worker.once('error', reject))
  const next = <T>() => Promise.race([new Promise<T>((resolve) => worker.once('message', resolve)), failed])
  await next<'ready'>()
  const result = next<Probes>()
  return {
    async stop() {
      worker.postMessage('stop')
      const probes = await result
      await worker.terminate()
      return probes
    },
  }
}

/** The probe itself, on its thread: asks each thing once from each address, says 'ready', runs until the 'stop' message, then posts its figures. */
async function runProbe(options: ProbeOptions): Promise<void> {
  const { url, graphql } = options
  const health = new Agent({ localAddress: options.healthAddress, connections: 64 })
  const pool = options.userAddresses.map((address) => new Agent({ localAddress: address, connections: 16 }))
  const graphqlPool = graphql ? options.graphqlAddresses.map((address) => new Agent({ localAddress: address, connections: 16 })) : []
  const samples = { health: [] as number[], user: [] as number[], graphql: [] as number[] }
  const statuses = { health: {} as Record<string, number>, user: {} as Record<string, number>, graphql: {} as Record<string, number> }
  const count = (which: Probed, status: number | string) => {
    statuses[which][status] = (statuses[which][status] ?? 0) + 1
  }
  const reportedDelays: number[] = []
  /** Probes not answered yet, with when each was due. */
  const pending = new Map<Promise<void>, { which: Probed; due: number }>()
  let stopped = false
  let tick = 0
  const fire = (which: Probed, dispatcher: Agent, path: string) => {
    const due = performance.now()
    const probe: Promise<void> = request(
      `${url}${path}`,
      which === 'graphql' ? { dispatcher, method: 'POST', headers: { 'content-type': 'application/json' }, body: PROBE_GRAPHQL } : { dispatcher },
    )
      .then(async (response) => {
        if (which !== 'health') {
          await response.body.arrayBuffer()
          return response.statusCode
        }
        // A server that reports its loop's delay in /health: each figure kept.
        const body = (await response.body.json().catch(() => undefined)) as { loop?: { delayMs?: unknown } } | undefined
        if (typeof body?.loop?.delayMs === 'number') reportedDelays.push(body.loop.delayMs)
        return response.statusCode
      })
      .catch(() => 'error' as const)
      .then((status) => {
        // Given up at the stop: counted there already.
        if (stopped) return
        count(which, status)
        samples[which].push(performance.now() - due)
        pending.delete(probe)
      })
    pending.set(probe, { which, due })
  }
  const warm = async (dispatcher: Agent, path: string, post = false) => {
    const response = await request(
      `${url}${path}`,
      post ? { dispatcher, method: 'POST', headers: { 'content-type': 'application/json' }, body: PROBE_GRAPHQL } : { dispatcher },
    )
    await response.body.arrayBuffer()
  }
  // Each address once: its connection open, as a client's that calls again.
  await warm(health, '/health')
  for (const agent of pool) await warm(agent, '/api/v1/users/1')
  for (const agent of graphqlPool) await warm(agent, '/graphql', true)
  parentPort?.postMessage('ready')
  const timer = setInterval(() => {
    if (tick++ > options.maxRequests) return
    fire('health', health, '/health')
    fire('user', pool[tick % pool.length] as Agent, '/api/v1/users/1')
    if (graphql) fire('graphql', graphqlPool[tick % graphqlPool.length] as Agent, '/graphql')
  }, 50)
  const stop = async (): Promise<Probes> => {
    clearInterval(timer)
    // Those still waiting get a moment, then are given up: each counts as long as it waited
    // (a lower bound of its answer time), and its connection is dropped without waiting.
    const deadline = Date.now() + 2000
    while (pending.size > 0 && Date.now() < deadline) await sleep(20)
    stopped = true
    const now = performance.now()
    for (const { which, due } of pending.values()) {
      count(which, 'unanswered')
      samples[which].push(now - due)
    }
    for (const agent of [health, ...pool, ...graphqlPool]) void agent.destroy().catch(() => undefined)
    const result = (which: Probed): ProbeResult => {
      const s = stats(samples[which])
      return { p50: round(s.p50), p99: round(s.p99), max: round(s.max), n: s.n, statuses: statuses[which] }
    }
    const reported = reportedDelays.length > 0 ? stats(reportedDelays) : undefined
    return {
      health: result('health'),
      user: result('user'),
      ...(graphql ? { graphql: result('graphql') } : {}),
      ...(reported === undefined ? {} : { reportedLoopDelay: { p99Ms: round(reported.p99), maxMs: round(reported.max), n: reported.n } }),
    }
  }
  parentPort?.once('message', () => void stop().then((probes) => parentPort?.postMessage(probes)))
}

if (!isMainThread && workerData !== null && typeof workerData === 'object' && 'healthAddress' in workerData) await runProbe(workerData as ProbeOptions)
