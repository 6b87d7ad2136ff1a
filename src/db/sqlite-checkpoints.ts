// SQLite's checkpoints, mostly on a thread of their own while the server writes. In WAL mode a
// commit appends its pages to the WAL, and the commit that takes the WAL past `wal_autocheckpoint`
// pages (1000) copies the WAL into the database file, and syncs both, before it returns: on the
// serving connection that is the event loop held for it, 40-60 ms every few tenths of a second
// under steady writes and up to 175 ms at times (by hand, POST create with an Idempotency-Key),
// long enough for the load shed to refuse work with 503
// (docs/decisions/0073-checkpoints-beside-the-loop.md).
//
// While this handle writes, a worker thread with a connection of its own runs a PASSIVE checkpoint
// every CHECKPOINT_EVERY_MS: it copies what was committed without waiting for the serving
// connection's reads or writes. The serving connection still checkpoints, as only a writer can
// start the WAL over, but past AUTOCHECKPOINT_PAGES_BESIDE_THREAD pages and with little left to
// copy. After IDLE_AFTER_MS without a commit told here the thread checkpoints once more and ends,
// and SQLite's own threshold is back (a thread costs 10-18 MB of resident memory: an idle server
// keeps none). Should the thread fail to start or end on its own, the threshold is back as well.
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type SqliteDatabase from 'better-sqlite3'

/**
 * How often the thread copies what the WAL holds into the database file. Each checkpoint that finds
 * new commits syncs the WAL and the file; the thread shares the loop's core under load, and every
 * 10 ms it cost the mixed load (random users, 2% PATCH) 12% of its throughput against every 100 ms.
 */
const CHECKPOINT_EVERY_MS = 100
/**
 * The serving connection's own threshold, in pages, while the thread runs (SQLite's default,
 * 1000, otherwise). Its checkpoint then copies only what the thread has not yet (at most a tenth
 * of a second of commits) and restarts the WAL, which a checkpoint of another connection never does.
 */
const AUTOCHECKPOINT_PAGES_BESIDE_THREAD = 10_000
const AUTOCHECKPOINT_PAGES = 1000
/** How long without a commit before the thread ends. */
const IDLE_AFTER_MS = 30_000

/** The thread: CommonJS, given better-sqlite3's path (resolved here, so that the bundle and tsc's output find the same). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.path)
db.pragma('busy_timeout = 0')
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)')
  } catch {}
}
const timer = setInterval(checkpoint, workerData.everyMs)
parentPort.once('message', () => {
  clearInterval(timer)
  checkpoint()
  db.close()
  parentPort.close()
})
`

export interface BackgroundCheckpoints {
  /** A commit went to the WAL: the thread starts, or its idle time starts again. */
  committed(): void
  /** Ends the thread (after a last checkpoint) and gives the checkpoints back to SQLite. */
  close(): Promise<void>
}

/** Checkpoints of `connection` (the file at `path`) on a thread, for the commits told after `from` settles. */
export function backgroundCheckpoints(connection: SqliteDatabase.Database, path: string, from: Promise<void> = Promise.resolve()): BackgroundCheckpoints {
  let due = false
  from.then(
    () => (due = true),
    () => {},
  )
  let worker: Worker | undefined
  let failed = false
  /** Ends the thread IDLE_AFTER_MS after the last commit: one timer, refreshed by each. */
  let idle: NodeJS.Timeout | undefined
  // A thread that ends after the connection was closed has nothing to give back.
  const threshold = (pages: number) => connection.open && connection.pragma(`wal_autocheckpoint = ${pages}`)
  /** The thread is done with (ended, or failed): no idle timer, and SQLite's own threshold back. */
  const forget = () => {
    worker = undefined
    clearTimeout(idle)
    idle = undefined
    threshold(AUTOCHECKPOINT_PAGES)
  }

  function stop(): Promise<void> {
    const running = worker
    if (running === undefined) return Promise.resolve()
    forget()
    const ended = new Promise<void>((resolve) => running.once('exit', () => resolve()))
    // Unreferenced, the thread would let the process end before its last checkpoint does.
    running.ref()
    running.postMessage('stop')
    return ended
  }
  function start(): void {
    let started: Worker
    try {
      started = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), path, everyMs: CHECKPOINT_EVERY_MS },
        resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
      })
    } catch {
      failed = true
      return
    }
    started.unref()
    const fail = () => {
      if (worker !== started) return
      failed = true
      forget()
    }
    started.on('error', fail)
    started.on('exit', fail)
    worker = started
    threshold(AUTOCHECKPOINT_PAGES_BESIDE_THREAD)
  }
  return {
    committed() {
      if (!due || failed) return
      if (worker === undefined) start()
      if (worker === undefined) return
      if (idle !== undefined) idle.refresh()
      else {
        idle = setTimeout(() => void stop(), IDLE_AFTER_MS)
        idle.unref()
      }
    },
    close: stop,
  }
}
