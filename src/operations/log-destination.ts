// Where the service's log lines go: JSON lines to stdout, gathered and written synchronously, or
// readable lines through pino-pretty (LOG_FORMAT=pretty, or stdout a terminal).
import { createRequire } from 'node:module'
import pino from 'pino'
import type { Config } from '../config.js'

/** Whether lines at `line` are written when the log is at `level` ('silent' is above them all). */
export const logs = (level: Config['logLevel'], line: 'info' | 'debug'): boolean => (pino.levels.values[level] ?? Infinity) <= (pino.levels.values[line] ?? 0)

/**
 * The JSON lines, to stdout: gathered up to 4 KB and written synchronously, and at least every 100
 * ms, so a line waits a tenth of a second at most; what is pending is written when the process
 * exits, whatever the reason (a machine that loses power, or a SIGKILL, may lose the last tenth of
 * a second). One write(2) per request was a sixth of GET one user's throughput. An asynchronous
 * destination was slower still (8,400 against 9,500 req/s on one core: the write moved to a thread
 * of the same core, and cost more to hand over than to make). One per process: stdout is one.
 *
 * The lines are gathered here, in a list joined once per write, and sonic-boom writes each 4 KB
 * (it retries a busy or partial write). Gathered by sonic-boom itself, each line was appended to
 * one growing string whose bytes it counted again on every line: a copy of 2 KB on average for a
 * line of 200 bytes, a tenth of a request's allocations (docs/performance.md).
 */
let stdoutLog: GatheredLines | undefined
export function stdoutLogStream(): NodeJS.WritableStream {
  if (stdoutLog === undefined) {
    const destination = pino.destination({ dest: 1, sync: true, minLength: 0 })
    const lines = new GatheredLines((text) => destination.write(text), GATHERED_CHARS)
    setInterval(() => lines.flush(), FLUSH_EVERY_MS).unref()
    process.on('exit', () => {
      lines.flush()
      destination.flushSync()
    })
    stdoutLog = lines
  }
  return stdoutLog as unknown as NodeJS.WritableStream
}

/** What is gathered before a write, in characters (bytes for the ASCII of JSON lines). */
const GATHERED_CHARS = 4096
/** The longest a line waits in memory. */
const FLUSH_EVERY_MS = 100

/** Lines kept in order and handed on together, once `atLeast` characters are waiting or on flush(). */
export class GatheredLines {
  private waiting: string[] = []
  private chars = 0

  constructor(
    private readonly handOn: (text: string) => void,
    private readonly atLeast: number,
  ) {}

  write(line: string): boolean {
    this.waiting.push(line)
    this.chars += line.length
    if (this.chars >= this.atLeast) this.flush()
    return true
  }

  /** Hands on what waits; then calls `done`, as pino's `logger.flush(done)` expects of its stream. */
  flush(done?: () => void): void {
    if (this.waiting.length > 0) {
      const text = this.waiting.join('')
      this.waiting = []
      this.chars = 0
      this.handOn(text)
    }
    done?.()
  }
}

/**
 * pino-pretty, loaded only when the log is pretty (stdout a terminal, or LOG_FORMAT=pretty); written
 * synchronously, as pino's default stream is. The request lines come readable already
 * (OneLinePerRequest's pretty form) and pass through it as they are.
 */
export function prettyLogStream(): NodeJS.WritableStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as (options: object) => NodeJS.WritableStream
  return pretty({ sync: true, colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
}
