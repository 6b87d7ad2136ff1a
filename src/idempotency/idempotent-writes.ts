// Idempotency-Key on writes (the IETF httpapi draft "The Idempotency-Key HTTP Header Field", as
// Stripe has it): a client that retries a write it sent with a key gets the first answer again,
// marked `Idempotent-Replayed: true`, and the write runs once. Per caller (the rate limit's caller
// key: the user), kept in the database for IDEMPOTENCY_TTL_S from the key's first use, so a retry
// after a restart, or on another instance, finds it too.
//
// - Only a caller who can write has keys: an anonymous caller or a read token writes nothing, so
//   its key is not read at all (a read token cannot replay what its user's write token kept).
// - The write's own transaction marks the key done as it commits (db/write-transaction.ts's
//   withBeforeCommit), so "the write runs once" holds through faults: a claim whose write was done
//   and whose answer was lost (its process stopped, keeping the answer failed) is never taken over
//   when its lease ends; its retry is 409 saying so.
//
// - The key is claimed before the handler runs (after the body was read and validated: a request
//   refused before it would do nothing, and runs again when retried). The claim's row is the lock:
//   a second request with the key while the first runs is 409 with Retry-After.
// - The answer is kept as it leaves the handler, before the return preference and compression
//   (first of the route's onSend hooks), so a retry gets the answer its own Prefer and
//   Accept-Encoding ask for. An answer is kept only when a write was done (committed): a refusal,
//   a GraphQL answer whose mutations all failed, and a 429 or 5xx keep nothing, and their retry runs.
// - A kept body is bounded (idempotency-store.ts: per answer and per caller in all); past the
//   bounds the status and headers are kept, and the replay is them with no body, marked
//   `Idempotent-Body-Omitted: true`.
// - The same key with another request (method, URL, or body by SHA-256) is 422 VALIDATION_ERROR
//   naming the header; a key that is empty or longer than 255 characters is 400.
// - A replayed answer costs none of the write's own points, and is charged what it sends, as any
//   answer is (src/limits/answer-bytes.ts): cheap for the database, not for the process and the network.
import { hash } from 'node:crypto'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler, RouteOptions } from 'fastify'
import { type Caller, grants } from '../core/caller.js'
import type { Db } from '../db/create-database.js'
import { withBeforeCommit } from '../db/write-transaction.js'
import { AppError } from '../errors.js'
import { callerKey } from '../limits/rate-limit.js'
import type { IdempotencyStore, KeptAnswer } from './idempotency-store.js'

/** The methods whose requests may carry a key. */
export const KEYED_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255
/** The answer's headers that are part of it, kept and replayed with it. */
const KEPT_HEADERS = ['content-type', 'location', 'etag', 'last-modified', 'cache-control'] as const
/** What a second request with a key whose write still runs is told to wait. */
const RUNNING_RETRY_AFTER_S = 1
/** The header that marks a replay whose body was past the bounds, and was not kept. */
export const BODY_OMITTED_HEADER = 'idempotent-body-omitted'

function isTransient(status: number): boolean {
  return status === 429 || status >= 500
}

/** Whether the caller can write anything: only their keys are read and their answers kept. */
const canWrite = (caller: Caller | null): caller is Caller => caller !== null && grants(caller, 'write')

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
   * Checks the request's key: 'run' when it has none, its caller cannot write, or it claimed the
   * key; 'replayed' when the kept answer was sent (the caller stops). Throws 400, 409 or 422. For a
   * route that decides itself which of its requests are writes (a GraphQL mutation); the route
   * carries `watchWrites` and `keepAnswer`.
   */
  begin(request: FastifyRequest, reply: FastifyReply): Promise<Begun>
  /** The preHandler hook of such a route: the writes its handler runs mark a key `begin` claims done, in their own transactions. */
  watchWrites: preHandlerHookHandler
  /** The onSend hook that keeps the answers of requests `begin` claimed: first of the route's onSend hooks. */
  keepAnswer: onSendHookHandler
}

interface Claimed {
  caller: string
  key: string
  /** A write transaction of the request marked the key done (it commits with that write). */
  writeDone: boolean
}

