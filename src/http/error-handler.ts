// Every failure leaves as the service's error body (docs/rest.md, Envelopes and errors). Expected errors
// (AppError, and the framework's own 4xx) are shown in our words; anything else is masked as
// INTERNAL_ERROR with the request id, its detail only in the log (http/to-app-error.ts, as for
// GraphQL). No Fastify message or FST_ code reaches the client as it is.
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, ERROR_STATUS, type ErrorCode, isAppError } from '../errors.js'
import { toAppError } from './to-app-error.js'
import { toErrorDetails } from '../core/validation.js'
import { errorBody } from './error-body.js'
import { bulkBoundRefusal } from './bulk-create.js'
import { routeConfigOf } from '../core/route-config-read.js'

const FRAMEWORK_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'Send the request body as application/json',
  },
  FST_ERR_CTP_INVALID_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the request body as application/json' },
  FST_ERR_CTP_EMPTY_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the request body as application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than 1 MiB' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'BAD_REQUEST', message: 'The request body is empty; send a JSON object' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'BAD_REQUEST', message: 'The request body is not valid JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'BAD_REQUEST',
    message: 'The Content-Length header does not match the body',
  },
  FST_ERR_BAD_URL: { code: 'BAD_REQUEST', message: 'The URL is malformed' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'NOT_FOUND', message: 'Not found' },
}

const CODE_BY_STATUS = new Map<number, ErrorCode>(Object.entries(ERROR_STATUS).map(([code, status]) => [status, code as ErrorCode]))

/** How an error is written in the body. */
export type ErrorRenderer = (error: AppError) => unknown

const restBody: ErrorRenderer = (error) => errorBody(error.code, error.message, error.details)

/** One error handler for every route; a route that says `config.errorBody: 'graphql'` gets `renderers.graphql`. */
export function registerErrorHandling(app: FastifyInstance, renderers: { graphql: ErrorRenderer }): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const render = routeConfigOf(request).errorBody === 'graphql' ? renderers.graphql : restBody
    sendError(fromFastify(error, request), request, reply, render)
  })

  app.setNotFoundHandler((request, reply) =>
    sendError(new AppError('NOT_FOUND', `No resource at ${request.method} ${request.url.split('?')[0]}`), request, reply),
  )
}

/** What runs before a framework error is answered, per app: no route's hooks run for such a request. */
const frameworkErrorHooks = new WeakMap<FastifyInstance, (request: FastifyRequest, reply: FastifyReply) => Promise<void>>()

/** Runs `hook` before each framework error of `app` is answered (the rate limit counts them); an AppError it throws is answered instead. */
export function beforeFrameworkErrors(app: FastifyInstance, hook: (request: FastifyRequest, reply: FastifyReply) => Promise<void>): void {
  frameworkErrorHooks.set(app, hook)
}

/** Errors the router meets before any route runs (a malformed URL, an over-long parameter). */
export function onFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const hook = frameworkErrorHooks.get(request.server)
  if (hook === undefined) return sendError(fromFastify(error, request), request, reply)
  hook(request, reply).then(
    () => sendError(fromFastify(error, request), request, reply),
    (refusal: FastifyError) => sendError(fromFastify(refusal, request), request, reply),
  )
}

/** Requests Node's HTTP parser cannot read: answered on the socket in the same error body. */
export function onClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  if (socket.writable && error.code !== 'ERR_HTTP_REQUEST_TIMEOUT') {
    const message = error.code === 'HPE_HEADER_OVERFLOW' ? 'The request headers are too large' : 'The request is malformed'
    const body = JSON.stringify(errorBody('BAD_REQUEST', message))
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(error)
}

/** The framework's own errors in our words; the rest as every transport turns them (http/to-app-error.ts). */
function fromFastify(error: FastifyError, request: FastifyRequest): AppError {
  if (isAppError(error)) return toAppError(error, request)
  if (error.validation) return fromValidation(error, request)
  if (error.statusCode === 400 && /prototype property/.test(error.message)) {
    // secure-json-parse refuses __proto__ and constructor.prototype keys (prototype poisoning).
    return new AppError('BAD_REQUEST', 'The request body holds a forbidden key (__proto__ or constructor.prototype)')
  }
  const known = error.code === undefined ? undefined : FRAMEWORK_ERRORS[error.code]
  if (known) return new AppError(known.code, known.message)
  const status = error.statusCode ?? 500
  const code = status >= 400 && status < 500 ? CODE_BY_STATUS.get(status) : undefined
  if (code !== undefined) return new AppError(code, 'The request cannot be served')
  return toAppError(error, request)
}

function fromValidation(error: FastifyError, request: FastifyRequest): AppError {
  const details = toErrorDetails(error.validation ?? [], error.validationContext === 'body' ? undefined : 'is not a known parameter')
  switch (error.validationContext) {
    case 'body':
      // A body that is JSON but not the resource's shape is 422; no body at all is a bad request, and a bulk write's array past its bounds is refused whole.
      if (request.body === undefined) return new AppError('BAD_REQUEST', 'A JSON object is required as the request body')
      return bulkBoundRefusal(error.validation ?? [], request.body) ?? new AppError('VALIDATION_ERROR', 'The request body is not valid', details)
    case 'params':
      return new AppError('NOT_FOUND', 'Not found')
    default:
      return new AppError('BAD_REQUEST', 'The query parameters are not valid', details)
  }
}

/** Answers `error` in the error body (`render`, REST's by default), with the headers its status calls for. */
export function sendError(error: AppError, request: FastifyRequest, reply: FastifyReply, render = restBody): void {
  if (error.status === 401) reply.header('www-authenticate', bearerChallenge(request.headers.authorization))
  else if (error.requiredScope !== undefined)
    reply.header('www-authenticate', `Bearer realm="threadline", error="insufficient_scope", scope="${error.requiredScope}"`)
  if (error.retryAfterS !== undefined) reply.header('retry-after', error.retryAfterS)
  else if (error.status === 503) reply.header('retry-after', 1)
  reply.code(error.status).send(render(error))
}

/** RFC 6750 §3: name the realm, and say why a token that was sent was refused. */
function bearerChallenge(authorization: string | undefined): string {
  if (authorization === undefined) return 'Bearer realm="threadline"'
  const reason = /^Bearer +\S/i.test(authorization) ? 'invalid_token' : 'invalid_request'
  return `Bearer realm="threadline", error="${reason}"`
}
