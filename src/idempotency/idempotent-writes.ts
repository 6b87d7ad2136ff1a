// Idempotency-Key on writes (the IETF httpapi draft "The Idempotency-Key HTTP Header Field", as
// Stripe has it): a client that retries a write it sent with a key gets the first answer again,
// marked `Idempotent-Replayed: true`, and the write runs once. Per caller (the rate limit's caller
// key: the user, or the address of an anonymous client), kept in the database for
// IDEMPOTENCY_TTL_S from the key's first use, so a retry after a restart, or on another instance,
// finds it too.
//
// - The key is claimed before the handler runs (after the body was read and validated: a request
//   refused before it would do nothing, and runs again when retried). The claim's row is the lock:
//   a second request with the key while the first runs is 409 with Retry-After.
// - The answer is kept as it leaves the handler, before the return preference and compression
//   (first of the route's onSend hooks), so a retry gets the answer its own Prefer and
//   Accept-Encoding ask for. Every status is kept but 429 and the 5xx: a write refused for the
//   rate limit or failed on the service's side did not happen, and its retry runs.
// - The same key with another request (method, URL, or body by SHA-256) is 422 VALIDATION_ERROR
//   naming the header; a key that is empty or longer than 255 characters is 400.
// - A replayed answer costs no rate-limit point (what it took on arrival is given back).
import { createHash } from 'node:crypto'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler, RouteOptions } from 'fastify'
import { AppError, ERROR_CATALOGUE, type ErrorCode } from '../errors.js'
import { callerKey, refundRateLimit } from '../limits/rate-limit.js'
import type { IdempotencyStore, KeptAnswer } from './idempotency-store.js'

/** The methods whose requests may carry a key. */
export const KEYED_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255
/** The answer's headers that are part of it, kept and replayed with it. */
const KEPT_HEADERS = ['content-type', 'location', 'etag', 'last-modified', 'cache-control'] as const
/** What a second request with a key whose write still runs is told to wait. */
const RUNNING_RETRY_AFTER_S = 1
/** Error codes that say the work did not happen, or not wholly (a 429 or a 5xx): such an answer is not kept. */
const TRANSIENT_CODES = new Set((Object.keys(ERROR_CATALOGUE) as ErrorCode[]).filter((code) => isTransient(ERROR_CATALOGUE[code].status)))

function isTransient(status: number): boolean {
  return status === 429 || status >= 500
}

/** Whether a route takes an Idempotency-Key: the API's writes, but those that say they do not. */
export function takesIdempotencyKeys(method: string | readonly string[], config: { idempotencyKeys?: false } | undefined): boolean {
  const methods = ([] as string[]).concat(method)
  return config?.idempotencyKeys !== false && methods.some((one) => KEYED_METHODS.has(one))
}

export type Begun = 'run' | 'replayed'

export interface IdempotentWrites {
  /**
   * For the API's routes (an onRoute hook of their plugin): a write route checks the key before its
   * handler and keeps its answer; unless it declares `idempotencyKeys: false`. Reads carry no hook.
   */
  onApiRoute: (route: RouteOptions) => void
  /**
   * Checks the request's key: 'run' when it has none or claimed it; 'replayed' when the kept answer
   * was sent (the caller stops). Throws 400, 409 or 422. For a route that decides itself which of
   * its requests are writes (a GraphQL mutation); its answer is kept by `keepAnswer`.
   */
  begin(request: FastifyRequest, reply: FastifyReply): Promise<Begun>
  /** The onSend hook that keeps the answers of requests `begin` claimed: first of the route's onSend hooks. */
  keepAnswer: onSendHookHandler
}

interface Claimed {
  caller: string
  key: string
}

