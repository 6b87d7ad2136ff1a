// Runs once, on SQLite: the subject is the event loop's delay (src/limits/loop-delay.ts), not the store.
// The monitor stops after a quiet window (its 10 ms timer woke an idle server a hundred times a
// second) and starts again after a busy one; a held loop is seen either way.
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { createLoopDelay, LOOP_DELAY_WINDOW_MS, type LoopDelay } from '../../src/limits/loop-delay.js'
import { holdLoop } from '../helpers/hold-loop.js'

/** Keeps the loop at work (a millisecond in every few) for `ms`: busy enough for the monitor to run. */
async function keepBusy(ms: number): Promise<void> {
  const end = performance.now() + ms
  while (performance.now() < end) {
    holdLoop(1)
    await sleep(2)
  }
}

describe('the loop delay', () => {
  let delay: LoopDelay | undefined
  afterEach(() => delay?.close())

  it('sees a loop held past a window while the monitor is off after a quiet one', async () => {
    delay = createLoopDelay()
    // Two windows with nothing to do: the monitor has stopped.
    await sleep(LOOP_DELAY_WINDOW_MS * 2.5)
    // Longer than a window: the window's own timer runs that late.
    holdLoop(LOOP_DELAY_WINDOW_MS + 200)
    await sleep(1)
    expect(delay.delayMs()).toBeGreaterThan(150)
  })

  it('sees a hold shorter than a window once the loop has been at work', async () => {
    delay = createLoopDelay()
    await sleep(LOOP_DELAY_WINDOW_MS * 2.5)
    // A busy window turns the monitor on again; then a hold within a window shows in its samples.
    await keepBusy(LOOP_DELAY_WINDOW_MS * 1.5)
    // A few of the monitor's samples first: the first after a window's start only marks the time.
    await sleep(40)
    holdLoop(150)
    await sleep(15)
    expect(delay.delayMs()).toBeGreaterThan(100)
  })

  it('forgets a hold on restart: the window begins again', async () => {
    delay = createLoopDelay()
    holdLoop(LOOP_DELAY_WINDOW_MS + 200)
    await sleep(1)
    expect(delay.delayMs()).toBeGreaterThan(150)
    delay.restart()
    expect(delay.delayMs()).toBeLessThan(20)
    // A window later the loop is read as not behind: under the shed threshold's 100 ms.
    await sleep(LOOP_DELAY_WINDOW_MS + 50)
    expect(delay.delayMs()).toBeLessThan(100)
  })
})
