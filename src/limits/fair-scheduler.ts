// A work-conserving fair scheduler: callers queue separately, a global limit bounds the work running
// at once (its slots), and a slot that comes free goes to the waiting caller that has used the least
// handler time (start-time fair queuing over measured handler time, as Kubernetes' API Priority
// and Fairness queues per flow). A caller not measured yet is given one slot per loop turn until
// it releases one. Nothing holds a caller back while a slot is free: one caller alone runs at full
// speed; callers that contend each get an equal share of the running time.
//
// - Virtual time. Each caller carries a tag: the handler milliseconds it has been given. A free slot
//   goes to the waiting caller with the smallest tag; the tag is charged the caller's expected cost
//   when the slot is handed out and corrected by the measured one when it is released: its wall
//   time, less the loop time other callers' slow work took meanwhile (on SQLite a cheap request
//   handed out beside a slow one answers after it, and charged for that wait a light caller would
//   fall behind a greedy one: docs/architecture.md). The scheduler's virtual time is the tag of the
//   last slot handed out; a caller that comes (back) with nothing running starts there, so a
//   newcomer goes ahead of a greedy caller's backlog instead of behind it, and one that was away
//   does not bank the time it did not use. A caller gone idle keeps its tag for a second (sending
//   one request at a time earns nothing), then comes back as a newcomer.
// - Loop turns. Slots are handed out on a later turn of the event loop (setImmediate), so the
//   sockets are read (cheap) before the work starts (not cheap, and synchronous on SQLite), and
//   after a slot given to a caller whose last one was held past SLOW_HOLD_MS the next is handed out
//   a loop turn later: sockets are read between any two slow statements, and a request that
//   arrived meanwhile competes for the next slot.
// - The loop's work, across callers. Fairness between callers does not bound what all of them
//   together ask of the loop: 64 callers each sending one slow request would each be given a slot
//   in one loop turn. So while callers contend, one loop turn hands out slots whose expected costs
//   add up to at most TURN_BUDGET_MS (a caller not measured yet is expected to be slow; a caller
//   alone is not held to it, as it was not before), and the callers not measured
//   yet get one slot per loop turn between them (each of 200 addresses is new).
// - Load shed. When the loop's delay (loop-delay.ts) is past `shedLoopDelayMs` while work waits,
//   new work of callers whose work is slow (even its cheapest lately: Flow.floorMs), or not
//   measured yet, is refused SERVICE_UNAVAILABLE
//   (503) with a Retry-After until it catches up, whichever its queue (a WebSocket's operations
//   too); light callers' work still queues, and probes (which acquire no slot) are answered.
// - Bounds. Each caller may have `maxQueuedPerCaller` waiting; one more is refused with
//   RATE_LIMITED and a Retry-After. Work bounded where it comes from (a WebSocket's operations)
//   queues unbounded: it waits past that bound and is not counted against it.
import { AppError } from '../errors.js'

export interface FairSchedulerOptions {
  /** Work running at once, across all callers. */
  readonly concurrency: number
  /** Work of one caller waiting for a slot; one more is refused (RATE_LIMITED). */
  readonly maxQueuedPerCaller: number
  /** Milliseconds now; a test's clock. @default performance.now */
  readonly now?: () => number
  /** The event loop's delay now, in milliseconds (loop-delay.ts); absent, nothing is shed. */
  readonly loopDelayMs?: () => number
  /** The loop's delay past which waiting work of slow or new callers is shed (503). 0: never. @default 0 */
  readonly shedLoopDelayMs?: number
}

/**
 * Releases a slot; a second call does nothing. `unused`: no work was done in it (its client had
 * gone), so it says nothing of what the caller's work costs.
 */
export type ReleaseSlot = (unused?: boolean) => void

export interface FairScheduler {
  /** Waits for a slot for `callerKey`; resolves with the function that releases it. Rejects with RATE_LIMITED when the caller's queue is full. */
  acquire(callerKey: string, options?: AcquireOptions): Promise<ReleaseSlot>
  /** Runs `work` in a slot acquired for `callerKey`, released when it settles. */
  run<T>(callerKey: string, work: () => Promise<T>, options?: AcquireOptions): Promise<T>
  /** Slots held and requests waiting now, the callers remembered, and whether work is being shed. */
  load(): { running: number; waiting: number; callers: number; shedding: boolean }
}

export interface AcquireOptions {
  /**
   * 'bounded' (the default): refused RATE_LIMITED past `maxQueuedPerCaller` waiting. 'unbounded':
   * for work whose number is bounded where it comes from (the operations of a WebSocket, at most so
   * many per connection and connections per caller), which waits however many of its caller's do.
   */
  readonly queued?: 'bounded' | 'unbounded'
}

/** Seconds a caller refused for a full queue is told to wait: a slot is held for milliseconds. */
export const QUEUE_FULL_RETRY_AFTER_S = 1

