// A server span for every HTTP request, continuing the trace its caller sent (W3C traceparent and
// tracestate): named "METHOD route" (the route's template, never the URL's values), with the
// status, and an error for a 5xx. Its context is entered before the other hooks run, and again
// after the body is read (the body's events arrive outside it), so that what the handler does
// (SQL, Redis, GraphQL's stages) becomes its children. A WebSocket's upgrade request is the
// connection's span: it ends when the socket closes; an event stream's, when the stream ends. What
// the client wrote (User-Agent, Host, the path) is kept to its first 512 characters (spans.ts).
import { type Context, defaultTextMapGetter, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace, type TextMapPropagator } from '@opentelemetry/api'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { clientText, type Spans } from './spans.js'
import { routeConfigOf } from '../core/route-config-read.js'

/** Each request's span and the context it is active in, for the stages that run outside the hooks (a WebSocket's messages). */
export type RequestContexts = WeakMap<FastifyRequest, Context>

export function traceRequests(app: FastifyInstance, spans: Spans, propagator: TextMapPropagator, requests: RequestContexts): void {
  const { tracer, contexts } = spans
  app.addHook('onRequest', (request, reply, done) => {
    const parent = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter)
    const route = routeConfigOf(request).url
    const span = tracer.startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      { kind: SpanKind.SERVER, attributes: requestAttributes(request, route) },
      parent,
    )
    const context = trace.setSpan(parent, span)
    requests.set(request, context)
    // 'close' comes after the answer is sent, when the client goes first, and when an upgraded socket closes.
    reply.raw.once('close', () => endRequest(span, request, reply))
    contexts.with(context, done)
  })
  app.addHook('preValidation', (request, _reply, done) => {
    const context = requests.get(request)
    if (context === undefined) return done()
    contexts.with(context, done)
  })
}

function requestAttributes(request: FastifyRequest, route: string | undefined) {
  const query = request.url.indexOf('?')
  return {
    'http.request.method': request.method,
    // The id the request's log line and X-Request-Id carry: traces and logs meet by it.
    'threadline.request.id': request.id,
    'url.path': clientText(query === -1 ? request.url : request.url.slice(0, query)),
    'url.scheme': request.protocol,
    ...(route === undefined ? {} : { 'http.route': route }),
    'server.address': clientText(request.hostname),
    ...(request.port === null ? {} : { 'server.port': request.port }),
    'client.address': request.ip,
    'network.protocol.version': request.raw.httpVersion,
    ...(request.headers['user-agent'] === undefined ? {} : { 'user_agent.original': clientText(request.headers['user-agent']) }),
  }
}

function endRequest(span: Span, request: FastifyRequest, reply: FastifyReply): void {
  const upgraded = !reply.raw.headersSent && request.headers.upgrade?.toLowerCase() === 'websocket'
  const status = reply.raw.headersSent ? reply.raw.statusCode : upgraded ? 101 : undefined
  if (status !== undefined) span.setAttribute('http.response.status_code', status)
  if (status !== undefined && status >= 500) {
    span.setAttribute('error.type', String(status))
    span.setStatus({ code: SpanStatusCode.ERROR })
  }
  // Gone before the answer: the client closed the connection.
  if (status === undefined) span.setAttribute('error.type', 'aborted')
  span.end()
}
