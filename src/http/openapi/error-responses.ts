// The error answers of the API description: one response component per status, with what it means
// and an example body, and which statuses an operation can answer. The table is kept apart so that
// it can be fed from the error catalogue (src/errors.ts) without touching the rest of the document.
import { COMMON_HEADERS, READ_HEADERS, headerRefs, type AnswerHeader } from './headers.js'

interface ErrorResponse {
  /** The component's name in `components.responses`. */
  name: string
  description: string
  /** An `error` body. */
  example: Record<string, unknown>
  /** What the answer carries besides the common headers. */
  headers?: readonly AnswerHeader[]
}

/** The error answers, by status; `components.responses` lists them in this order. */
const ERRORS: Record<number, ErrorResponse | undefined> = {
  400: {
    name: 'BadRequest',
    description: 'A query parameter is unknown or has a bad value, or the body is not JSON (`BAD_REQUEST`, with `details`).',
    example: { code: 'BAD_REQUEST', message: 'The query parameters are not valid', details: [{ field: 'sort', message: '"colour" is not a field of this collection' }] },
  },
  401: {
    name: 'Unauthenticated',
    description: 'No valid bearer token where one is needed, or a token sent that is not valid (`UNAUTHENTICATED`).',
    example: { code: 'UNAUTHENTICATED', message: 'Authentication required: send Authorization: Bearer <token>' },
    headers: ['WWW-Authenticate'],
  },
  403: { name: 'Forbidden', description: 'Signed in, but not allowed to do this (`FORBIDDEN`).', example: { code: 'FORBIDDEN', message: 'Only an admin may do this' } },
  404: {
    name: 'NotFound',
    description: 'No such resource, or not under the parent in the path, or not visible to the caller (`NOT_FOUND`).',
    example: { code: 'NOT_FOUND', message: 'User not found' },
  },
  406: {
    name: 'NotAcceptable',
    description: 'Accept admits no JSON, or names an unknown API version (`NOT_ACCEPTABLE`).',
    example: { code: 'NOT_ACCEPTABLE', message: 'This API answers in application/json or application/vnd.threadline+json' },
  },
  409: { name: 'Conflict', description: 'The change conflicts with the data: a taken e-mail address, the last admin (`CONFLICT`).', example: { code: 'CONFLICT', message: 'The e-mail address is taken' } },
  412: {
    name: 'PreconditionFailed',
    description: 'If-Match names no current representation (`PRECONDITION_FAILED`).',
    example: { code: 'PRECONDITION_FAILED', message: 'The resource has changed since you read it' },
  },
  413: { name: 'PayloadTooLarge', description: 'The body is larger than 1 MiB (`PAYLOAD_TOO_LARGE`).', example: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than 1 MiB' } },
  415: {
    name: 'UnsupportedMediaType',
    description: 'The body is not application/json or application/merge-patch+json in UTF-8 (`UNSUPPORTED_MEDIA_TYPE`).',
    example: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the request body as application/json' },
  },
  422: {
    name: 'ValidationError',
    description: "The body is JSON but breaks the resource's rules (`VALIDATION_ERROR`, one detail per field).",
    example: { code: 'VALIDATION_ERROR', message: 'The request body is not valid', details: [{ field: 'email', message: 'must be a valid e-mail address' }] },
  },
  429: {
    name: 'RateLimited',
    description: 'Over the allowance (`RATE_LIMITED`); retry after Retry-After seconds.',
    example: { code: 'RATE_LIMITED', message: 'Too many requests: 300 per 60 s. Retry in 12 s.' },
    headers: ['Retry-After'],
  },
  500: {
    name: 'InternalError',
    description: 'Something went wrong on the service\'s side (`INTERNAL_ERROR`); the message quotes the request id.',
    example: { code: 'INTERNAL_ERROR', message: 'Something went wrong on our side; quote request id 3f1c9a' },
  },
  503: {
    name: 'ServiceUnavailable',
    description: 'The store is busy or unreachable, or the rate limit cannot be checked (`SERVICE_UNAVAILABLE`); retry after Retry-After seconds.',
    example: { code: 'SERVICE_UNAVAILABLE', message: 'The database is busy; retry in a moment' },
    headers: ['Retry-After'],
  },
}

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
  declared: readonly number[]
}): number[] {
  const { method, access, hasPathParameters, hasBody, declared } = operation
  const statuses = [
    400,
    401,
    ...(access === 'signed-in' ? [403] : []),
    ...(hasPathParameters ? [404] : []),
    406,
    ...(method === 'PUT' || method === 'PATCH' || method === 'DELETE' ? [412] : []),
    ...(hasBody ? [413, 415, 422] : []),
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
