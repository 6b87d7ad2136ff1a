// A work-conserving fair scheduler: callers queue separately, a global limit bounds the work running
// at once (its slots), and a slot that comes free goes to the waiting caller whose next slot would
// end first on a virtual clock of handler time (self-clocked fair queuing over measured handler
// time, as Kubernetes' API Priority and Fairness queues per flow). Nothing holds a caller back while
// a slot is free: one caller alone runs at full speed; callers that contend each get an equal
// share of the running time, and a light caller is not kept waiting for one slot of each heavy one.
//
// - Virtual time. Each caller carries a tag: the handler milliseconds it has been given, where its
//   next slot starts. A free slot goes to the waiting caller whose tag plus expected cost is the
//   smallest; the tag is charged the expected cost when the slot is handed out and corrected by
//   the measured one when it is released. The scheduler's virtual time is the largest tag handed
//   out; a caller that comes (back) with nothing running starts there, so a newcomer goes ahead of
//   a greedy caller's backlog instead of behind it, and one that was away does not bank the time
//   it did not use. A caller gone idle keeps its tag for a second (sending one request at a time
//   earns nothing), then comes back as a newcomer.
// - What a slot costs. Its wall time, less the loop time of others' slow work meanwhile (on SQLite
//   a cheap request begun beside a deep page may answer after it; charged for that wait, a light
//   caller would fall behind a greedy one, and with 64 greedy callers wait for a slot of each:
//   docs/decisions/0014-fair-scheduler.md). So the slot of a slow caller, or one expected slow, begins on a task of
//   its own (setImmediate): its continuation and the microtasks it queues run before the next task,
//   and the time until then, its first stretch of synchronous work (on SQLite, nearly all of it),
//   is timed alone. Cheap slots begin together, at once. On PostgreSQL the wall time holds the waits
//   on the pool and the network too, so the global limit shares the pool the same way.
// - Expected costs. A measured caller's next slot is expected to cost the running mean of its
//   own. A caller not measured yet is expected to cost what its kind of work (the route) has cost
//   lately, whoever asked for it, or, for work nothing is known of, to be slow (UNKNOWN_COST_MS):
//   a new caller asking for one user is not taken for one asking for deep pages with embeds.
// - Loop turns. Slots are handed out on a later turn of the event loop, so the sockets are read
//   (cheap) before the work starts (not cheap, and synchronous on SQLite). While callers contend,
//   one loop turn hands out slots whose expected costs add up to at most TURN_BUDGET_MS (64 callers
//   each sending one slow request would otherwise each be given a slot in one turn; a caller alone
//   is not held to it). A slot of a slow caller (one whose slots take longer than SLOW_HOLD_MS), or
//   one expected slow, ends its turn: sockets are read between any two slow statements, a request
//   that arrived meanwhile competes for the next slot, and callers not measured yet whose work is
//   expected slow get one slot per turn between them (each of 200 rotating addresses is new).
//   A slot released during a turn goes at once to the work whose turn is next (its request read
//   already), within the same budget, when that work is quick: waiting a loop turn for each freed
//   slot kept PostgreSQL's connections idle for that turn, and cost the requests that waited CPU.
// - Load shed. When the loop's delay (loop-delay.ts) is past `shedLoopDelayMs` while work waits,
//   new work of callers whose work is slow (even its cheapest lately: Flow.floorMs), or, not
//   measured yet, expected slow, is refused SERVICE_UNAVAILABLE (503) with a Retry-After until it
//   catches up, whichever its queue (a WebSocket's operations too); light callers' work still
//   queues, and probes (which acquire no slot) are answered.
// - Slots for slow work. Work that is slow (its caller's, or expected to be) holds at most
//   `slowConcurrency` of the slots; the others go to quick work only. On PostgreSQL that is the
//   pool's size of twice as many slots: a quick request's statement then never waits for a
//   connection behind a slow caller's queued statements, while quick requests keep the loop busy
//   beside the statements in PostgreSQL (docs/decisions/0071-in-flight-twice-the-pool.md).
// - Bounds. Each caller may have `maxQueuedPerCaller` waiting; one more is refused with
//   RATE_LIMITED and a Retry-After. Work bounded where it comes from (a WebSocket's operations)
//   queues unbounded: it waits past that bound and is not counted against it.
import { AppError } from '../errors.js'

