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
 */
let stdoutLog: ReturnType<typeof pino.destination> | undefined
export function stdoutLogStream(): NodeJS.WritableStream {
  if (stdoutLog === undefined) {
    const stream = pino.destination({ dest: 1, sync: true, minLength: 4096, periodicFlush: 100 })
    process.on('exit', () => stream.flushSync())
    stdoutLog = stream
  }
  return stdoutLog as unknown as NodeJS.WritableStream
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