/** A slot held longer than this makes its caller's next one start a loop turn apart from any other. */
export const SLOW_HOLD_MS = 10

/** The loop time the slots handed out in one loop turn are expected to take together, at most (one slot may take more). */
export const TURN_BUDGET_MS = 20

/** Seconds a caller whose work is shed is told to wait. */
export const SHED_RETRY_AFTER_S = 1

/** The cost a caller's first slot is charged before it is measured. */
const FIRST_ESTIMATE_MS = 1

/**
 * How long a caller with nothing running or waiting keeps its place (its tag, its slowness): one
 * sending a slow request at a time is still slow, and one that has just held a slot long does not
 * come back as a newcomer. After it, it comes back as one.
 */
const REMEMBERED_FOR_MS = 1000

/** Callers remembered past which those with nothing running or waiting are forgotten at once. */
const REMEMBERED_IDLE = 10_000

interface Flow {
  readonly key: string
  readonly waiting: { readonly start: (release: ReleaseSlot) => void; readonly bounded: boolean }[]
  /** Of `waiting`, those the caller's queue bound counts. */
  boundedWaiting: number
  running: number
  /** Handler milliseconds given, on the scheduler's virtual clock (the flow's start-time tag). */
  tag: number
  /** What its next slot is expected to cost: a running mean of the measured ones. */
  estimateMs: number
  /** It holds its slots longer than SLOW_HOLD_MS (by estimateMs). */
  slow: boolean
  /** It has released a slot: its cost is known. */
  measured: boolean
  /**
   * The least its slots cost lately: falls to a cheap slot's cost at once, and at most doubles with
   * each slot after it. A light caller's slots are now and then measured long while the loop is
   * busy with others' work (a cost that is not its own); a heavy caller's never cost little.
   */
  floorMs: number
  /** When it last released a slot (milliseconds, `now`). */
  endedAt: number
}

/** A slot handed out, until it is released. */
interface HeldSlot {
  readonly flow: Flow
  readonly startedAt: number
  /** The cost its flow's tag was charged when it was handed out; corrected when it is released. */
  readonly charged: number
  /** slowChunksMs when it was handed out: what grows beyond it was the loop held by slow work. */
  readonly othersAtStart: number
  /** Of that, the loop time of its own synchronous work, when it was slow. */
  ownMs: number
}