export interface FairSchedulerOptions {
  /** Work running at once, across all callers. */
  readonly concurrency: number
  /** Of `concurrency`, the slots slow work may hold at once; the others go to quick work only. @default concurrency */
  readonly slowConcurrency?: number
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
  /**
   * What kind of work it is (a route: method and path pattern). A caller not measured yet is
   * expected to cost what this kind of work has cost lately, whoever asked for it: its first
   * request is judged by what it asks, not taken for slow. Absent: expected slow.
   */
  readonly kind?: string
}

/** Seconds a caller refused for a full queue is told to wait: a slot is held for milliseconds. */
export const QUEUE_FULL_RETRY_AFTER_S = 1

/** A slot held longer than this makes its caller's next one start a loop turn apart from any other. */
export const SLOW_HOLD_MS = 10

/**
 * The most a slot may be expected to take for a freed slot to go to it at once, in the same loop
 * turn. Work that takes longer (a caller's pages of 8 or 9 ms each, as in `bench:abuse`'s
 * contention) waits for the next hand-out, a loop turn later, so that two of its statements never
 * run without the sockets read between them.
 */
const QUICK_HOLD_MS = SLOW_HOLD_MS / 2

/** The loop time the slots handed out in one loop turn are expected to take together, at most (one slot may take more). */
export const TURN_BUDGET_MS = 20

/** Seconds a caller whose work is shed is told to wait. */
export const SHED_RETRY_AFTER_S = 1

/** A caller's estimate and floor until it is measured (its first slot is expected to cost what its kind of work does), and the least a floor doubles from. */
const FIRST_ESTIMATE_MS = 1

/** What work nothing is known of is expected to cost: slow. */
const UNKNOWN_COST_MS = 2 * SLOW_HOLD_MS

/**
 * How long a caller with nothing running or waiting keeps its place (its tag, its slowness): one
 * sending a slow request at a time is still slow, and one that has just held a slot long does not
 * come back as a newcomer. After it, it comes back as one.
 */
const REMEMBERED_FOR_MS = 1000

/** Callers remembered past which those with nothing running or waiting are forgotten at once. */
const REMEMBERED_IDLE = 10_000

/** Kinds of work whose cost is remembered, at most (routes are a few dozen). */
const REMEMBERED_KINDS = 1000

/** A kind's running mean moves by 1/KIND_WEIGHT of the gap to each new cost: many callers' slots, one mean. */
const KIND_WEIGHT = 8

/** Work waiting for a slot. */
interface Waiter {
  readonly start: (release: ReleaseSlot) => void
  readonly bounded: boolean
  readonly kind: string | undefined
}

interface Flow {
  readonly key: string
  readonly waiting: Waiter[]
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
  /** When its work began (milliseconds, `now`). */
  startedAt: number
  /** The cost its flow's tag was charged when it was handed out; corrected when it is released. */
  readonly charged: number
  /** The kind of work it was handed out for. */
  readonly kind: string | undefined
  /** It was handed out for slow work (slowWork): it holds one of the slots slow work may hold. */
  readonly slow: boolean
  /** measuredMs when its work began: what grows beyond it, less its own, was the loop held by others' slow work. */
  othersAtStart: number
  /** Of that, the loop time of its own first stretch of synchronous work, when it was slow. */
  ownMs: number
}

/** What the parts of one scheduler share: its callers, the work waiting and running, its virtual time. */
interface SchedulerState {
  readonly flows: Map<string, Flow>
  /** Flows with work waiting. */
  readonly backlogged: Set<Flow>
  /** Slots held. */
  running: number
  /** Of those, the slots held for slow work. */
  runningSlow: number
  /** Work waiting, across all flows. */
  waiting: number
  /** The largest tag handed out: where a caller that comes (back) with nothing running starts. */
  virtualTime: number
}

