// The fair scheduler on its own, on a clock the test moves: handler time is whatever the test says
// a slot was held for, so the shares are exact (the one test of what a slot's work costs runs its
// slots on the real loop's turns, still on the test's clock).
import { describe, expect, it } from 'vitest'
import { createFairScheduler, type ReleaseSlot, SHED_RETRY_AFTER_S, TURN_BUDGET_MS } from '../../src/limits/fair-scheduler.js'

/** A scheduler on a test clock, and the slots it has handed out, in order, each with its caller. */
function scheduled(concurrency: number, maxQueuedPerCaller = 1000, shed?: { loopDelayMs: () => number; shedLoopDelayMs: number }, slowConcurrency?: number) {
  let clock = 0
  const scheduler = createFairScheduler({
    concurrency,
    maxQueuedPerCaller,
    now: () => clock,
    ...shed,
    ...(slowConcurrency === undefined ? {} : { slowConcurrency }),
  })
  const started: { caller: string; release: ReleaseSlot }[] = []
  const waiters: (() => void)[] = []
  const ask = (caller: string, kind?: string) => {
    const asked = scheduler.acquire(caller, { kind }).then((release) => {
      started.push({ caller, release })
      waiters.splice(0).forEach((wake) => wake())
      return release
    })
    asked.catch(() => undefined)
    return asked
  }
  /** Resolves once `n` slots have been handed out in all. */
  const startedCount = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (started.length >= n ? resolve() : waiters.push(check))
      check()
    })
  const spend = (ms: number) => {
    clock += ms
  }
  /** One request of `caller` (of `kind`), given its slot and released after `ms`: the scheduler has measured it once. */
  const measureOnce = async (caller: string, ms: number, kind?: string) => {
    const n = started.length + 1
    void ask(caller, kind)
    await startedCount(n)
    spend(ms)
    started[n - 1]!.release()
  }
  return { scheduler, started, ask, startedCount, spend, measureOnce }
}

