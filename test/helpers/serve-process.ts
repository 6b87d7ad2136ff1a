// `threadline serve` as a child process, exactly as a user runs it (dist/main.js, built by the
// global setup), on a free port.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'

export const BIN = 'dist/main.js'

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams
  /** http://127.0.0.1:PORT */
  address: string
  /** Everything it printed so far, stdout and stderr. */
  output: () => string
  /** SIGTERM, and resolves with the exit code. */
  stop: () => Promise<number | null>
}

/** Servers still running, killed if the test process ends without stopping them (a failed hook). */
const running = new Set<ChildProcessWithoutNullStreams>()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

/** How long a server may take to say it listens before the start counts as failed. */
const START_TIMEOUT_MS = 30_000

/** Starts `threadline serve`; resolves with its address once it logged it (killing it if it never does). */
export async function startServe(env: Record<string, string>): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve'], { env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', ...env } })
  running.add(child)
  child.on('exit', () => running.delete(child))
  let output = ''
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match?.[1]) resolve(match[1])
    })
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${output}`)))
    setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`serve did not say it listens within ${START_TIMEOUT_MS} ms: ${output}`))
    }, START_TIMEOUT_MS).unref()
  })
  return {
    child,
    address,
    output: () => output,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}
