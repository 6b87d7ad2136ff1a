// Every HTTP answer charged and bounded by its bytes, the backstop after the routes' own bounds (the
// policy and its figures: src/limits/answer-bytes.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorCode } from '../errors.js'
import { type AnswerCharger, ANSWER_BYTES_PER_POINT, answerTooLargeMessage, bodyBytes, extraAnswerPoints, MAX_ANSWER_BYTES } from '../limits/answer-bytes.js'
import { errorBody } from './error-body.js'
import { routeConfigOf } from '../core/route-config-read.js'

export interface AnswerBytesOptions {
  /** @default MAX_ANSWER_BYTES */
  maxBytes?: number
  /** The rate limit's charge for answers; undefined when rate limiting is off (the bound still holds). */
  charge: AnswerCharger | undefined
}

const PAYLOAD_TOO_LARGE: ErrorCode = 'PAYLOAD_TOO_LARGE'
const REST_ADVICE = 'ask for fewer items (limit) or fewer embedded relations (include)'

/**
 * The onSend hook that charges every HTTP answer by its bytes and refuses one over the bound.
 * Registered after HTTP caching's own onSend, so that a 304 is charged for what it sends (nothing),
 * and before compression (a route's own hook), which would hide the bytes the process made. A
 * callback hook: most answers are under one point, and leave at the first line.
 */
export function registerAnswerBytes(app: FastifyInstance, options: AnswerBytesOptions): void {
  const maxBytes = options.maxBytes ?? MAX_ANSWER_BYTES
  const { charge } = options
  app.addHook('onSend', (request, reply, payload, done) => {
    const bytes = bodyBytes(payload)
    if (bytes <= ANSWER_BYTES_PER_POINT) return done(null, payload)
    if (bytes > maxBytes) return done(null, refuse(request, reply, bytes, maxBytes))
    const config = routeConfigOf(request)
    if (charge === undefined || config?.unmetered === true || config?.packagedFile === true) return done(null, payload)
    charge(request, reply, extraAnswerPoints(bytes)).then(
      () => done(null, payload),
      (error: unknown) => done(error as Error),
    )
  })
}

/** Turns the answer into PAYLOAD_TOO_LARGE, in the route's error shape; its validators go with the body they described. */
function refuse(request: FastifyRequest, reply: FastifyReply, bytes: number, maxBytes: number): string {
  request.log.warn({ answerBytes: bytes, maxBytes }, 'answer over the bound refused')
  const message = answerTooLargeMessage(bytes, maxBytes, REST_ADVICE)
  for (const header of ['etag', 'last-modified', 'link', 'location', 'content-encoding']) reply.removeHeader(header)
  reply.code(413).header('content-type', 'application/json; charset=utf-8').header('cache-control', 'no-store')
  const graphql = routeConfigOf(request).errorBody === 'graphql'
  return JSON.stringify(graphql ? { errors: [{ message, extensions: { code: PAYLOAD_TOO_LARGE } }] } : errorBody(PAYLOAD_TOO_LARGE, message))
}
