// Answers charged and bounded by their bytes (docs/rest.md, Rate limits): the damage a large answer
// does is in bytes (serialized, held, compressed, sent), not in requests or fields, so what a
// caller is charged follows what it is sent. One point buys ANSWER_BYTES_PER_POINT bytes of
// answer; the first of them is the request's own point (or a WebSocket message's), so an
// ordinary answer costs nothing more, and a page of 100 posts of 100 KB (10 MB) costs 153 points.
// The bytes are those of the body as the route produced it, before the API's compression: the
// process serializes, holds and compresses all of them, whatever reaches the wire.
//
// No answer may exceed MAX_ANSWER_BYTES: past it, PAYLOAD_TOO_LARGE (413) in the error envelope,
// saying the bound and how to ask for less. GraphQL measures a result before it is serialized
// (jsonLengthWithin, src/graphql/pipeline/operation-pipeline.ts), so its text is never built, and bounds a
// batch together (src/graphql/graphql-routes.ts); the hook here is the backstop for every HTTP
// answer (src/http/answer-bytes.ts). A file of the package (a page's script) is charged its
// request's point alone: it is held once for everyone and cached by browsers.

import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * Bytes of answer one rate-limit point pays for: 64 KiB, about 60 full users or a page of 20
 * ordinary posts, so that nothing an ordinary client asks costs more than its request's point,
 * while 10 MB costs half an anonymous minute's allowance.
 */
export const ANSWER_BYTES_PER_POINT = 64 * 1024

/**
 * The most bytes one answer may hold: 16 MiB. The largest REST page (100 posts of 100,000
 * characters, about 10 MB) fits; far below V8's longest string (about 512 MiB, where
 * JSON.stringify throws), and a bound on what one request holds in memory while it is sent.
 */
export const MAX_ANSWER_BYTES = 16 * 2 ** 20

/** The points an answer of `bytes` costs beyond the first, which its request (or message) paid on arrival. */
export const extraAnswerPoints = (bytes: number): number => Math.max(0, Math.ceil(bytes / ANSWER_BYTES_PER_POINT) - 1)

/**
 * The UTF-8 bytes of a string or Buffer; 0 for anything else (a stream, or no body). A string of
 * up to `floor` UTF-16 units in three is at most `floor` bytes: it is not measured (the hot path).
 */
export function bodyBytes(payload: unknown, floor = ANSWER_BYTES_PER_POINT): number {
  if (typeof payload === 'string') return payload.length * 3 <= floor ? payload.length : Buffer.byteLength(payload)
  return Buffer.isBuffer(payload) ? payload.length : 0
}

/** The refusal of an answer over the bound, in words that say how to ask for less. */
export function answerTooLargeMessage(bytes: number | undefined, maxBytes: number, howToAskForLess: string): string {
  const size = bytes === undefined ? 'This answer would be' : `This answer would be ${bytes} bytes,`
  return `${size} more than the ${maxBytes} bytes (${maxBytes / 2 ** 20} MiB) an answer may hold: ${howToAskForLess}`
}

/** Takes `points` more from the request's caller for an answer already made: never refused, the headers report it. */
export type AnswerCharger = (request: FastifyRequest, reply: FastifyReply, points: number) => Promise<void>

/**
 * The length of `value` written as JSON, in UTF-16 units (a byte each for ASCII text), counted only
 * up to `max`: undefined past it. For an answer not yet serialized (a GraphQL result), so that one
 * over the bound is refused before its text is built: the walk costs a visit per value, where
 * JSON.stringify would build the whole string (and throws RangeError past V8's longest).
 * Escapes are not counted; a number counts as its longest.
 */
export function jsonLengthWithin(value: unknown, max: number): number | undefined {
  let length = 0
  const pending: unknown[] = [value]
  while (pending.length > 0) {
    const next = pending.pop()
    if (typeof next === 'string') length += next.length + 2
    else if (typeof next === 'number') length += NUMBER_CHARS
    else if (next === null || typeof next === 'boolean') length += 5
    else if (Array.isArray(next)) {
      length += 2 + next.length
      for (const item of next) pending.push(item)
    } else if (typeof next === 'object') {
      length += 2
      // for…in, not Object.entries: no array per object (an answer of 90,000 objects walked in
      // 2–7 ms instead of 11–23). Answers are plain objects: nothing inherited is enumerable.
      for (const key in next) {
        const item = (next as Record<string, unknown>)[key]
        if (item === undefined) continue
        length += key.length + 4
        pending.push(item)
      }
    }
    if (length > max) return undefined
  }
  return length
}

/** The longest a JSON number is written (-1.7976931348623157e+308). */
const NUMBER_CHARS = 24
