// Where the service's log lines go: JSON lines to stdout, gathered and written off the event loop,
// or readable lines through pino-pretty (LOG_FORMAT=pretty, or stdout a terminal).
import { write, writeSync } from 'node:fs'
import { createRequire } from 'node:module'
import { hostname } from 'node:os'
import pino from 'pino'
import type { Config } from '../config.js'

/** Whether lines at `line` are written when the log is at `level` ('silent' is above them all). */
export const logs = (level: Config['logLevel'], line: 'info' | 'debug'): boolean => (pino.levels.values[level] ?? Infinity) <= (pino.levels.values[line] ?? 0)

/**
 * The JSON lines, to stdout: gathered up to 32 KB, and at least every 100 ms, so a line waits a
 * tenth of a second at most; then written by a PacedWriter, off the event loop. What is pending is
 * written when the process exits, whatever the reason (a machine that loses power, or a SIGKILL,
 * may lose the last tenth of a second). One write(2) per request was a sixth of GET one user's
 * throughput. A batch's write costs the event loop its hand-over to the thread pool and the thread
 * that wakes for it, on the same core under load: batches of 4 KB (some twenty request lines)
 * cost GET one user 30.4 µs of CPU a request, batches of 32 KB 29.4 (alternated, the reader
 * keeping up; without the request lines, 27.3).
 *
 * The lines are gathered here, in a list joined once per write. Gathered by sonic-boom, each line
 * was appended to one growing string whose bytes it counted again on every line: a copy of 2 KB on
 * average for a line of 200 bytes, a tenth of a request's allocations (docs/performance.md).
 */
let stdoutLog: GatheredLines | undefined
let stdoutWriter: PacedWriter | undefined
export function stdoutLogStream(): NodeJS.WritableStream {
  if (stdoutLog === undefined) {
    const out = new PacedWriter(STDOUT, MAX_WAITING_CHARS)
    stdoutWriter = out
    const lines = new GatheredLines((text) => out.write(text), GATHERED_CHARS, FLUSH_EVERY_MS)
    process.on('exit', () => out.flushSync(lines.take()))
    stdoutLog = lines
  }
  return stdoutLog as unknown as NodeJS.WritableStream
}

/** The JSON lines this process dropped since it started, stdout not being read as fast as they came. */
export const droppedLogLines = (): number => stdoutWriter?.droppedInAll ?? 0

const STDOUT = 1

/**
 * What may wait while stdout is not read, in characters: half a second of request lines at 20,000
 * requests a second. Past it, lines are dropped and counted.
 */
const MAX_WAITING_CHARS = 2 * 1024 * 1024

/**
 * Writes text to a file descriptor without ever holding the event loop. stdout is a blocking file
 * descriptor (a pipe, a socket, a file), and a write to it waits as long as its reader does: written
 * synchronously, a reader that paused held every request, and one that read slowly (a log shipper,
 * the terminal multiplexer, a benchmark's own process under load) halved the throughput. So each
 * write is made on libuv's thread pool, one at a time and in order. While one is under way, what
 * comes next waits in memory, up to `maxWaiting` characters; past that, whole batches are dropped
 * and their lines counted, and the next write begins with a warning line that says how many. A
 * reader that has gone (EPIPE) ends the writing: the lines have nowhere to go.
 */
export class PacedWriter {
  private writing = false
  private waiting: string[] = []
  private waitingChars = 0
  private droppedLines = 0
  private gone = false
  /** Lines dropped since the writer was made. */
  droppedInAll = 0

  constructor(
    private readonly fd: number,
    private readonly maxWaiting: number,
  ) {}

  write(text: string): void {
    if (this.gone) return
    if (!this.writing) return this.start(text)
    if (this.waitingChars + text.length > this.maxWaiting) {
      const lines = linesIn(text)
      this.droppedLines += lines
      this.droppedInAll += lines
      return
    }
    this.waiting.push(text)
    this.waitingChars += text.length
  }

  /**
   * At exit: what waits, then `last`, written at once, after the write under way if there is one
   * (the thread pool has made it by then, unless the reader is stalled). The exit waits for the
   * reader here, as every write once did.
   */
  flushSync(last: string): void {
    const text = this.takeWaiting() + last
    if (this.gone || text === '') return
    try {
      writeSync(this.fd, text)
    } catch {
      // The reader has gone, or the descriptor was closed: nothing more can be said.
    }
  }

  private start(text: string): void {
    this.writing = true
    this.writeFrom(Buffer.from(text), 0)
  }

  private writeFrom(bytes: Buffer, offset: number): void {
    write(this.fd, bytes, offset, bytes.length - offset, null, (error, written) => {
      if (error !== null) {
        // A descriptor made non-blocking by another process says so rather than wait: try again soon.
        if (error.code === 'EAGAIN') return void setTimeout(() => this.writeFrom(bytes, offset), RETRY_AFTER_MS)
        this.gone = true
        this.waiting = []
        this.waitingChars = 0
        return
      }
      if (offset + written < bytes.length) return this.writeFrom(bytes, offset + written)
      this.writing = false
      const next = this.takeWaiting()
      if (next !== '') this.start(next)
    })
  }

  /** What waits, the warning of dropped lines first; empty when nothing does. */
  private takeWaiting(): string {
    const warning = this.droppedLines === 0 ? '' : droppedLinesWarning(this.droppedLines)
    const text = warning + this.waiting.join('')
    this.waiting = []
    this.waitingChars = 0
    this.droppedLines = 0
    return text
  }
}

/** How long a write that found its descriptor full (EAGAIN) waits before it tries again, in ms. */
const RETRY_AFTER_MS = 10

/** The lines (newline-ended) in `text`. */
function linesIn(text: string): number {
  let count = 0
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++
  return count
}

/** A warning line, as pino writes one, that `count` lines were dropped. */
const droppedLinesWarning = (count: number): string =>
  `${JSON.stringify({ level: pino.levels.values.warn, time: Date.now(), pid: process.pid, hostname: hostname(), msg: `${count} log lines dropped: stdout was not read as fast as they came` })}\n`

/** What is gathered before a write, in characters (bytes for the ASCII of JSON lines). */
const GATHERED_CHARS = 32 * 1024
/** The longest a line waits in memory. */
const FLUSH_EVERY_MS = 100

/**
 * Lines kept in order and handed on together, once `atLeast` characters are waiting, `maxWaitMs`
 * after the first of them (when given), or on flush(). The timer is set only while a line waits: a
 * timer that ran every 100 ms whatever waited woke an idle server ten times a second.
 */
export class GatheredLines {
  private waiting: string[] = []
  private chars = 0
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly handOn: (text: string) => void,
    private readonly atLeast: number,
    private readonly maxWaitMs?: number,
  ) {}

  write(line: string): boolean {
    if (this.timer === undefined && this.maxWaitMs !== undefined) this.timer = setTimeout(this.flushWaiting, this.maxWaitMs).unref()
    this.waiting.push(line)
    this.chars += line.length
    if (this.chars >= this.atLeast) this.flush()
    return true
  }

  /** Hands on what waits; then calls `done`, as pino's `logger.flush(done)` expects of its stream. */
  flush(done?: () => void): void {
    if (this.waiting.length > 0) this.handOn(this.take())
    done?.()
  }

  /** What waits, taken: empty when nothing does. */
  take(): string {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    const text = this.waiting.join('')
    this.waiting = []
    this.chars = 0
    return text
  }

  private readonly flushWaiting = (): void => {
    this.timer = undefined
    this.flush()
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