export function createIdempotentWrites(store: IdempotencyStore, log: FastifyBaseLogger): IdempotentWrites {
  const claimed = new WeakMap<FastifyRequest, Claimed>()

  async function begin(request: FastifyRequest, reply: FastifyReply): Promise<Begun> {
    const header = request.headers['idempotency-key']
    // Authorized before the key is read: a caller who cannot write gets its refusal, never a kept answer.
    if (header === undefined || !canWrite(request.caller)) return 'run'
    const key = readKey(header)
    const caller = callerKey(request, request.caller)
    const claim = await store.claim(caller, key, fingerprintOf(request))
    switch (claim.kind) {
      case 'claimed':
        claimed.set(request, { caller, key, writeDone: false })
        return 'run'
      case 'running':
        throw new AppError(
          'CONFLICT',
          `A request with this Idempotency-Key is still being processed; retry in ${RUNNING_RETRY_AFTER_S} s to get its answer`,
          undefined,
          { retryAfterS: RUNNING_RETRY_AFTER_S },
        )
      case 'answer-lost':
        throw new AppError('CONFLICT', 'The write sent with this Idempotency-Key was done, but its answer was lost: it will not run again', [
          { field: 'Idempotency-Key', message: 'its write was done: read the resource to see its state, and use a new key for a new write' },
        ])
      case 'other-request':
        throw new AppError('VALIDATION_ERROR', 'This Idempotency-Key was used for another request', [
          { field: 'Idempotency-Key', message: 'was first sent with another method, URL or body: use a new key for a new request' },
        ])
      case 'answered':
        replay(reply, claim.answer)
        return 'replayed'
    }
  }

  /** What every write transaction of the request runs before its commit: the key it claimed, if any, marked done. */
  const markWriteDone =
    (request: FastifyRequest) =>
    async (trx: Db): Promise<void> => {
      const owned = claimed.get(request)
      if (owned === undefined) return
      await store.markWriteDone(trx, owned.caller, owned.key)
      owned.writeDone = true
    }

  /**
   * The scope of withBeforeCommit each watched request runs in, ended as its answer leaves
   * (keepAnswer): its handler's writes are done by then, and the claim is settled there.
   */
  const scopes = new WeakMap<FastifyRequest, () => void>()
  const watch = (request: FastifyRequest, done: () => void): void => {
    scopes.set(request, withBeforeCommit(markWriteDone(request), done))
  }

  // A callback hook: a replayed answer was sent, and the route's handler must not run. The handler
  // is called from `done`, so it runs (and its writes begin) within withBeforeCommit.
  const checkKey: preHandlerHookHandler = (request, reply, done) => {
    begin(request, reply).then((begun) => {
      if (begun === 'replayed') return
      if (claimed.has(request)) watch(request, () => done())
      else done()
    }, done)
  }

  // Only a request that may claim a key is watched: the asynchronous context withBeforeCommit runs
  // in (AsyncLocalStorage) turns on the promise hooks of the whole process while it is in use, and
  // every promise then costs more.
  const watchWrites: preHandlerHookHandler = (request, _reply, done) =>
    request.headers['idempotency-key'] === undefined || !canWrite(request.caller) ? done() : watch(request, () => done())

  const keepAnswer: onSendHookHandler = (request, reply, payload, done) => {
    scopes.get(request)?.()
    const owned = claimed.get(request)
    if (owned === undefined) return done(null, payload)
    claimed.delete(request)
    const { caller, key, writeDone } = owned
    const answer = keptAnswerOf(reply, payload)
    // A write done whose answer says it failed (a 5xx after the commit): the claim stays, done, and
    // its retry learns that the write was done once its lease ends.
    if (writeDone && answer === undefined) return done(null, payload)
    const settled = writeDone && answer !== undefined ? store.complete(caller, key, answer) : store.release(caller, key)
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
    watchWrites,
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
  return hash('sha256', `${method} ${url}\n${JSON.stringify(body ?? null)}`, 'hex')
}

function fingerprintOf(request: FastifyRequest): string {
  return requestFingerprint(request.method, request.url, request.body)
}

/** The kept answer again; one kept without its body: the status and headers, no body, and the header that says so. */
function replay(reply: FastifyReply, answer: KeptAnswer): void {
  reply.code(answer.status).headers(answer.headers).header('idempotent-replayed', 'true')
  if (answer.bodyOmitted === true) {
    reply.removeHeader('content-type')
    reply.header(BODY_OMITTED_HEADER, 'true')
  }
  reply.send(answer.body ?? undefined)
}

/** The answer to keep, or undefined when it says the write failed (429, 5xx) or it is not text. */
function keptAnswerOf(reply: FastifyReply, payload: unknown): KeptAnswer | undefined {
  const status = reply.statusCode
  if (isTransient(status)) return undefined
  if (payload !== undefined && payload !== null && typeof payload !== 'string') return undefined
  const body = payload === undefined || payload === null || payload === '' ? null : payload
  const headers: Record<string, string> = {}
  for (const name of KEPT_HEADERS) {
    const value = reply.getHeader(name)
    if (value !== undefined) headers[name] = String(value)
  }
  return { status, headers, body }
}
