// What every instrumentation here shares: the tracer and the context manager of one app, a run of
// work inside a span (ended when the work returns or its promise settles), a failure recorded
// without its message (a database's message may quote the values of a row), and the bound on what
// a client's own text may take of a span.
import { type Context, type Span, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import type { AsyncLocalStorageContextManager } from './context-manager.js'

export interface Spans {
  readonly tracer: Tracer
  readonly contexts: AsyncLocalStorageContextManager
}

/** Runs `run` with `span` active (a child of `parent`), and ends the span when it returns or its promise settles. */
export function runInSpan<T>({ contexts }: Spans, parent: Context, span: Span, run: () => T): T {
  let result: T
  try {
    result = contexts.with(trace.setSpan(parent, span), run)
  } catch (error) {
    endFailed(span, error)
    throw error
  }
  if (!(result instanceof Promise)) {
    span.end()
    return result
  }
  return result.then(
    (value: unknown) => {
      span.end()
      return value
    },
    (error: unknown) => {
      endFailed(span, error)
      throw error
    },
  ) as T
}

/** Ends `span` as failed: error.type is the error's code (a database's SQLSTATE, an AppError's code) or its class. */
export function endFailed(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | undefined)?.code
  const type = typeof code === 'string' || typeof code === 'number' ? String(code) : error instanceof Error ? error.name : 'unknown'
  span.setAttribute('error.type', type)
  span.setStatus({ code: SpanStatusCode.ERROR })
  span.end()
}

/** The span active now, when there is one: statements and commands are traced only inside a trace (a request's, a delivery's). */
export const activeParent = ({ contexts }: Spans): Context | undefined => {
  const context = contexts.active()
  return trace.getSpan(context) === undefined ? undefined : context
}

/**
 * The characters a span keeps of a value the client chose (its User-Agent, Host, URL path, an
 * operation's name): each may otherwise be as long as the headers or the body allow (16 KiB, 1
 * MiB), held in the export queue and sent to the collector. Every browser's and library's user
 * agent fits whole. Cut here, per attribute, rather than by the SDK's attribute length limit, which
 * would cut the service's own long values (a statement's text) too.
 */
export const MAX_CLIENT_TEXT = 512

/** `value`, cut to MAX_CLIENT_TEXT characters (these values are Latin-1 or ASCII: no pair of surrogates is split). */
export const clientText = (value: string): string => (value.length > MAX_CLIENT_TEXT ? value.slice(0, MAX_CLIENT_TEXT) : value)