/**
 * The scheduler, composed of its parts: the callers' queues (flowOf, enqueue, dequeue), the
 * admission decision (createAdmission, with createLoadShed), the hand-out of slots in loop turns
 * (createHandOut, createSlotStarts) and the accounting of what slots cost (charge and settle on the
 * virtual clock, createSlotTimer for loop time, createCostEstimates for what is expected).
 */
export function createFairScheduler(options: FairSchedulerOptions): FairScheduler {
  const now = options.now ?? (() => performance.now())
  const state: SchedulerState = { flows: new Map(), backlogged: new Set(), running: 0, runningSlow: 0, waiting: 0, virtualTime: 0 }
  const costs = createCostEstimates()
  const timer = createSlotTimer(now)
  const isShedding = createLoadShed(options)
  const refusalOf = createAdmission(state, options, costs, isShedding)
  const scheduleHandOut = createHandOut(state, options, costs, timer, now)

  const acquire = (callerKey: string, { queued: queueing = 'bounded', kind }: AcquireOptions = {}): Promise<ReleaseSlot> => {
    const flow = flowOf(state, callerKey, now)
    const bounded = queueing === 'bounded'
    const refusal = refusalOf(flow, kind, bounded)
    if (refusal !== undefined) return Promise.reject(refusal)
    return new Promise((resolve) => {
      enqueue(state, flow, { start: resolve, bounded, kind })
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
    load: () => ({ running: state.running, waiting: state.waiting, callers: state.flows.size, shedding: isShedding() }),
  }
}

/**
 * The flow of `callerKey`: a new one, starting at the virtual time, or the one remembered, brought
 * back to the virtual time if it was idle (or started afresh, if it was away long).
 */
function flowOf(state: SchedulerState, callerKey: string, now: () => number): Flow {
  const { flows, virtualTime } = state
  const flow = flows.get(callerKey)
  if (flow === undefined) {
    forgetIdle(flows)
    const created: Flow = {
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
    flows.set(callerKey, created)
    return created
  }
  if (flow.running === 0 && flow.waiting.length === 0) {
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
  return flow
}

/** Past REMEMBERED_IDLE callers, those with nothing running or waiting are forgotten. */
function forgetIdle(flows: Map<string, Flow>): void {
  if (flows.size <= REMEMBERED_IDLE) return
  for (const flow of flows.values()) if (flow.running === 0 && flow.waiting.length === 0) flows.delete(flow.key)
}

/** Puts work in its caller's queue. */
function enqueue(state: SchedulerState, flow: Flow, waiter: Waiter): void {
  flow.waiting.push(waiter)
  if (waiter.bounded) flow.boundedWaiting++
  state.waiting++
  state.backlogged.add(flow)
}

/** Takes the first work out of its caller's queue. */
function dequeue(state: SchedulerState, flow: Flow): Waiter {
  const waiter = flow.waiting.shift()!
  if (waiter.bounded) flow.boundedWaiting--
  state.waiting--
  if (flow.waiting.length === 0) state.backlogged.delete(flow)
  return waiter
}

/**
 * The waiting flow whose next slot would end first on the virtual clock: its tag (where its next
 * slot starts) plus what that slot is expected to cost (expectedOf). The shares are those of
 * ordering by start tags; a light caller goes ahead of heavy ones that started no later, instead
 * of waiting for one slot of each.
 */
function nextFlow(backlogged: ReadonlySet<Flow>, expectedOf: CostEstimates['expectedOf'], quickOnly: boolean): Flow | undefined {
  let next: Flow | undefined
  let nextEnd = Number.POSITIVE_INFINITY
  for (const flow of backlogged) {
    const expected = expectedOf(flow, flow.waiting[0]!.kind)
    if (quickOnly && slowWork(flow, expected)) continue
    const end = flow.tag + expected
    // Of two that would end together, the one that started earlier.
    if (end < nextEnd || (end === nextEnd && flow.tag < next!.tag)) {
      next = flow
      nextEnd = end
    }
  }
  return next
}

/** Work of `flow` expected to take `expected` ms is slow work: its caller's slots are held long, or this one is expected to be. */
const slowWork = (flow: Flow, expected: number): boolean => flow.slow || expected > SLOW_HOLD_MS

/** The loop is behind: while work waits, slow and new callers' work is refused until it catches up. */
function createLoadShed({ loopDelayMs, shedLoopDelayMs = 0 }: FairSchedulerOptions): () => boolean {
  return () => shedLoopDelayMs > 0 && loopDelayMs !== undefined && loopDelayMs() > shedLoopDelayMs
}

/**
 * The admission decision for work about to queue: SERVICE_UNAVAILABLE when it is slow work and the
 * loop is behind (load shed), RATE_LIMITED when its caller's queue is full; undefined, it queues.
 */
function createAdmission(
  state: SchedulerState,
  { concurrency, maxQueuedPerCaller }: FairSchedulerOptions,
  costs: CostEstimates,
  isShedding: () => boolean,
): (flow: Flow, kind: string | undefined, bounded: boolean) => AppError | undefined {
  return (flow, kind, bounded) => {
    // Those the next hand-out will start anyway (free slots nobody else waits for) are not queued.
    const free = Math.max(0, concurrency - state.running - (state.waiting - flow.waiting.length))
    // Slow: even its cheapest slot lately was (a light caller is now and then measured long), or,
    // not measured yet, its kind of work is.
    const slow = flow.measured ? flow.floorMs > SLOW_HOLD_MS : costs.expectedOf(flow, kind) > SLOW_HOLD_MS
    if (slow && state.waiting > 0 && isShedding()) {
      return new AppError('SERVICE_UNAVAILABLE', `The server is behind on its work: retry in ${SHED_RETRY_AFTER_S} s.`, undefined, {
        retryAfterS: SHED_RETRY_AFTER_S,
      })
    }
    if (bounded && flow.boundedWaiting - free >= maxQueuedPerCaller) {
      return new AppError(
        'RATE_LIMITED',
        `Too many requests at once: ${maxQueuedPerCaller} of a caller may wait for a turn. Retry in ${QUEUE_FULL_RETRY_AFTER_S} s.`,
        undefined,
        { retryAfterS: QUEUE_FULL_RETRY_AFTER_S },
      )
    }
    return undefined
  }
}

/**
 * Hands out slots: returns the function that schedules a hand-out on a later loop turn (when work
 * waits and a slot is free). A slot released during a turn goes to the next waiting work at once,
 * in the same turn, while the turn's budget lasts and that work is quick. Each slot is charged
 * its expected cost when it is handed out, and its measured one when it is released.
 */
function createHandOut(
  state: SchedulerState,
  { concurrency, slowConcurrency = concurrency }: FairSchedulerOptions,
  costs: CostEstimates,
  timer: SlotTimer,
  now: () => number,
): () => void {
  let handOutScheduled = false
  /** The next work to be given a slot; only quick work while slow work holds every slot it may. */
  const next = () => nextFlow(state.backlogged, costs.expectedOf, state.runningSlow >= slowConcurrency)
  /** The loop time the slots handed out since the last scheduled hand-out (which begins a turn) are expected to take. */
  let turnMs = 0

  const scheduleHandOut = () => {
    if (handOutScheduled || state.waiting === 0 || state.running >= concurrency) return
    handOutScheduled = true
    setImmediate(handOut)
  }
  const { begin, beginAlone } = createSlotStarts(state, costs, timer, now, handOutFreed)

  /** Others wait besides `flow`: the turn's budget holds (a caller alone is not held to it, nobody else waits on its turns). */
  const othersWait = (flow: Flow) => {
    const { backlogged } = state
    return backlogged.size > 1 || (backlogged.size === 1 && !backlogged.has(flow))
  }

  /**
   * One loop turn's slots, begun at once, in the order chosen; a slot of a slow caller, or one
   * expected slow, ends the turn and is begun alone on the next loop turn, then the next hand-out
   * (which ends its stretch).
   */
  function handOut() {
    timer.closeStretch()
    turnMs = 0
    while (state.running < concurrency) {
      const flow = next()
      // What waits is slow work, and it holds every slot it may: the release of one hands out again.
      if (flow === undefined) {
        handOutScheduled = false
        return
      }
      const waiter = dequeue(state, flow)
      const expected = costs.expectedOf(flow, waiter.kind)
      const slot = charge(state, flow, waiter.kind, expected)
      if (slot.slow) {
        // The sockets are read before it, and between any two slow statements; callers not
        // measured yet whose work is expected slow get one slot per turn between them.
        setImmediate(beginAlone, slot, waiter.start)
        setImmediate(handOut)
        return
      }
      begin(slot, waiter.start)
      turnMs += expected
      if (turnMs >= TURN_BUDGET_MS && othersWait(flow)) break
    }
    handOutScheduled = false
    scheduleHandOut()
  }

  /**
   * A slot was released: the work whose turn is next begins at once, in the turn still running
   * (its request was read already), if it is quick (QUICK_HOLD_MS) and the turn's budget is not
   * spent; then the next hand-out, a loop turn later, gives it its slot (docs/performance.md has
   * what waiting a loop turn for each freed slot cost).
   */
  function handOutFreed() {
    // A hand-out is on its way (and a slow slot's first stretch may be running alone).
    if (handOutScheduled || state.waiting === 0 || state.running >= concurrency) return
    const flow = next()
    if (flow === undefined) return
    const expected = costs.expectedOf(flow, flow.waiting[0]!.kind)
    // The budget holds a caller alone too: a scheduled hand-out gives it at most every slot, but
    // freed slots handed on would run its whole queue in one turn, the sockets unread meanwhile.
    if (expected > QUICK_HOLD_MS || turnMs + expected > TURN_BUDGET_MS) return scheduleHandOut()
    const waiter = dequeue(state, flow)
    begin(charge(state, flow, waiter.kind, expected), waiter.start)
    turnMs += expected
  }

  return scheduleHandOut
}

/** How a slot handed out begins its work, and what its release does: settle it, learn its cost, hand out again. */
function createSlotStarts(state: SchedulerState, costs: CostEstimates, timer: SlotTimer, now: () => number, handOutFreed: () => void) {
  const releaser = (slot: HeldSlot): ReleaseSlot => {
    let released = false
    return (unused = false) => {
      if (released) return
      released = true
      const costMs = timer.costOf(slot)
      settle(state, slot, costMs, now)
      // A slot whose client had gone says nothing of what its caller's work costs.
      if (!unused) costs.record(slot.flow, slot.kind, costMs)
      handOutFreed()
    }
  }

  /** Begins a slot's work: its continuation runs once the current task's callback returns. */
  const begin = (slot: HeldSlot, start: (release: ReleaseSlot) => void) => {
    timer.begin(slot)
    start(releaser(slot))
  }

  /** Begins a slow slot's work on a task of its own, its first stretch timed alone (SlotTimer). */
  const beginAlone = (slot: HeldSlot, start: (release: ReleaseSlot) => void) => {
    timer.closeStretch()
    begin(slot, start)
    timer.openStretch(slot)
  }

  return { begin, beginAlone }
}

/** Hands `flow` a slot: its tag is charged what the slot is expected to cost, corrected by settle; slow work's counted as such. */
function charge(state: SchedulerState, flow: Flow, kind: string | undefined, expected: number): HeldSlot {
  state.virtualTime = Math.max(state.virtualTime, flow.tag)
  const slow = slowWork(flow, expected)
  const slot: HeldSlot = { flow, startedAt: 0, charged: expected, kind, slow, othersAtStart: 0, ownMs: 0 }
  flow.tag += slot.charged
  flow.running++
  state.running++
  if (slow) state.runningSlow++
  return slot
}

/** Takes a slot back: its flow's tag is corrected from the cost it was charged to the one measured. */
function settle(state: SchedulerState, slot: HeldSlot, costMs: number, now: () => number): void {
  const { flow } = slot
  flow.tag += costMs - slot.charged
  flow.running--
  state.running--
  if (slot.slow) state.runningSlow--
  flow.endedAt = now()
}

/** What slots are expected to cost, learnt from what they measured. */
interface CostEstimates {
  /**
   * What the next slot of `flow` is expected to cost: its own running mean once it is measured;
   * before, what the kind of work it waits with has cost lately (for a kind not measured yet, or
   * none, UNKNOWN_COST_MS: it might be slow).
   */
  readonly expectedOf: (flow: Flow, kind: string | undefined) => number
  /** Learns from a slot's measured cost: its kind's running mean, its flow's estimate, slowness and floor. */
  readonly record: (flow: Flow, kind: string | undefined, costMs: number) => void
}

function createCostEstimates(): CostEstimates {
  /** What each kind of work has cost lately (a running mean), whoever asked. */
  const kinds = new Map<string, number>()
  return {
    expectedOf: (flow, kind) => (flow.measured ? flow.estimateMs : ((kind === undefined ? undefined : kinds.get(kind)) ?? UNKNOWN_COST_MS)),
    record: (flow, kind, costMs) => {
      if (kind !== undefined) {
        const kindMs = kinds.get(kind)
        if (kindMs === undefined && kinds.size >= REMEMBERED_KINDS) kinds.clear()
        kinds.set(kind, kindMs === undefined ? costMs : kindMs + (costMs - kindMs) / KIND_WEIGHT)
      }
      // A caller's first cost replaces the estimate it was given before (its kind's, or none).
      flow.estimateMs = flow.measured ? (flow.estimateMs + costMs) / 2 : costMs
      // By the running mean, not the last slot alone: one slot measured short let a caller of
      // deep pages start several in one loop turn.
      flow.slow = flow.estimateMs > SLOW_HOLD_MS
      flow.floorMs = flow.measured ? Math.min(costMs, Math.max(flow.floorMs * 2, FIRST_ESTIMATE_MS)) : costMs
      flow.measured = true
    },
  }
}

/**
 * What a slot cost in loop time. A slow slot begins on a task of its own: its continuation (and the
 * microtasks it queues) runs before the next task, so the time until then is its first stretch of
 * synchronous work (on SQLite, nearly all of it), timed alone; a slot is charged its wall time less
 * the stretches of others while it ran.
 */
interface SlotTimer {
  /** Ends the running stretch: what ran since it began was its slot's synchronous work. */
  readonly closeStretch: () => void
  /** Marks the start of a slot's work. */
  readonly begin: (slot: HeldSlot) => void
  /** Times the first stretch of a slot's work, begun just now, as its own. */
  readonly openStretch: (slot: HeldSlot) => void
  /** What a slot being released cost: its wall time, less the loop time of others' stretches meanwhile. */
  readonly costOf: (slot: HeldSlot) => number
}

function createSlotTimer(now: () => number): SlotTimer {
  /** Loop milliseconds taken by the slow slots' first stretches of synchronous work, in all (see HeldSlot.othersAtStart). */
  let measuredMs = 0
  /** The slow slot whose first stretch of synchronous work is running, and since when. */
  let stretch: { slot: HeldSlot; since: number } | undefined

  const closeStretch = () => {
    if (stretch === undefined) return
    const ms = now() - stretch.since
    measuredMs += ms
    stretch.slot.ownMs += ms
    stretch = undefined
  }

  return {
    closeStretch,
    begin: (slot) => {
      slot.startedAt = now()
      slot.othersAtStart = measuredMs
    },
    openStretch: (slot) => {
      stretch = { slot, since: slot.startedAt }
    },
    costOf: (slot) => {
      // Released within its first stretch (a request answered in one synchronous run, as on
      // SQLite): the stretch ends here.
      if (stretch?.slot === slot) closeStretch()
      // Wall time, less the loop time of others' work meanwhile: on SQLite a cheap request begun
      // beside a slow one may end after it, and would be charged for it.
      return Math.max(0, now() - slot.startedAt - (measuredMs - slot.othersAtStart - slot.ownMs))
    },
  }
}
