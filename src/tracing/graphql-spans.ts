// GraphQL's spans. The operation pipeline's stages, whichever transport brought the operation:
// graphql.parse, graphql.validate and graphql.execute (named as OpenTelemetry's GraphQL
// instrumentation names them), the operation's type and name on execute. Over a WebSocket or an
// event stream, each operation's admission is a span of its own in the connection's trace, named
// after the operation ("subscription OnComment"); its execution, its source stream and its
// deliveries' links go back to the span it was prepared in.
import { type Context, type Link, SpanKind, trace } from '@opentelemetry/api'
import type { FastifyRequest } from 'fastify'
import { type DocumentNode, getOperationAST } from 'graphql'
import type { StageTracer } from '../graphql/pipeline/operation-pipeline.js'
import type { OperationTracer } from '../graphql/subscriptions/operation-preparation.js'
import type { EventSpans } from './event-spans.js'
import type { RequestContexts } from './request-spans.js'
import { clientText, runInSpan, type Spans } from './spans.js'

/** The semantic conventions' name of a GraphQL operation's span when its type is not known yet. */
const UNNAMED_OPERATION = 'GraphQL Operation'

export function graphqlSpans(spans: Spans, requests: RequestContexts, events: EventSpans): StageTracer & OperationTracer {
  const { tracer, contexts } = spans
  /** Each prepared operation's context (the span it was prepared in), by its GraphQL context. */
  const prepared = new WeakMap<object, Context>()

  const stage = <T>(name: string, attributes: Record<string, string | boolean>, run: () => T): T => {
    const parent = contexts.active()
    return runInSpan(spans, parent, tracer.startSpan(name, { attributes }, parent), run)
  }

  return {
    parse: (cached, run) => stage('graphql.parse', { 'threadline.cached': cached }, run),
    validate: (cached, run) => stage('graphql.validate', { 'threadline.cached': cached }, run),
    execute: (args, run) => stage('graphql.execute', operationAttributes(args.document, args.operationName), run),

    operation<T>(request: FastifyRequest, work: () => Promise<T>): Promise<T> {
      const parent = requests.get(request) ?? contexts.active()
      const span = tracer.startSpan(UNNAMED_OPERATION, { kind: SpanKind.SERVER }, parent)
      return runInSpan(spans, parent, span, async () => {
        const admitted = await work()
        // What the admission resolves to carries the document (ExecutionArgs, or the admitted operation); a refusal does not.
        const { document, operationName } = (admitted ?? {}) as { document?: DocumentNode; operationName?: string | null }
        if (document !== undefined) {
          const attributes = operationAttributes(document, operationName)
          span.setAttributes(attributes)
          const type = attributes['graphql.operation.type']
          const name = attributes['graphql.operation.name']
          if (type !== undefined) span.updateName(name === undefined ? type : `${type} ${name}`)
        }
        return admitted
      })
    },

    prepared(context) {
      prepared.set(context, contexts.active())
    },

    within: (context, run) => {
      const at = prepared.get(context)
      return at === undefined ? run() : contexts.with(at, run)
    },

    deliver(event, context, run) {
      const at = prepared.get(context)
      const subscription = at === undefined ? undefined : trace.getSpanContext(at)
      const link: Link | undefined = subscription === undefined ? undefined : { context: subscription }
      return events.deliver(event, link, run)
    },
  }
}

function operationAttributes(document: DocumentNode, operationName: string | null | undefined): Record<string, string> {
  const operation = getOperationAST(document, operationName)
  if (operation === null || operation === undefined) return {}
  const name = operation.name?.value
  return { 'graphql.operation.type': operation.operation, ...(name === undefined ? {} : { 'graphql.operation.name': clientText(name) }) }
}
