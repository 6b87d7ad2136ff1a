// Logging a failure that repeats (a store that is down, a connection that keeps being refused)
// without one line per attempt: a run of failures is logged when it starts and when it ends, and
// every failure is counted.
import type { FastifyBaseLogger } from 'fastify'

export class FailureLog {
  /** Failures since the start, for the service's counters. */
  failures = 0
  private runStartedAt: number | undefined
  private failuresInRun = 0

  constructor(
    private readonly log: FastifyBaseLogger,
    /** What fails, as the log lines say it: "rate-limit store", "event publishing". */
    private readonly what: string,
    /** What the service does meanwhile, added to the first line: "requests are let through". */
    private readonly meanwhile = '',
  ) {}

  /** Whether the last attempt failed. */
  get failing(): boolean {
    return this.runStartedAt !== undefined
  }

  /** Counts a failure; the first of a run is logged (warn), the others only counted. */
  failed(error: unknown): void {
    this.failures++
    this.failuresInRun++
    if (this.runStartedAt !== undefined) return
    this.runStartedAt = Date.now()
    this.log.warn({ err: error }, `${this.what} failing${this.meanwhile === '' ? '' : `: ${this.meanwhile}`} (logged once until it recovers)`)
  }

  /** Ends a run of failures, if one was going on, with one line saying how long and how many. */
  succeeded(): void {
    if (this.runStartedAt === undefined) return
    this.log.info({ failures: this.failuresInRun, ms: Date.now() - this.runStartedAt }, `${this.what} working again`)
    this.runStartedAt = undefined
    this.failuresInRun = 0
  }
}
