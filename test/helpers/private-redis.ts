// A Redis server of a test's own, to take away and bring back (an outage) without touching the
// machine's shared Redis: redis-server on a free port, no persistence, killed at the end.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { answers, IN_CI } from './services.js'
import { until } from './until.js'

const REDIS_SERVER = '/usr/bin/redis-server'

/**
 * Whether redis-server can be started here. Outside CI its absence skips the tests that need it,
 * with a word; under CI=true it must be there.
 */
export function canRunPrivateRedis(): boolean {
  if (existsSync(REDIS_SERVER)) return true
  if (IN_CI) throw new Error(`${REDIS_SERVER} is missing, and CI=true requires it (apt-get install redis-server)`)
  console.warn(`[skip] ${REDIS_SERVER} is missing: the Redis outage tests are skipped (apt-get install redis-server).`)
  return false
}

/** A key prefix of its own for one test, so runs and tests never share keys or channels. */
export const uniquePrefix = (): string => `tl-test-${randomUUID().slice(0, 8)}:`

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

export class PrivateRedis {
  private child: ChildProcess | undefined

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** Picks a free port; the server is not started yet. */
  static async onFreePort(): Promise<PrivateRedis> {
    return new PrivateRedis(await freePort())
  }

  /** Starts the server (again, on the same port) and waits until it accepts connections. */
  async start(): Promise<void> {
    if (this.child !== undefined) return
    const child = spawn(REDIS_SERVER, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    this.child = child
    child.once('exit', () => {
      if (this.child === child) this.child = undefined
    })
    await until(() => answers(this.url, this.port), 5000)
  }

  /** Stops the server's process (SIGSTOP): connections stay open and nothing answers, as in a hang. */
  pause(): void {
    this.child?.kill('SIGSTOP')
  }

  /** Lets a paused server go on (SIGCONT). */
  resume(): void {
    this.child?.kill('SIGCONT')
  }

  /** Kills the server, as a crash would, and waits until it is gone. */
  async stop(): Promise<void> {
    const child = this.child
    if (child === undefined) return
    this.child = undefined
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    child.kill('SIGCONT')
    await exited
  }
}
