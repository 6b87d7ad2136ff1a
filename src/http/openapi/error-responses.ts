// The error answers of the API description: one response component per status, named and described
// by the error catalogue (src/errors.ts, which the REST handler, the GraphQL formatter and the
// subscription transports read too), with an example body; and which statuses an operation can answer.
import { ERROR_CATALOGUE, type ErrorCode } from '../../errors.js'
import { COMMON_HEADERS, READ_HEADERS, headerRefs, type AnswerHeader } from './headers.js'

interface ErrorResponse {
  /** The component's name in `components.responses`: the catalogue's title, without spaces. */
  name: string
  description: string
  /** An `error` body. */
  example: Record<string, unknown>
  /** What the answer carries besides the common headers. */
  headers?: readonly AnswerHeader[]
}

/**
 * The example body of each code the document describes, and the headers its answer carries; the
 * name and description come from the error catalogue (src/errors.ts), as the handlers' statuses do.
 * A code without an example here (METHOD_NOT_ALLOWED: no described operation answers it) is not in
 * the document.
 */
const EXAMPLES: Partial<Record<ErrorCode, Pick<ErrorResponse, 'example' | 'headers'>>> = {
  BAD_REQUEST: {
    example: {
      code: 'BAD_REQUEST',
      message: 'The query parameters are not valid',
      details: [{ field: 'sort', message: '"colour" is not a field of this collection' }],
    },
  },
  UNAUTHENTICATED: {
    example: { code: 'UNAUTHENTICATED', message: 'Authentication required: send Authorization: Bearer <token>' },
    headers: ['WWW-Authenticate'],
  },
  // WWW-Authenticate when the token's scope is what is missing (insufficient_scope).
  FORBIDDEN: { example: { code: 'FORBIDDEN', message: 'Only an admin may do this' }, headers: ['WWW-Authenticate'] },
  NOT_FOUND: { example: { code: 'NOT_FOUND', message: 'User not found' } },
  NOT_ACCEPTABLE: { example: { code: 'NOT_ACCEPTABLE', message: 'This API answers in application/json or application/vnd.threadline+json' } },
  // Retry-After when the conflict is a request with the same Idempotency-Key still running.
  CONFLICT: { example: { code: 'CONFLICT', message: 'The e-mail address is taken' }, headers: ['Retry-After'] },
  PRECONDITION_FAILED: { example: { code: 'PRECONDITION_FAILED', message: 'The resource has changed since you read it' } },
  PAYLOAD_TOO_LARGE: { example: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than 1 MiB' } },
  UNSUPPORTED_MEDIA_TYPE: { example: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the request body as application/json' } },
  VALIDATION_ERROR: {
    example: { code: 'VALIDATION_ERROR', message: 'The request body is not valid', details: [{ field: 'email', message: 'must be a valid e-mail address' }] },
  },
  RATE_LIMITED: { example: { code: 'RATE_LIMITED', message: 'Too many requests: 300 per 60 s. Retry in 12 s.' }, headers: ['Retry-After'] },
  INTERNAL_ERROR: { example: { code: 'INTERNAL_ERROR', message: 'Something went wrong on our side; quote request id 3f1c9a' } },
  SERVICE_UNAVAILABLE: { example: { code: 'SERVICE_UNAVAILABLE', message: 'The database is busy; retry in a moment' }, headers: ['Retry-After'] },
}

/** The error answers, by status, in the catalogue's order (`components.responses` lists them so). */
const ERRORS: Record<number, ErrorResponse | undefined> = Object.fromEntries(
  (Object.entries(ERROR_CATALOGUE) as [ErrorCode, (typeof ERROR_CATALOGUE)[ErrorCode]][]).flatMap(([code, { status, title, description }]) => {
    const described = EXAMPLES[code]
    return described === undefined ? [] : [[status, { name: title.replaceAll(' ', ''), description, ...described }]]
  }),
)

/** Whether an operation may declare this status among its errors: there is a component for it. */
export const isDescribedError = (status: number): boolean => ERRORS[status] !== undefined

/**
 * The error statuses an operation can answer, from what it takes and who may call it, and those
 * its route declares (`declared`: what only the feature knows, such as a conflict with the data).
 */
export function errorStatusesOf(operation: {
  method: string
  access: string
  hasPathParameters: boolean
  hasBody: boolean
  /** It takes an Idempotency-Key: the key still running is 409, used for another request 422. */
  idempotencyKeys: boolean
  declared: readonly number[]
}): number[] {
  const { method, access, hasPathParameters, hasBody, idempotencyKeys, declared } = operation
  const statuses = [
    400,
    401,
    ...(access === 'signed-in' ? [403] : []),
    ...(hasPathParameters ? [404] : []),
    406,
    ...(method === 'PUT' || method === 'PATCH' || method === 'DELETE' ? [412] : []),
    ...(hasBody ? [413, 415, 422] : []),
    ...(idempotencyKeys ? [409, 422] : []),
    429,
    500,
    503,
  ]
  return [...new Set([...statuses, ...declared])].sort((a, b) => a - b)
}

/** The reference to the error answer for a status. */
export const errorResponseRef = (status: number) => ({ $ref: `#/components/responses/${ERRORS[status]?.name}` })

/** `components.responses`: the 304 and the error answers. */
export function responseComponents(): Record<string, unknown> {
  const components: Record<string, unknown> = {
    NotModified: {
      description: 'Not modified: If-None-Match (or If-Modified-Since) matched; no body, the same validators.',
      headers: headerRefs([...COMMON_HEADERS, ...READ_HEADERS]),
    },
  }
  for (const error of Object.values(ERRORS)) {
    if (error === undefined) continue
    const { name, description, example, headers = [] } = error
    components[name] = {
      description,
      headers: headerRefs([...COMMON_HEADERS, ...headers]),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: { error: example } } },
    }
  }
  return components
}
