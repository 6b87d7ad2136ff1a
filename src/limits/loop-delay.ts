// The event loop's delay, as Node measures it (perf_hooks' monitorEventLoopDelay: a timer every
// few milliseconds, and how late it ran), read over a short window: the figure load is shed by
// (fair-scheduler.ts) and that /health reports.
//
// The monitor runs only while the loop works: its timer woke an idle server a hundred times a
// second. Each window's end looks at how busy the loop was (its utilization over the window) and
// turns the monitor off after a quiet one, on after a busy one; while it is off, a held loop still
// shows, as how late the window's own timer ran.
//
// What the start held (modules loaded, routes compiled: a second and more of synchronous work) is
// forgotten when the server is ready: read as a loop behind on requests, it would shed the first
// callers of a server just started, for a window and more.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'

export interface LoopDelay {
  /** The loop's delay, in milliseconds: the p99 over the window before this one, or this one's if it is worse. */
  delayMs(): number
  /** Forgets what was measured so far and begins a window now (the server's start is over). */
  restart(): void
  /** Stops measuring. */
  close(): void
}

/** The monitor's sampling period, in milliseconds. */
const RESOLUTION_MS = 10

/** How long a figure read stands for the next asking, in milliseconds: a tenth of the sampling period. */
const REREAD_AFTER_MS = 1

/** The window each figure is read over. */
export const LOOP_DELAY_WINDOW_MS = 500

/** The share of a window the loop must have worked for the monitor to run through the next one. */
const BUSY_UTILIZATION = 0.01

export function createLoopDelay(): LoopDelay {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  histogram.enable()
  let monitoring = true
  let previousMs = 0
  let windowStart = performance.now()
  let utilizationAt = performance.eventLoopUtilization()
  // A stalled loop delays this timer too: the window it closes holds the stall, and it is read at once.
  const rotate = () => {
    const now = performance.now()
    previousMs = Math.max(current(), now - windowStart - LOOP_DELAY_WINDOW_MS)
    histogram.reset()
    windowStart = now
    const utilization = performance.eventLoopUtilization(utilizationAt)
    utilizationAt = performance.eventLoopUtilization()
    const busy = utilization.utilization >= BUSY_UTILIZATION
    if (busy === monitoring) return
    monitoring = busy
    if (busy) histogram.enable()
    else histogram.disable()
  }
  const timer = setInterval(rotate, LOOP_DELAY_WINDOW_MS).unref()
  // The histogram counts the sampling period in every sample: a loop that is never late reads RESOLUTION_MS.
  const current = () => (histogram.count === 0 ? 0 : Math.max(0, histogram.percentile(99) / 1e6 - RESOLUTION_MS))
  // The histogram's p99 is read at most once a millisecond (each read walks its buckets; under load
  // the scheduler asks on every slow request): within one, the figure read last is the answer.
  let readAt = -Infinity
  let lastMs = 0
  return {
    delayMs() {
      const now = performance.now()
      if (now - readAt < REREAD_AFTER_MS) return lastMs
      // A window past its time has not been rotated: the loop was held since.
      const late = now - windowStart - LOOP_DELAY_WINDOW_MS
      readAt = now
      lastMs = Math.max(previousMs, current(), late)
      return lastMs
    },
    restart() {
      histogram.reset()
      previousMs = 0
      windowStart = performance.now()
      utilizationAt = performance.eventLoopUtilization()
      readAt = -Infinity
      timer.refresh()
    },
    close() {
      clearInterval(timer)
      histogram.disable()
    },
  }
}
