// A client span per SQL statement, inside a trace only (a request's, a delivery's): the statement
// as Kysely compiled it, with placeholders where the values go (db.query.text; the values are
// never recorded), its summary as the span's name ("SELECT users", "INSERT comments"), and the
// database it ran on. Transactions' BEGIN, COMMIT and ROLLBACK are spans too.
import { SpanKind } from '@opentelemetry/api'
import type { DatabaseLocation } from '../config.js'
import type { StatementObserver } from '../db/translating-dialect.js'
import { activeParent, endFailed, type Spans } from './spans.js'

const NOTHING = () => undefined

export function statementSpans(spans: Spans, location: DatabaseLocation): StatementObserver {
  const where = databaseAttributes(location)
  return (sql) => {
    const parent = activeParent(spans)
    if (parent === undefined) return NOTHING
    const summary = querySummary(sql)
    const span = spans.tracer.startSpan(
      summary,
      { kind: SpanKind.CLIENT, attributes: { ...where, 'db.query.text': sql, 'db.query.summary': summary, 'db.operation.name': summary.split(' ', 1)[0] } },
      parent,
    )
    return (error) => (error === undefined ? span.end() : endFailed(span, error))
  }
}

function databaseAttributes(location: DatabaseLocation): Record<string, string | number> {
  if (location.dialect === 'sqlite') return { 'db.system.name': 'sqlite' }
  const url = new URL(location.url)
  return {
    'db.system.name': 'postgresql',
    'db.namespace': decodeURIComponent(url.pathname.slice(1)),
    'server.address': url.hostname,
    'server.port': url.port === '' ? 5432 : Number(url.port),
  }
}

/** Summaries by statement: the same few hundred texts come again and again. */
const summaries = new Map<string, string>()
const MAX_SUMMARIES = 1000

/**
 * A statement's low-cardinality summary, as the semantic conventions describe it: its operation
 * and the tables it names after FROM, JOIN, INTO or UPDATE, in order, each once ("SELECT posts users").
 */
export function querySummary(sql: string): string {
  const known = summaries.get(sql)
  if (known !== undefined) return known
  const operation = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL'
  const tables = new Set<string>()
  for (const match of sql.matchAll(/\b(?:from|join|into|update)\s+("?)([A-Za-z_][\w.]*)\1/gi)) tables.add(match[2] as string)
  const summary = [operation, ...tables].join(' ')
  if (summaries.size >= MAX_SUMMARIES) summaries.clear()
  summaries.set(sql, summary)
  return summary
}
