// The headers of the API description: the answer headers and the conditional-request headers, each a
// component described once, and the sets of answer headers the operations and error answers refer to.
import { API_VERSIONS } from '../versioning.js'

const header = (description: string, schema: Record<string, unknown>) => ({ description, schema })

/** `components.headers`, in the document's order. */
export const HEADERS = {
  XRequestId: header("The request's id: the X-Request-Id sent, or one made up. Quote it when reporting a problem.", { type: 'string' }),
  ApiVersion: header('The API version that served the request.', { type: 'integer', enum: [...API_VERSIONS] }),
  XRateLimitLimit: header('Requests allowed per window to this caller (when rate limiting is on).', { type: 'integer' }),
  XRateLimitRemaining: header('Requests left in the current window.', { type: 'integer' }),
  XRateLimitReset: header('Seconds until the window starts again.', { type: 'integer' }),
  RateLimit: header('The IETF draft\'s view of the same: `"anonymous";r=299;t=60`.', { type: 'string' }),
  RateLimitPolicy: header('The allowance: `"anonymous";q=300;w=60` (requests, window in seconds).', { type: 'string' }),
  RetryAfter: header('Seconds to wait before trying again.', { type: 'integer', minimum: 1 }),
  ETag: header('A weak validator of what the answer says; send it back in If-None-Match (reads) or If-Match (writes).', { type: 'string' }),
  LastModified: header('The newest `updatedAt` in the answer, as an HTTP date; If-Modified-Since is honoured for single resources.', { type: 'string' }),
  CacheControl: header('`public, max-age=N` for anonymous reads, `private, no-cache` with a token; `no-store` for a new token.', { type: 'string' }),
  Vary: header('`Accept, Authorization, Accept-Encoding`, after `Origin` when CORS is on.', { type: 'string' }),
  Link: header('RFC 8288 links to the `next`, `prev` (where there is one) and `first` pages, with the same query.', { type: 'string' }),
  Location: header('The path of the created resource.', { type: 'string', format: 'uri-reference' }),
  WWWAuthenticate: header(
    '`Bearer realm="threadline"`, with `error="invalid_token"` when the token sent was refused (401); on a 403, `error="insufficient_scope", scope="write"` when the token\'s scope is what is missing.',
    { type: 'string' },
  ),
  XOAuthScopes: header("With a token: the token's scope, `read` or `write`.", { type: 'string', enum: ['read', 'write'] }),
  XAcceptedOAuthScopes: header('With a token: the scope the operation needs (a `write` token has `read` too).', { type: 'string', enum: ['read', 'write'] }),
  IdempotentReplayed: header('`true` on an answer replayed for an Idempotency-Key sent before: the write did not run again.', {
    type: 'string',
    enum: ['true'],
  }),
  PreferenceApplied: header('The `return` preference the write honoured, when the request named one: `return=minimal` or `return=representation`.', {
    type: 'string',
    enum: ['return=minimal', 'return=representation'],
  }),
} as const

/** Each header component, by the header's name in an answer. */
const COMPONENT_OF = {
  'X-Request-Id': 'XRequestId',
  'API-Version': 'ApiVersion',
  'X-RateLimit-Limit': 'XRateLimitLimit',
  'X-RateLimit-Remaining': 'XRateLimitRemaining',
  'X-RateLimit-Reset': 'XRateLimitReset',
  RateLimit: 'RateLimit',
  'RateLimit-Policy': 'RateLimitPolicy',
  'Retry-After': 'RetryAfter',
  ETag: 'ETag',
  'Last-Modified': 'LastModified',
  'Cache-Control': 'CacheControl',
  Vary: 'Vary',
  Link: 'Link',
  Location: 'Location',
  'WWW-Authenticate': 'WWWAuthenticate',
  'X-OAuth-Scopes': 'XOAuthScopes',
  'X-Accepted-OAuth-Scopes': 'XAcceptedOAuthScopes',
  'Preference-Applied': 'PreferenceApplied',
  'Idempotent-Replayed': 'IdempotentReplayed',
} as const satisfies Record<string, keyof typeof HEADERS>

/** A header an answer may carry, as it is named in the answer. */
export type AnswerHeader = keyof typeof COMPONENT_OF

/** An answer's `headers`, each a reference to its component. */
export const headerRefs = (names: readonly AnswerHeader[]): Record<string, unknown> =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${COMPONENT_OF[name]}` }]))

/** What every answer carries (the rate-limit headers when rate limiting is on). */
export const COMMON_HEADERS: readonly AnswerHeader[] = [
  'X-Request-Id',
  'API-Version',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'X-OAuth-Scopes',
  'X-Accepted-OAuth-Scopes',
]

/** What a read's answer (and its 304) carries besides. */
export const READ_HEADERS: readonly AnswerHeader[] = ['ETag', 'Last-Modified', 'Cache-Control', 'Vary']

/** The request headers of conditional requests (RFC 9110 §13): `components.parameters`. */
export const CONDITIONS = {
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    description: 'ETags you hold: 304 Not Modified, without a body, when one is current.',
    schema: { type: 'string' },
    example: 'W/"y2F7QZgBpbUhzgzJub39IA88Jyo"',
  },
  IfModifiedSince: {
    name: 'If-Modified-Since',
    in: 'header',
    description: 'An HTTP date: 304 when the resource has not changed since (single resources only; If-None-Match wins).',
    schema: { type: 'string' },
    example: 'Wed, 25 Nov 2026 22:27:04 GMT',
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    description: 'The ETag you read: the write happens only if it is still current, else 412.',
    schema: { type: 'string' },
    example: 'W/"y2F7QZgBpbUhzgzJub39IA88Jyo"',
  },
} as const

export type Condition = keyof typeof CONDITIONS

/** The request headers that ask for a kind of answer (RFC 7240): `components.parameters` beside the conditions. */
export const PREFERENCES = {
  Prefer: {
    name: 'Prefer',
    in: 'header',
    description:
      '`return=minimal`: the status without the body (201 keeps Location; 200 becomes 204), with Preference-Applied. `return=representation` is the default. Other preferences are ignored.',
    schema: { type: 'string' },
    example: 'return=minimal',
  },
} as const

/** The request header that makes a write safe to retry (the IETF httpapi draft): `components.parameters` beside the preferences. */
export const RETRIES = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    description:
      'A key of your own for this write, 1 to 255 characters (a UUID): sent again with the same request within 24 hours (IDEMPOTENCY_TTL_S), it gets the first answer again, marked Idempotent-Replayed, and the write runs once. The same key with another method, URL or body is 422; while the first request runs, 409 with Retry-After. Only an answer to a write that was done is kept (a refusal, a 429 or a 5xx is not: its retry runs); a body over 256 KiB is replayed without it, marked Idempotent-Body-Omitted; once the write was done, its retry never runs it again. Keys are per caller, for callers who can write.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
    example: '5f0c6f2e-8a4b-4c1e-9d43-2b7f3a1e6c90',
  },
} as const
