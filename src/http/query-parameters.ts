// One rule for the query string of every API route: a parameter the route does not take is 400
// BAD_REQUEST with one `details` item per parameter, never ignored (an ignored `_embed=posts` or a
// misspelt `selct=name` answers 200 and looks honoured). A list judges its own query as it parses it
// (collections/collection-query.ts: a name that is not a field of the collection); every other route
// is judged here, as it is registered, against the parameters the API description gives it: those
// of its representation (`select`, `include`, `<relation>.limit`: openapi/representation-parameters.ts),
// or none. Their values are judged where they are read (collections/embedding.ts).
import type { preValidationHookHandler, RouteOptions } from 'fastify'
import { AppError } from '../errors.js'
import { representationParameters } from './openapi/representation-parameters.js'

/** For the API's routes (an onRoute hook of their plugin): a route that is not a list refuses the query parameters it does not take. */
export function refuseUndeclaredQueryParameters(route: RouteOptions): void {
  if (route.config?.collection !== undefined) return
  const shape = route.config?.representation
  const taken = new Set(shape === undefined ? [] : representationParameters(shape).map(({ name }) => String(name)))
  const offered = taken.size === 0 ? 'this operation takes no query parameters' : `the parameters here are ${[...taken].join(', ')}`
  // A callback hook, not an async one: the request path gains no promise.
  const refuse: preValidationHookHandler = (request, _reply, done) => {
    const unknown = Object.keys(request.query as Record<string, unknown>).filter((name) => !taken.has(name))
    if (unknown.length === 0) return done()
    done(
      new AppError(
        'BAD_REQUEST',
        'The query parameters are not valid',
        unknown.map((field) => ({ field, message: `is not a parameter of this operation: ${offered}` })),
      ),
    )
  }
  const hooks = route.preValidation
  if (hooks === undefined) route.preValidation = [refuse]
  else route.preValidation = Array.isArray(hooks) ? [refuse, ...hooks] : [refuse, hooks]
}
