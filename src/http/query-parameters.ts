// One rule for the query string of every API route: a parameter the route does not take is 400
// BAD_REQUEST with one `details` item per parameter, never ignored (an ignored `_embed=posts` or a
// misspelt `selct=name` answers 200 and looks honoured). A list judges its own query as it parses it
// (collections/collection-query.ts: a name that is not a field of the collection); every other route
// is judged here, as it is registered, against the parameters the API description gives it: those
// of its representation (`select`, `include`, `<relation>.limit`: openapi/representation-parameters.ts),
// or none. Their values are judged where they are read (collections/embedding.ts).
//
// Before that, and before anything reads the query, json-server's query words are read here, once
// for every GET of the API (collections/json-server-words.ts): the query is rewritten in Threadline's
// words, or refused. A query without them pays one look at its keys. The representation cache keys
// its answers by the URL as sent, so an answer is never kept under another spelling's key.
import type { FastifyRequest, preValidationHookHandler, RouteOptions } from 'fastify'
import { isJsonServerWord, mayHoldJsonServerWords, translateJsonServerWords, type WordTarget } from '../collections/json-server-words.js'
import { AppError, type ErrorDetail } from '../errors.js'
import { representationParameters } from './openapi/representation-parameters.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Of each parameter a json-server word became, the word as sent; null when the query held none (query-parameters.ts). */
    queryWords: ReadonlyMap<string, string> | null
  }
}

/**
 * For the API's routes (an onRoute hook of their plugin): a GET reads json-server's words, and a
 * route that is not a list refuses the query parameters it does not take.
 */
export function judgeQueryParameters(route: RouteOptions): void {
  const collection = route.config?.collection
  const shape = route.config?.representation
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  const target: WordTarget | undefined =
    methods.includes('GET') || methods.includes('HEAD') ? { collection, relations: shape?.relations ?? {}, references: shape?.references ?? {} } : undefined
  const taken =
    collection !== undefined
      ? undefined
      : new Set(shape === undefined ? [] : representationParameters(shape, { aggregates: false }).map(({ name }) => String(name)))
  const offered = taken === undefined || taken.size === 0 ? 'this operation takes no query parameters' : `the parameters here are ${[...taken].join(', ')}`
  // A callback hook, not an async one: the request path gains no promise.
  const judge: preValidationHookHandler = (request, _reply, done) => {
    let refused: readonly ErrorDetail[] = []
    if (target !== undefined && mayHoldJsonServerWords(request.query as Record<string, unknown>)) {
      try {
        const translated = translateJsonServerWords(target, request.query as Record<string, unknown>)
        if (translated !== undefined) {
          request.query = translated.query
          request.queryWords = translated.given
        }
      } catch (error) {
        // A list's other parameters are judged as it parses them; a single item's, here, with the words.
        if (taken === undefined || !(error instanceof AppError)) return done(error as Error)
        refused = error.details ?? []
      }
    }
    if (taken === undefined) return done()
    const names = Object.keys(request.query as Record<string, unknown>)
    // Once the words are refused, they are not named again as parameters the operation does not take.
    const unknown = names.filter((name) => !taken.has(name) && !(refused.length > 0 && isJsonServerWord(target as WordTarget, name)))
    if (unknown.length === 0 && refused.length === 0) return done()
    const details = [...refused, ...unknown.map((field) => ({ field, message: `is not a parameter of this operation: ${offered}` }))]
    done(
      new AppError(
        'BAD_REQUEST',
        'The query parameters are not valid',
        details.sort((a, b) => names.indexOf(a.field) - names.indexOf(b.field)),
      ),
    )
  }
  const hooks = route.preValidation
  if (hooks === undefined) route.preValidation = [judge]
  else route.preValidation = Array.isArray(hooks) ? [judge, ...hooks] : [judge, hooks]
}

/** The error to throw for `error`: a refusal of a parameter that a json-server word became names the word as sent. */
export function namingWordsGiven(request: FastifyRequest, error: unknown): unknown {
  const given = request.queryWords
  if (given === null || !(error instanceof AppError) || error.details === undefined) return error
  return new AppError(
    error.code,
    error.message,
    error.details.map((detail) => ({ ...detail, field: given.get(detail.field) ?? detail.field })),
  )
}

/** The query string of the request in Threadline's words: as sent, or as its json-server words were read. */
export function searchOf(request: FastifyRequest): string {
  if (request.queryWords === null) return request.url.split('?', 2)[1] ?? ''
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(request.query as Record<string, unknown>)) {
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one))
  }
  return params.toString()
}