export function createIdempotentWrites(store: IdempotencyStore, log: FastifyBaseLogger): IdempotentWrites {
  const claimed = new WeakMap<FastifyRequest, Claimed>()

  async function begin(request: FastifyRequest, reply: FastifyReply): Promise<Begun> {
    const header = request.headers['idempotency-key']
    if (header === undefined) return 'run'
    const key = readKey(header)
    const caller = callerKey(request, request.caller ?? null)
    const claim = await store.claim(caller, key, fingerprintOf(request))
    switch (claim.kind) {
      case 'claimed':
        claimed.set(request, { caller, key })
        return 'run'
      case 'running':
        throw new AppError(
          'CONFLICT',
          `A request with this Idempotency-Key is still being processed; retry in ${RUNNING_RETRY_AFTER_S} s to get its answer`,
          undefined,
          { retryAfterS: RUNNING_RETRY_AFTER_S },
        )
      case 'other-request':
        throw new AppError('VALIDATION_ERROR', 'This Idempotency-Key was used for another request', [
          { field: 'Idempotency-Key', message: 'was first sent with another method, URL or body: use a new key for a new request' },
        ])
      case 'answered':
        await refundRateLimit(request, reply)
        replay(reply, claim.answer)
        return 'replayed'
    }
  }

  // A callback hook: a replayed answer was sent, and the route's handler must not run.
  const checkKey: preHandlerHookHandler = (request, reply, done) => {
    begin(request, reply).then((begun) => {
      if (begun === 'run') done()
    }, done)
  }

  const keepAnswer: onSendHookHandler = (request, reply, payload, done) => {
    const owned = claimed.get(request)
    if (owned === undefined) return done(null, payload)
    claimed.delete(request)
    const { caller, key } = owned
    const answer = keptAnswerOf(request, reply, payload)
    const settled = answer === undefined ? store.release(caller, key) : store.complete(caller, key, answer)
    settled.then(
      () => done(null, payload),
      (error: unknown) => {
        // The answer still goes out; the key stays claimed until its lease ends, so a retry meanwhile is 409.
        log.error({ err: error, idempotencyKey: key }, 'The answer to a write with an Idempotency-Key could not be kept')
        done(null, payload)
      },
    )
  }

  return {
    onApiRoute: (route) => {
      if (!takesIdempotencyKeys(route.method, route.config)) return
      const { preHandler, onSend } = route
      if (preHandler === undefined) route.preHandler = [checkKey]
      else route.preHandler = Array.isArray(preHandler) ? [checkKey, ...preHandler] : [checkKey, preHandler]
      if (onSend === undefined) route.onSend = [keepAnswer]
      else route.onSend = Array.isArray(onSend) ? [keepAnswer, ...onSend] : [keepAnswer, onSend]
    },
    begin,
    keepAnswer,
  }
}

/** The key of an Idempotency-Key header, or 400. Sent twice, Node joins the values: one request, one key. */
function readKey(header: string | string[]): string {
  const key = Array.isArray(header) ? header.join(', ') : header
  if (key.trim() === '' || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new AppError('BAD_REQUEST', 'The Idempotency-Key header is not valid', [
      { field: 'Idempotency-Key', message: `must hold from 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, such as a UUID` },
    ])
  }
  return key
}

/** What tells one request from another under the same key: the method, the URL (with its query) and the body as parsed. */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${url}\n`)
    .update(JSON.stringify(body ?? null))
    .digest('hex')
}

function fingerprintOf(request: FastifyRequest): string {
  return requestFingerprint(request.method, request.url, request.body)
}

function replay(reply: FastifyReply, answer: KeptAnswer): void {
  reply.code(answer.status).headers(answer.headers).header('idempotent-replayed', 'true')
  reply.send(answer.body ?? undefined)
}

/** The answer to keep, or undefined when the write did not happen (429, 5xx) or the answer is not text. */
function keptAnswerOf(request: FastifyRequest, reply: FastifyReply, payload: unknown): KeptAnswer | undefined {
  const status = reply.statusCode
  if (isTransient(status)) return undefined
  if (payload !== undefined && payload !== null && typeof payload !== 'string') return undefined
  const body = payload === undefined || payload === null || payload === '' ? null : payload
  if (body !== null && request.routeOptions.config.errorBody === 'graphql' && !didWork(body)) return undefined
  const headers: Record<string, string> = {}
  for (const name of KEPT_HEADERS) {
    const value = reply.getHeader(name)
    if (value !== undefined) headers[name] = String(value)
  }
  return { status, headers, body }
}

/**
 * For GraphQL, whose answers say 200 whatever happened: whether the answer (or, for a batch, any of
 * its answers) shows work that happened. One whose errors are all transient (the rate limit, the
 * store away) and whose data holds nothing did not happen; anything else did.
 */
function didWork(body: string): boolean {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return true
  }
  return (Array.isArray(parsed) ? parsed : [parsed]).some((answer: unknown) => {
    const { data, errors } = (answer ?? {}) as { data?: Record<string, unknown> | null; errors?: { extensions?: { code?: string } }[] }
    const transient = errors?.some((error) => TRANSIENT_CODES.has(error.extensions?.code as ErrorCode)) === true
    const anyData = data !== undefined && data !== null && Object.values(data).some((value) => value !== null)
    return !transient || anyData
  })
}
