// serve's heap settings (src/v8-settings.ts), seen from outside: V8's young generation stays at
// its first size while the server starts, V8 optimizes nothing the start runs hot, and V8 moves no
// allocation site's objects to the old generation on its own, unless whoever started node chose
// each themselves. A module loaded with --import reports the young generation's size when asked
// by SIGUSR2; V8's trace of its pretenuring (--trace-pretenuring-statistics, on stdout) shows
// whether it weighs allocation sites, and its trace of optimizations (--trace-opt) what it
// compiles with TurboFan.
import { type ChildProcess, spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN } from '../helpers/serve-process.js'
import { freshSqliteFile, SECOND_STORE_RUN, type TestDatabase } from '../helpers/test-store.js'

const MiB = 2 ** 20

const REPORT = `data:text/javascript,${encodeURIComponent(
  "import v8 from 'node:v8'; process.on('SIGUSR2', () => process.stderr.write(`new space ${v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size}\\n`))",
)}`

let store: TestDatabase
beforeAll(() => {
  store = freshSqliteFile()
})
afterAll(() => store.drop())

async function until<T>(read: () => T | undefined, what: () => string): Promise<T> {
  for (let waited = 0; waited < 30_000; waited += 20) {
    const value = read()
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`timed out: ${what()}`)
}

/** Starts `threadline serve` with `nodeOptions`; once it listens, `then` is given its output so far, its process and its URL. */
async function serveUntil<T>(nodeOptions: readonly string[], then: (output: () => string, child: ChildProcess, url: string) => Promise<T>): Promise<T> {
  const child = spawn(process.execPath, [...nodeOptions, BIN, 'serve'], {
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: store.url, SEED_DEMO_DATA: 'false', LOG_LEVEL: 'info' },
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  try {
    const url = await until(
      () => /listening on (http:\/\/[\d.]+:\d+)/.exec(output)?.[1],
      () => output,
    )
    return await then(() => output, child, url)
  } finally {
    child.kill('SIGTERM')
    await exited
  }
}

/** The young generation's size once `threadline serve` (started with `nodeOptions`) listens. */
function newSpaceOnceListening(nodeOptions: readonly string[]): Promise<number> {
  return serveUntil(['--import', REPORT, ...nodeOptions], async (output, child) => {
    child.kill('SIGUSR2')
    return Number(await until(() => /new space (\d+)/.exec(output())?.[1], output))
  })
}

/** V8's pretenuring trace of `threadline serve` (started with `nodeOptions`) through its start and 100 requests. */
function pretenuringTrace(nodeOptions: readonly string[]): Promise<string[]> {
  return serveUntil(['--trace-pretenuring-statistics', ...nodeOptions], async (output, _child, url) => {
    // One at a time, within the anonymous allowance (300 a minute) and below any load shedding.
    for (let i = 0; i < 100; i++) expect((await fetch(`${url}/api/v1/users?limit=20`)).status).toBe(200)
    return output()
      .split('\n')
      .filter((line) => line.includes('pretenuring:'))
  })
}

/** V8's optimizing compilations (--trace-opt) of `threadline serve` (started with `nodeOptions`): those begun before it listened, and those begun during 100 requests after. */
function optimizingCompilations(nodeOptions: readonly string[]): Promise<{ whileStarting: number; onceListening: number }> {
  return serveUntil(['--trace-opt', ...nodeOptions], async (output, _child, url) => {
    const compilations = () =>
      output()
        .split('\n')
        .filter((line) => line.startsWith('[compiling method')).length
    const whileStarting = compilations()
    for (let i = 0; i < 100; i++) expect((await fetch(`${url}/api/v1/users?limit=20`)).status).toBe(200)
    return { whileStarting, onceListening: compilations() - whileStarting }
  })
}

// On a SQLite file of its own whatever the run's store.
describe.skipIf(SECOND_STORE_RUN)("serve's heap settings", () => {
  it('keeps the young generation at its first size while the server starts', async () => {
    // 2 MiB at the listen; once it listens the young generation may grow again, and a scavenge
    // can come before the report (one run in about thirty, right after a build, was above 2 MiB;
    // its size was not kept). One doubling is allowed; grown through the start, it is 16-32 MiB.
    expect(await newSpaceOnceListening([])).toBeLessThanOrEqual(4 * MiB)
  })

  it('leaves a growth factor given on the command line alone (the start then grows it as V8 would)', async () => {
    expect(await newSpaceOnceListening(['--semi-space-growth-factor=2'])).toBeGreaterThan(8 * MiB)
  })

  it('optimizes nothing while the server starts but process.nextTick and what it calls, unless TurboFan is chosen on the command line', async () => {
    // The start runs enough code hot for V8 to optimize some 120 functions; process.nextTick's
    // warm-up alone, about a dozen. Once it listens, the requests' code is optimized.
    const held = await optimizingCompilations([])
    expect(held.whileStarting).toBeLessThan(30)
    expect(held.onceListening).toBeGreaterThan(0)
    expect((await optimizingCompilations(['--turbofan'])).whileStarting).toBeGreaterThan(60)
  })

  it('keeps V8 from moving an allocation site to the old generation, unless pretenuring is asked for on the command line', async () => {
    // Asked for, V8 weighs its allocation sites at every scavenge of the start: the trace shows them.
    expect((await pretenuringTrace(['--allocation-site-pretenuring'])).length).toBeGreaterThan(0)
    expect(await pretenuringTrace([])).toEqual([])
  })
})
