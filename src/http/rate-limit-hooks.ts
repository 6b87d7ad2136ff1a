// The rate limit on HTTP (its policy: src/limits/rate-limit.ts): every request counted as it arrives,
// one answered before that hook ran (a CORS preflight) counted as it leaves, one answered before
// routing (a malformed URL) counted by the error handler. The charge a route takes more by
// (RateLimitCharger) is handed by the composition root to what uses it: the features' routes, GraphQL.
import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.js'
import type { RequestCounting } from '../limits/rate-limit.js'
import { errorBody } from './error-body.js'
import { beforeFrameworkErrors } from './error-handler.js'

/** Counts every HTTP request by the rate limit (nothing when it is off: `requests` undefined). */
export function registerRateLimit(app: FastifyInstance, rateLimit: { requests: RequestCounting | undefined }): void {
  const { requests } = rateLimit
  if (requests === undefined) return
  // What each request took and what its caller had left (src/limits/rate-limit.ts), part of the
  // request's shape from the start.
  app.decorateRequest('rateLimitCharged', undefined)
  app.decorateRequest('rateLimitRemaining', undefined)
  const { countArrival, arrive, isUncounted } = requests
  app.addHook('onRequest', countArrival)
  // Answered before the hook above ran (a CORS preflight, answered by the CORS hook):
  // counted as it leaves; one that is past the allowance is refused all the same.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (isUncounted(request)) return done(null, payload)
    arrive(request, reply).then(
      () => done(null, payload),
      (error: unknown) => {
        if (!(error instanceof AppError) || reply.statusCode >= 400) return done(null, payload)
        reply.code(error.status).header('content-type', 'application/json; charset=utf-8')
        if (error.retryAfterS !== undefined) reply.header('retry-after', error.retryAfterS)
        done(null, JSON.stringify(errorBody(error.code, error.message, error.details)))
      },
    )
  })
  // Answered before routing (a malformed URL): no route's hooks run, so the error handler asks.
  beforeFrameworkErrors(app, arrive)
}
