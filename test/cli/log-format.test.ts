// The log's format follows where stdout goes: `threadline serve` on a terminal (a pseudo-terminal
// made by util-linux `script`) writes one readable line per request; into a pipe, JSON lines;
// LOG_FORMAT=json on a terminal, JSON lines again. Into a pipe nobody reads, the server goes on.
import { type ChildProcess, spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN } from '../helpers/serve-process.js'
import { freshDatabase, SECOND_STORE_RUN, type TestDatabase } from '../helpers/test-store.js'

let store: TestDatabase
beforeAll(async () => {
  store = await freshDatabase()
})
afterAll(() => store.drop())

interface Served {
  address: string
  output: () => string
  stop: () => Promise<void>
}

/** `threadline serve`, its stdout a terminal (`script -qfc`) or a pipe; in a process group of its own, stopped as one. */
async function serve(terminal: boolean, env: Record<string, string> = {}): Promise<Served> {
  const command = `exec ${process.execPath} ${BIN} serve`
  const [file, args] = terminal ? ['script', ['-qfec', command, '/dev/null']] : [process.execPath, [BIN, 'serve']]
  const child: ChildProcess = spawn(file, args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: store.url, SEED_DEMO_DATA: 'false', ...env },
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM')
    await exited
  }
  const address = await waitFor(
    () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1],
    () => output,
  ).catch(async (error: unknown) => {
    await stop()
    throw error
  })
  return { address, output: () => output, stop }
}

async function waitFor<T>(found: () => T | undefined, output: () => string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = found()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`not seen within ${timeoutMs} ms in: ${output()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Strips colours, so the text reads as a person sees it. */
const plain = (text: string): string => text.replace(/\x1b\[[0-9;]*m/g, '') // eslint-disable-line no-control-regex

/** Asks for a page of users and returns the lines the server wrote about it. */
async function requestLines(served: Served): Promise<string[]> {
  const lines = () =>
    plain(served.output())
      .split(/\r?\n/)
      .filter((line) => line.includes('/api/v1/users') && !line.includes('listening on'))
  expect((await fetch(`${served.address}/api/v1/users?limit=2`)).status).toBe(200)
  // Another request after it (a user, /api/v1/users/…): once its line is out, any line about the
  // first one is too (one process writes them, in order).
  await fetch(`${served.address}/api/v1/users/1`)
  await waitFor(() => (lines().some((line) => line.includes('/api/v1/users/')) ? true : undefined), served.output)
  return lines().filter((line) => !line.includes('/api/v1/users/'))
}

// Logging is the same whatever the store.
describe.skipIf(SECOND_STORE_RUN)('the log on a terminal and off it', () => {
  it('on a terminal: one readable line per request, time, method, URL, status and latency, no JSON', async () => {
    const served = await serve(true)
    try {
      const lines = await requestLines(served)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] GET \/api\/v1\/users\?limit=2 → 200 \d+\.\d ms$/)
      expect(plain(served.output())).not.toContain('{"level"')
    } finally {
      await served.stop()
    }
  })

  it('into a pipe: JSON lines', async () => {
    const served = await serve(false)
    try {
      await fetch(`${served.address}/api/v1/users?limit=2`)
      const line = await waitFor(
        () =>
          served
            .output()
            .split('\n')
            .find((l) => l.includes('"msg":"request"')),
        served.output,
      )
      expect(JSON.parse(line)).toMatchObject({ level: 30, method: 'GET', route: '/api/v1/users', status: 200 })
    } finally {
      await served.stop()
    }
  })

  it('into a pipe nobody reads: every request is still answered, and its line comes once the pipe is read', async () => {
    const child = spawn(process.execPath, [BIN, 'serve'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
      // An allowance this one caller's requests do not reach, and no load shed: a server this new,
      // on a machine the rest of the suite keeps busy, sheds a crowd's work while it compiles what
      // the first requests need. A loop held by the log then shows as requests that wait.
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: store.url,
        SEED_DEMO_DATA: 'false',
        RATE_LIMIT_MAX: '1000000',
        HTTP_SHED_LOOP_DELAY_MS: '0',
      },
    })
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
    let output = ''
    const collect = (chunk: Buffer) => (output += chunk.toString())
    child.stdout?.on('data', collect)
    try {
      const address = await waitFor(
        () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1],
        () => output,
      )
      // From here on nobody reads: the pipe fills (a few hundred KB), and the server goes on.
      child.stdout?.off('data', collect)
      child.stdout?.pause()
      const requests = 4000
      for (let sent = 0; sent < requests; sent += 10) {
        const statuses = await Promise.all(Array.from({ length: 10 }, async () => (await fetch(`${address}/api/v1/users?limit=1`)).status))
        expect(statuses.filter((status) => status !== 200)).toEqual([])
      }
      child.stdout?.on('data', collect)
      child.stdout?.resume()
      const requestLines = () => output.split('\n').filter((line) => line.includes('"msg":"request"')).length
      await waitFor(
        () => (requestLines() === requests ? true : undefined),
        () => `${requestLines()} request lines`,
      )
      // What waited fitted: none dropped, as the metric says.
      expect(await (await fetch(`${address}/metrics`)).text()).toMatch(/^threadline_log_lines_dropped 0$/m)
    } finally {
      if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM')
      await exited
    }
  })

  it('LOG_FORMAT=json on a terminal: JSON lines still', async () => {
    const served = await serve(true, { LOG_FORMAT: 'json' })
    try {
      const lines = await requestLines(served)
      expect(lines).toHaveLength(1)
      expect(JSON.parse(lines[0] ?? '')).toMatchObject({ method: 'GET', route: '/api/v1/users', status: 200, msg: 'request' })
    } finally {
      await served.stop()
    }
  })
})
