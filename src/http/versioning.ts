// API versions (docs/rest.md, Endpoints): a path prefix /api/v<N> wins; unversioned paths take the
// version from `Accept: application/vnd.threadline+json; version=N`, else v1. An unknown version,
// or an Accept header that admits no JSON at all, is 406, but on a collection's GET, which serves
// CSV and NDJSON too (collection-export.ts); the 406 lists the types the resource serves.
import type { onRequestHookHandler } from 'fastify'
import { AppError } from '../errors.js'
import { isAcceptable, isMediaType, parseAccept } from './accept.js'
import { EXPORT_MEDIA_TYPES, exportFormatOf, servesExports } from './export-formats.js'

export const API_VERSIONS = [1, 2] as const
export type ApiVersion = (typeof API_VERSIONS)[number]
export const DEFAULT_API_VERSION: ApiVersion = 1
export const VENDOR_MEDIA_TYPE = 'application/vnd.threadline+json'

/** Where the REST API is mounted: one prefix per version, and the negotiated unversioned paths. */
export const API_MOUNTS: readonly { prefix: string; version: ApiVersion | 'negotiated' }[] = [
  { prefix: '/api/v1', version: 1 },
  { prefix: '/api/v2', version: 2 },
  { prefix: '', version: 'negotiated' },
]

declare module 'fastify' {
  interface FastifyRequest {
    /** The API version this request is served by. */
    apiVersion: ApiVersion
  }
}

/** An onRequest hook for one mount: sets request.apiVersion, and says it in API-Version, or refuses with 406. */
export function versionHook(mount: ApiVersion | 'negotiated'): onRequestHookHandler {
  // A callback, not an async function: it runs for every request of the API.
  return (request, reply, done) => {
    const accept = readAccept(request.headers.accept)
    if (!accept.acceptable) {
      // Only then is the route asked whether it serves exports.
      const exports = servesExports(request)
      if (!(exports && exportFormatOf(request.headers.accept) !== undefined)) {
        return done(
          new AppError(
            'NOT_ACCEPTABLE',
            exports
              ? `This collection answers in application/json, ${VENDOR_MEDIA_TYPE}, ${EXPORT_MEDIA_TYPES.csv} or ${EXPORT_MEDIA_TYPES.ndjson}`
              : `This API answers in application/json or ${VENDOR_MEDIA_TYPE}`,
          ),
        )
      }
    }
    if (mount !== 'negotiated') {
      request.apiVersion = mount // the path's version wins over the header
    } else if (accept.version === undefined) {
      request.apiVersion = DEFAULT_API_VERSION
    } else if (isApiVersion(Number(accept.version))) {
      request.apiVersion = Number(accept.version) as ApiVersion
    } else {
      return done(new AppError('NOT_ACCEPTABLE', `API version ${accept.version} does not exist; ask for one of: ${API_VERSIONS.join(', ')}`))
    }
    reply.header('api-version', request.apiVersion)
    done()
  }
}

const isApiVersion = (n: number): boolean => (API_VERSIONS as readonly number[]).includes(n)

/**
 * What an Accept header admits: whether any JSON representation is acceptable, and the version
 * named by the first vendor media type that names one, as written.
 */
export function readAccept(accept: string | undefined): { acceptable: boolean; version?: string } {
  const ranges = parseAccept(accept)
  if (ranges.length === 0) return { acceptable: true }
  let acceptable = false
  let version: string | undefined
  for (const range of ranges.filter(isAcceptable)) {
    if (isMediaType(range, VENDOR_MEDIA_TYPE)) {
      // Lower-cased: a version is named case-insensitively, and a 406 quotes it in that form.
      version ??= range.params['version']?.toLowerCase()
      acceptable = true
    } else if (isMediaType(range, 'application/json') || isMediaType(range, 'application/*') || isMediaType(range, '*/*')) {
      acceptable = true
    }
  }
  return version === undefined ? { acceptable } : { acceptable, version }
}