describe('the fair scheduler', () => {
  it('gives a caller alone every slot at once, up to the global limit', async () => {
    const s = scheduled(8)
    for (let i = 0; i < 10; i++) void s.ask('alone')
    await s.startedCount(8)
    expect(s.scheduler.load()).toEqual({ running: 8, waiting: 2, callers: 1, shedding: false })
    s.started[0]!.release()
    await s.startedCount(9)
    expect(s.scheduler.load().running).toBe(8)
  })

  it('gives two greedy callers equal handler time, however long each one holds its slots', async () => {
    const s = scheduled(1)
    const costs: Record<string, number> = { long: 20, short: 5 }
    const given: Record<string, number> = { long: 0, short: 0 }
    for (let i = 0; i < 200; i++) {
      void s.ask('long')
      void s.ask('short')
    }
    for (let n = 1; n <= 200; n++) {
      await s.startedCount(n)
      const slot = s.started[n - 1]!
      s.spend(costs[slot.caller]!)
      given[slot.caller]! += costs[slot.caller]!
      slot.release()
    }
    // 200 slots: 40 long ones (800 ms) and 160 short ones (800 ms), give or take one.
    expect(Math.abs(given['long']! - given['short']!)).toBeLessThanOrEqual(20)
  })

  it('lets slow work hold only its share of the slots, and gives the others to quick work', async () => {
    const s = scheduled(4, 1000, undefined, 2)
    const turns = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
    }
    const running = () => s.started.slice(2).filter((slot) => !released.has(slot.release))
    const released = new Set<ReleaseSlot>()
    const release = (slot: { release: ReleaseSlot }) => {
      released.add(slot.release)
      slot.release()
    }
    await s.measureOnce('slow', 50)
    await s.measureOnce('quick', 1)
    for (let i = 0; i < 6; i++) void s.ask('slow')
    await turns(10)
    // Two slow slots, however many turns pass: the other two wait for quick work.
    expect(running().map((slot) => slot.caller)).toEqual(['slow', 'slow'])
    expect(s.scheduler.load()).toMatchObject({ running: 2, waiting: 4 })
    for (let i = 0; i < 3; i++) void s.ask('quick')
    await turns(10)
    expect(running().map((slot) => slot.caller)).toEqual(['slow', 'slow', 'quick', 'quick'])
    // A quick slot comes free: the quick work waiting takes it, not the slow work before it.
    const firstQuick = running()[2]!
    s.spend(1)
    release(firstQuick)
    await turns(10)
    expect(running().map((slot) => slot.caller)).toEqual(['slow', 'slow', 'quick', 'quick'])
    expect(s.scheduler.load()).toMatchObject({ running: 4, waiting: 4 })
    // A slow slot comes free: the slow work waiting takes it.
    s.spend(50)
    release(running()[0]!)
    await turns(10)
    expect(running().map((slot) => slot.caller)).toEqual(['slow', 'quick', 'quick', 'slow'])
    // Quick work gone, slow work still holds only its share.
    for (const slot of running().filter((slot) => slot.caller === 'quick')) release(slot)
    await turns(10)
    expect(running().map((slot) => slot.caller)).toEqual(['slow', 'slow'])
    expect(s.scheduler.load()).toMatchObject({ running: 2, waiting: 3 })
  })

  it('serves a newcomer ahead of a greedy caller’s backlog', async () => {
    const s = scheduled(1)
    for (let i = 0; i < 40; i++) void s.ask('greedy')
    await s.startedCount(1)
    s.spend(30)
    s.started[0]!.release()
    await s.startedCount(2)
    // The newcomer asks while the greedy caller's second request runs, 39 of its requests waiting.
    void s.ask('newcomer')
    s.spend(30)
    s.started[1]!.release()
    await s.startedCount(3)
    expect(s.started[2]!.caller).toBe('newcomer')
  })

  it('does not let a caller that went idle bank the time it did not use', async () => {
    const s = scheduled(1)
    for (let i = 0; i < 20; i++) void s.ask('busy')
    // The other caller used one slot long ago, then went away while the busy one worked.
    void s.ask('away')
    for (let n = 1; n <= 12; n++) {
      await s.startedCount(n)
      s.spend(10)
      s.started[n - 1]!.release()
    }
    // Back with five at once: they share with the busy caller's backlog instead of all going first.
    for (let i = 0; i < 5; i++) void s.ask('away')
    for (let n = 13; n <= 18; n++) {
      await s.startedCount(n)
      s.spend(10)
      s.started[n - 1]!.release()
    }
    const order = s.started.slice(12, 18).map((slot) => slot.caller)
    expect(order.filter((caller) => caller === 'busy').length).toBeGreaterThanOrEqual(2)
  })

  it('refuses one more than a caller’s queue holds with RATE_LIMITED and a Retry-After, and serves another caller', async () => {
    const s = scheduled(1, 2)
    for (let i = 0; i < 3; i++) void s.ask('full')
    await s.startedCount(1)
    await expect(s.ask('full')).rejects.toMatchObject({ code: 'RATE_LIMITED', retryAfterS: 1 })
    void s.ask('other')
    s.spend(10)
    s.started[0]!.release()
    await s.startedCount(2)
    expect(s.started[1]!.caller).toBe('other')
  })

  it('queues unbounded requests for a slot past a caller’s bound without counting them against it', async () => {
    const s = scheduled(1, 2)
    void s.ask('caller')
    await s.startedCount(1)
    const unbounded = Array.from({ length: 5 }, () => s.scheduler.acquire('caller', { queued: 'unbounded' }))
    // The bound still holds two of the caller's bounded requests, and refuses the third.
    void s.ask('caller')
    void s.ask('caller')
    await expect(s.ask('caller')).rejects.toMatchObject({ code: 'RATE_LIMITED' })
    expect(s.scheduler.load()).toMatchObject({ running: 1, waiting: 7 })
    s.started[0]!.release()
    const first = await unbounded[0]!
    first()
    for (const release of unbounded.slice(1)) (await release)()
    // The caller's two bounded requests: one given the slot the last unbounded one freed, one waiting.
    expect(s.scheduler.load()).toMatchObject({ running: 1, waiting: 1 })
  })

  it('gives a freed slot to the next waiting work in the same loop turn, unless that work is slow', async () => {
    const s = scheduled(1)
    const microtasks = async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve()
    }
    // Measured light (1 ms a request) and slow (30 ms).
    for (const [caller, ms] of [
      ['light', 1],
      ['slow', 30],
    ] as const)
      await s.measureOnce(caller, ms)
    void s.ask('light')
    void s.ask('light')
    await s.startedCount(3)
    s.spend(1)
    s.started[2]!.release()
    // No loop turn in between: the next light request has its slot once the microtasks have run.
    await microtasks()
    expect(s.started.map((slot) => slot.caller)).toEqual(['light', 'slow', 'light', 'light'])
    void s.ask('slow')
    s.spend(1)
    s.started[3]!.release()
    await microtasks()
    // Slow work waits for the next hand-out, a loop turn later, and begins on a turn of its own.
    expect(s.started).toHaveLength(4)
    await s.startedCount(5)
    expect(s.started[4]!.caller).toBe('slow')
  })

  it('runs work in a slot and releases the slot when the work fails', async () => {
    const { scheduler } = scheduled(1)
    await expect(scheduler.run('caller', () => Promise.reject(new Error('work failed')))).rejects.toThrow('work failed')
    expect(await scheduler.run('caller', () => Promise.resolve(42))).toBe(42)
    expect(scheduler.load()).toMatchObject({ running: 0, waiting: 0 })
  })

  it('gives the callers not measured yet one slot per loop turn between them, and serves measured ones in the same turns', async () => {
    const s = scheduled(16)
    // A light caller, measured: 1 ms a request.
    await s.measureOnce('light', 1)
    for (let i = 0; i < 10; i++) void s.ask(`new-${i}`)
    for (let i = 0; i < 3; i++) void s.ask('light')
    const perTurn: number[] = []
    while (s.started.length < 14) {
      const before = s.started.length
      await new Promise((resolve) => setImmediate(resolve))
      perTurn.push(s.started.length - before)
    }
    // Ten newcomers: ten turns at least, one each.
    expect(perTurn.length).toBeGreaterThanOrEqual(10)
    // The light caller's three were not held behind the ten newcomers.
    const lightAt = s.started.map((slot, i) => (slot.caller === 'light' ? i : -1)).filter((i) => i > 0)
    expect(Math.max(...lightAt)).toBeLessThan(6)
  })

  it('hands freed slots on in the same loop turn only while the turn’s budget lasts, to a caller alone too', async () => {
    const s = scheduled(1)
    // Measured at 4 ms a request: quick, and five of them fill a turn.
    await s.measureOnce('alone', 4)
    for (let i = 0; i < 10; i++) void s.ask('alone')
    // The scheduled hand-out begins a turn with one slot.
    await s.startedCount(2)
    // Each slot released as soon as it starts, with no loop turn in between.
    let seen = 0
    while (s.started.length > seen) {
      seen = s.started.length
      s.spend(4)
      s.started[seen - 1]!.release()
      for (let i = 0; i < 5; i++) await Promise.resolve()
    }
    // The measured one, the turn's first slot and the four more its budget holds; the next waits for the next turn.
    expect(s.started).toHaveLength(2 + (TURN_BUDGET_MS - 4) / 4)
    await s.startedCount(s.started.length + 1)
    expect(s.scheduler.load()).toMatchObject({ running: 1, waiting: 10 - (TURN_BUDGET_MS / 4 + 1) })
  })

  it('hands out in one loop turn only the slots whose expected costs fit in a turn’s budget', async () => {
    const s = scheduled(16)
    // Measured at 8 ms a request: under SLOW_HOLD_MS, so not slow, yet three of them fill a turn.
    for (let n = 1; n <= 3; n++) {
      void s.ask('mid')
      await s.startedCount(n)
      s.spend(8)
      s.started[n - 1]!.release()
    }
    // Another caller contends: a caller alone is not held to the budget.
    for (let i = 0; i < 12; i++) {
      void s.ask('mid')
      void s.ask('other-mid')
    }
    const before = s.started.length
    // Resolved once the first turn's slots have all started (each one's start ran in that turn).
    await s.startedCount(before + 1)
    const firstTurn = s.started.length - before
    expect(firstTurn).toBeGreaterThanOrEqual(1)
    expect(firstTurn * 8).toBeLessThanOrEqual(TURN_BUDGET_MS + 8)
    expect(s.scheduler.load().running).toBeLessThan(24)
  })

  it('sheds the waiting work of slow and new callers with SERVICE_UNAVAILABLE and a Retry-After while the loop is behind, and queues a light caller’s, though one of its slots was measured long', async () => {
    let delay = 0
    const s = scheduled(1, 1000, { loopDelayMs: () => delay, shedLoopDelayMs: 100 })
    // A slow caller (40 ms a request) and a light one (1 ms, then once 60 ms while the loop was busy with others' work), all measured.
    for (const [caller, ms] of [
      ['slow', 40],
      ['light', 1],
      ['light', 60],
    ] as const) {
      const n = s.started.length + 1
      void s.ask(caller)
      await s.startedCount(n)
      s.spend(ms)
      s.started[n - 1]!.release()
    }
    void s.ask('slow')
    await s.startedCount(4)
    delay = 150
    expect(s.scheduler.load().shedding).toBe(true)
    // The light caller's request waits for the slot; while it waits, the slow caller's next and a newcomer's are shed.
    const light = s.ask('light')
    await expect(s.ask('slow')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfterS: SHED_RETRY_AFTER_S })
    await expect(s.ask('newcomer')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' })
    delay = 20
    expect(s.scheduler.load().shedding).toBe(false)
    const slow = s.ask('slow')
    s.spend(40)
    s.started[3]!.release()
    await light
    expect(s.started[4]!.caller).toBe('light')
    s.started[4]!.release()
    await slow
    s.started[5]!.release()
    await slow
  })

  it('expects a caller not measured yet to cost what its kind of work has cost lately: a new caller of light work goes ahead of new callers of slow work', async () => {
    const s = scheduled(1)
    // One user (1 ms) and a deep page with embeds (30 ms), each measured once, by other callers.
    for (const [caller, kind, ms] of [
      ['earlier-a', 'GET one', 1],
      ['earlier-b', 'GET page', 30],
    ] as const)
      await s.measureOnce(caller, ms, kind)
    // Ten new callers of pages, then one new caller of one user.
    void s.ask('holder', 'GET page')
    await s.startedCount(3)
    for (let i = 0; i < 10; i++) void s.ask(`page-${i}`, 'GET page')
    void s.ask('light', 'GET one')
    s.spend(30)
    s.started[2]!.release()
    await s.startedCount(4)
    expect(s.started[3]!.caller).toBe('light')
  })

  it('measures each slot’s own synchronous work, whoever began beside it: a light slot that ends after a slow one is not charged for it', async () => {
    // The loop is real (slots begin and end in its turns as they would in a server); the time is the
    // test's, so a busy machine's pauses are not counted to anyone.
    let clock = 0
    const holdLoop = (ms: number) => {
      clock += ms
    }
    const scheduler = createFairScheduler({ concurrency: 4, maxQueuedPerCaller: 100, now: () => clock })
    // A light caller (nothing to do) and a medium one (15 ms), each measured once, alone.
    ;(await scheduler.acquire('light'))()
    const releaseMedium = await scheduler.acquire('medium')
    holdLoop(15)
    releaseMedium()
    // A light slot and a new caller's handed out in one turn: the new caller's work holds the loop
    // 40 ms, and the light slot ends a loop turn later, after it.
    const light = scheduler.acquire('light')
    const heavy = scheduler.acquire('heavy').then((release) => {
      holdLoop(40)
      release()
    })
    const releaseLight = await light
    await heavy
    await new Promise((resolve) => setImmediate(resolve))
    releaseLight()
    // Every slot held; the light and the medium caller ask; one slot comes free. Charged the 40 ms,
    // the light caller would go after the medium one.
    const holders = await Promise.all([0, 1, 2, 3].map((i) => scheduler.acquire(`holder-${i}`)))
    const order: string[] = []
    const asked = ['light', 'medium'].map((caller) =>
      scheduler.acquire(caller).then((release) => {
        order.push(caller)
        release()
      }),
    )
    holders[0]!()
    await Promise.all(asked)
    for (const release of holders.slice(1)) release()
    expect(order).toEqual(['light', 'medium'])
  })
})
