// The request id: the client's X-Request-Id when it is sane, else a UUID; echoed on every answer,
// and quoted by the log lines and by a masked INTERNAL_ERROR.
import { randomFillSync } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'

/** What a request id may be: short, and nothing a log line or a header would have to escape. */
const SANE_REQUEST_ID = /^[\w.:@-]{1,128}$/

/** Fastify's `genReqId`: the id a request is known by. */
export function generateRequestId(request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUuid()
}

/** Random bytes for 256 ids, drawn at once (as crypto.randomUUID keeps a cache of its own). */
const RANDOM = Buffer.allocUnsafe(16 * 256)
let randomAt = RANDOM.length
const UUID_TEXT = Buffer.allocUnsafe(36)
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1')

/**
 * A random UUID (version 4, RFC 9562), as crypto.randomUUID makes one, written out as one flat
 * string. crypto.randomUUID joins it from 20 pieces, a chain of string parts that every later use
 * (the header's check, the log line) flattens again; this costs half as much, and the id an answer
 * carries while its request waits is 36 bytes rather than a few hundred.
 */
export function randomUuid(): string {
  if (randomAt === RANDOM.length) {
    randomFillSync(RANDOM)
    randomAt = 0
  }
  const from = randomAt
  randomAt += 16
  let at = 0
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) UUID_TEXT[at++] = 0x2d // '-'
    let byte = RANDOM[from + i]!
    if (i === 6)
      byte = (byte & 0x0f) | 0x40 // the version, 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80 // the variant, 10xx
    UUID_TEXT[at++] = HEX_DIGITS[byte >> 4]!
    UUID_TEXT[at++] = HEX_DIGITS[byte & 0x0f]!
  }
  return UUID_TEXT.toString('latin1', 0, 36)
}

/** Every answer carries its request's id in X-Request-Id. */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
}
