// One log line per request instead of Fastify's two, written when the request completes (Fastify's
// `logController` option): route, status, latency and the caller.
import { hostname } from 'node:os'
import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify'
import type { Bindings, ChildLoggerOptions, LogFn } from 'pino'
import { routeConfigOf } from '../core/route-config-read.js'

/** Where the line of a request that went well is written, and from which level on it is. */
export interface RequestLines {
  write(line: string): void
  /** Lines of requests that went well are written at info (debug for machines' quiet routes). */
  readonly info: boolean
  readonly debug: boolean
  /**
   * One line for a person at a terminal (LOG_FORMAT=pretty) instead of JSON: time, method, URL,
   * status, latency. The URL, query included, is shown here only: the terminal is the developer's own.
   * @default undefined
   */
  readonly pretty?: { colors: boolean }
}

const HOSTNAME = JSON.stringify(hostname())

/**
 * Logs each request once, when it completes: route, status, latency and the caller. The line of a
 * request that went well is written here, as pino writes its lines (the same fields, in the same
 * order), straight to the log's destination: through pino, with its redaction paths and its
 * serializers, it was a tenth of GET one user's throughput, and its fields are known and hold
 * nothing secret (the route's template, not the URL; a request id that is a UUID or passed
 * SANE_REQUEST_ID, request-id.ts). Failures go through the request's own logger, redacted, as every other line.
 */
export class OneLinePerRequest extends LogController {
  constructor(private readonly lines: RequestLines) {
    super()
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const ms = Math.round(reply.elapsedTime * 100) / 100
    const config = routeConfigOf(request)
    const route = config.url
    if (error) {
      const line = { method: request.method, route, status: reply.statusCode, ms, userId: request.caller?.userId }
      request.log.error({ ...line, err: error }, 'request failed')
      return
    }
    const quiet = config.quietLog === true && reply.statusCode < 400
    if (quiet ? !this.lines.debug : !this.lines.info) return
    if (this.lines.pretty !== undefined) {
      this.lines.write(prettyRequestLine(request.method, request.url, reply.statusCode, ms, this.lines.pretty.colors))
      return
    }
    const userId = request.caller?.userId
    // The id and the method go between quotes as they are: an id keeps to [\w.:@-] (request-id.ts)
    // and Node's parser takes only a token for a method, so neither holds anything JSON escapes.
    this.lines.write(
      `{"level":${quiet ? 20 : 30},"time":${Date.now()},"pid":${PID},"hostname":${HOSTNAME},"reqId":"${request.id}",` +
        `"method":"${request.method}"${route === undefined ? '' : routeField(route)},"status":${reply.statusCode},"ms":${ms}` +
        `${userId === undefined ? '' : `,"userId":${userId}`},"msg":"request"}\n`,
    )
  }
}

const PID = process.pid

/** `,"route":"<template>"`, written once for each of the app's route templates. */
function routeField(route: string): string {
  let field = routeFields.get(route)
  if (field === undefined) routeFields.set(route, (field = `,"route":${JSON.stringify(route)}`))
  return field
}
const routeFields = new Map<string, string>()

const two = (n: number): string => String(n).padStart(2, '0')
const STATUS_COLORS = { 2: 32, 3: 36, 4: 33, 5: 31 } as Record<number, number> // green, cyan, yellow, red

/** `[01:02:03.456] GET /api/v1/users?limit=2 → 200 3.1 ms`, in local time as pino-pretty writes its lines. */
export function prettyRequestLine(method: string, url: string, status: number, ms: number, colors: boolean): string {
  const now = new Date()
  const time = `${two(now.getHours())}:${two(now.getMinutes())}:${two(now.getSeconds())}.${String(now.getMilliseconds()).padStart(3, '0')}`
  const color = STATUS_COLORS[Math.floor(status / 100)]
  const shownStatus = colors && color !== undefined ? `\x1b[${color}m${status}\x1b[39m` : String(status)
  // A URL is printable ASCII on the wire (Node refuses control characters in the request line).
  return `[${time}] ${method} ${url} → ${shownStatus} ${ms.toFixed(1)} ms\n`
}

/**
 * A request's logger (Fastify's `childLoggerFactory`), made pino's child of the app's logger when it
 * first writes or is asked for a child. Made for every request, the child (its bindings serialized,
 * the redaction paths run over them) cost about 2% of GET one user, and a request that goes well
 * writes nothing through it: its one line is OneLinePerRequest's.
 */
export function lazyChildLogger(this: unknown, logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options)
}

class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private made(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options))
  }

  get level(): string {
    return this.#child?.level ?? this.parent.level
  }

  set level(level: string) {
    this.made().level = level
  }

  fatal(...args: unknown[]): void {
    this.made().fatal(...(args as Parameters<LogFn>))
  }

  error(...args: unknown[]): void {
    this.made().error(...(args as Parameters<LogFn>))
  }

  warn(...args: unknown[]): void {
    this.made().warn(...(args as Parameters<LogFn>))
  }

  info(...args: unknown[]): void {
    this.made().info(...(args as Parameters<LogFn>))
  }

  debug(...args: unknown[]): void {
    this.made().debug(...(args as Parameters<LogFn>))
  }

  trace(...args: unknown[]): void {
    this.made().trace(...(args as Parameters<LogFn>))
  }

  silent(...args: unknown[]): void {
    this.made().silent(...(args as Parameters<LogFn>))
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.made().child(bindings, options)
  }
}