export function createFairScheduler(options: FairSchedulerOptions): FairScheduler {
  const { concurrency, maxQueuedPerCaller, loopDelayMs, shedLoopDelayMs = 0 } = options
  const now = options.now ?? (() => performance.now())
  const flows = new Map<string, Flow>()
  /** Flows with work waiting. */
  const backlogged = new Set<Flow>()
  let running = 0
  let waiting = 0
  let virtualTime = 0
  let handOutScheduled = false
  /** Loop milliseconds taken by the slow slots' synchronous work, in all (see HeldSlot.othersAtStart). */
  let slowChunksMs = 0
  /** The slow slot handed out last, whose synchronous work the next hand-out measures, and since when. */
  let chunk: { slot: HeldSlot; since: number } | undefined

  const scheduleHandOut = () => {
    if (handOutScheduled || waiting === 0 || running >= concurrency) return
    handOutScheduled = true
    setImmediate(handOut)
  }

  /** The waiting flow with the smallest tag; of the measured ones only, with `measuredOnly`. */
  const nextFlow = (measuredOnly: boolean): Flow | undefined => {
    let next: Flow | undefined
    for (const flow of backlogged) if ((next === undefined || flow.tag < next.tag) && (flow.measured || !measuredOnly)) next = flow
    return next
  }

  /** Past REMEMBERED_IDLE callers, those with nothing running or waiting are forgotten. */
  const forgetIdle = () => {
    if (flows.size <= REMEMBERED_IDLE) return
    for (const flow of flows.values()) if (flow.running === 0 && flow.waiting.length === 0) flows.delete(flow.key)
  }

  /**
   * Measures the slow slot handed out last: what ran since, on a later task of the loop, was its
   * synchronous work (and a poll of the sockets).
   */
  const closeChunk = () => {
    if (chunk === undefined) return
    const ms = now() - chunk.since
    slowChunksMs += ms
    chunk.slot.ownMs += ms
    chunk = undefined
  }

  function handOut() {
    handOutScheduled = false
    closeChunk()
    let unmeasured = false
    /** The loop time the slots handed out in this turn are expected to take. */
    let expectedMs = 0
    while (running < concurrency) {
      // A caller not measured yet might be slow: one such slot per loop turn, of all such callers
      // (until each releases one); the measured ones go on being served in the same turn.
      const flow = nextFlow(unmeasured)
      if (flow === undefined) break
      if (!flow.measured) unmeasured = true
      const { start, bounded } = flow.waiting.shift()!
      if (bounded) flow.boundedWaiting--
      waiting--
      if (flow.waiting.length === 0) backlogged.delete(flow)
      virtualTime = Math.max(virtualTime, flow.tag)
      const slot: HeldSlot = { flow, startedAt: now(), charged: flow.estimateMs, othersAtStart: slowChunksMs, ownMs: 0 }
      flow.tag = virtualTime + slot.charged
      flow.running++
      running++
      start(releaser(slot))
      if (flow.slow) {
        // Its work runs as soon as this callback returns; the next slot waits for the next loop
        // turn, which measures how long that work held the loop.
        chunk = { slot, since: now() }
        handOutScheduled = true
        setImmediate(handOut)
        return
      }
      expectedMs += flow.measured ? flow.estimateMs : SLOW_HOLD_MS
      // A caller alone is not held to the budget: nobody else waits on its turns.
      if (expectedMs >= TURN_BUDGET_MS && (backlogged.size > 1 || (backlogged.size === 1 && !backlogged.has(flow)))) break
    }
    scheduleHandOut()
  }

  const releaser = (slot: HeldSlot): ReleaseSlot => {
    let released = false
    return (unused = false) => {
      if (released) return
      released = true
      // A cheap slot handed out beside a slow one is often released in the poll right after it,
      // before the next hand-out has measured it.
      closeChunk()
      const { flow } = slot
      // Wall time, less what other callers' slow work held the loop meanwhile: on SQLite a cheap
      // request handed out beside a slow one ends after it, and would be charged for it.
      const costMs = Math.max(0, now() - slot.startedAt - (slowChunksMs - slot.othersAtStart - slot.ownMs))
      flow.tag += costMs - slot.charged
      if (!unused) {
        flow.estimateMs = (flow.estimateMs + costMs) / 2
        // By the running mean, not the last slot alone: one slot measured short (others' loop time
        // over-subtracted) let a caller of deep pages start several in one loop turn.
        flow.slow = flow.estimateMs > SLOW_HOLD_MS
        flow.floorMs = flow.measured ? Math.min(costMs, flow.floorMs * 2) : costMs
        flow.measured = true
      }
      flow.running--
      running--
      flow.endedAt = now()
      scheduleHandOut()
    }
  }

  /** The loop is behind: while work waits, slow and new callers' work is refused until it catches up. */
  const isShedding = () => shedLoopDelayMs > 0 && loopDelayMs !== undefined && loopDelayMs() > shedLoopDelayMs

  const acquire = (callerKey: string, { queued: queueing = 'bounded' }: AcquireOptions = {}): Promise<ReleaseSlot> => {
    let flow = flows.get(callerKey)
    if (flow === undefined) {
      forgetIdle()
      flow = {
        key: callerKey,
        waiting: [],
        boundedWaiting: 0,
        running: 0,
        tag: virtualTime,
        estimateMs: FIRST_ESTIMATE_MS,
        slow: false,
        measured: false,
        floorMs: FIRST_ESTIMATE_MS,
        endedAt: 0,
      }
      flows.set(callerKey, flow)
    } else if (flow.running === 0 && flow.waiting.length === 0) {
      if (now() - flow.endedAt > REMEMBERED_FOR_MS) {
        // Away long enough to start afresh.
        flow.tag = virtualTime
        flow.estimateMs = FIRST_ESTIMATE_MS
        flow.slow = false
        flow.measured = false
      } else {
        // Back from idle: time it did not use is not banked.
        flow.tag = Math.max(flow.tag, virtualTime)
      }
    }
    // Those the next hand-out will start anyway (free slots nobody else waits for) are not queued.
    const free = Math.max(0, concurrency - running - (waiting - flow.waiting.length))
    const bounded = queueing === 'bounded'
    if ((!flow.measured || flow.floorMs > SLOW_HOLD_MS) && waiting > 0 && isShedding()) {
      return Promise.reject(
        new AppError('SERVICE_UNAVAILABLE', `The server is behind on its work: retry in ${SHED_RETRY_AFTER_S} s.`, undefined, {
          retryAfterS: SHED_RETRY_AFTER_S,
        }),
      )
    }
    if (bounded && flow.boundedWaiting - free >= maxQueuedPerCaller) {
      return Promise.reject(
        new AppError(
          'RATE_LIMITED',
          `Too many requests at once: ${maxQueuedPerCaller} of a caller may wait for a turn. Retry in ${QUEUE_FULL_RETRY_AFTER_S} s.`,
          undefined,
          { retryAfterS: QUEUE_FULL_RETRY_AFTER_S },
        ),
      )
    }
    const queued = flow
    return new Promise((resolve) => {
      queued.waiting.push({ start: resolve, bounded })
      if (bounded) queued.boundedWaiting++
      waiting++
      backlogged.add(queued)
      scheduleHandOut()
    })
  }

  return {
    acquire,
    async run(callerKey, work, acquireOptions) {
      const release = await acquire(callerKey, acquireOptions)
      try {
        return await work()
      } finally {
        release()
      }
    },
    load: () => ({ running, waiting, callers: flows.size, shedding: isShedding() }),
  }
}
