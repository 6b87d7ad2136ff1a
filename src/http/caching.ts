// HTTP caching and conditional requests (RFC 9110 §8.8 and §13, RFC 9111).
//
// ETag: weak, a SHA-1 of the serialized body without meta.timestamp (which changes on every
// call), computed once from the bytes about to be sent: no second serialization, and it changes
// with anything the answer says (an embedded author's name, the pagination). Last-Modified: the
// resource's updatedAt, or the newest among a page's items. If-None-Match (weak comparison)
// wins over If-Modified-Since; both answer 304 with the same validators and no body.
// If-Modified-Since is honoured for single resources only: a collection's newest updatedAt does
// not move when an item is deleted, and a comment's does not move when its author is renamed, so
// only their ETags can tell.
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TSchema } from 'typebox'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * false for answers that embed other resources (a comment's author): their own updatedAt
     * cannot date the whole answer, so only the ETag validates them.
     */
    lastModifiedCoversAll?: boolean
  }
  interface FastifyReply {
    /** What the answer's validators are made from, gathered before serialization. */
    lastModifiedMs: number | null
    isCollection: boolean
  }
}

const VARY = 'Accept, Authorization, Accept-Encoding'
const TIMESTAMP_MARK = ',"meta":{"timestamp":"'

export function registerCaching(app: FastifyInstance, options: { maxAgeS: number }): void {
  app.decorateReply('lastModifiedMs', null)
  app.decorateReply('isCollection', false)
  const publicCacheControl = `public, max-age=${options.maxAgeS}`

  app.addHook('preSerialization', async (request, reply, payload: unknown) => {
    if (!isRead(request) || reply.statusCode !== 200) return payload
    const data = (payload as { data?: unknown } | null)?.data
    if (data === undefined) return payload
    reply.isCollection = Array.isArray(data)
    reply.lastModifiedMs = newestUpdate(data)
    if (reply.lastModifiedMs !== null) reply.header('last-modified', new Date(reply.lastModifiedMs).toUTCString())
    reply.header('cache-control', request.caller === null ? publicCacheControl : 'private, no-cache')
    return payload
  })

  app.addHook('onSend', async (request, reply, payload: unknown) => {
    if (!isRead(request)) return payload
    reply.header('vary', VARY)
    if (reply.statusCode !== 200) {
      if (reply.statusCode >= 300 && reply.statusCode !== 304) reply.header('cache-control', 'no-store')
      return payload
    }
    if (typeof payload !== 'string') return payload
    const etag = weakTagOf(payload)
    reply.header('etag', etag)
    if (!isNotModified(request, reply, etag)) return payload
    reply.code(304)
    reply.removeHeader('content-type')
    // No body, and no Content-Length: on a 304 it would have to be the 200's length (RFC 9110 §8.6).
    return null
  })
}

const isRead = (request: FastifyRequest): boolean => request.method === 'GET' || request.method === 'HEAD'

function isNotModified(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  const ifNoneMatch = request.headers['if-none-match']
  if (ifNoneMatch !== undefined) return matchesAny(ifNoneMatch, etag)
  const ifModifiedSince = request.headers['if-modified-since']
  if (ifModifiedSince === undefined || reply.isCollection || reply.lastModifiedMs === null) return false
  if (request.routeOptions.config.lastModifiedCoversAll === false) return false
  const since = Date.parse(ifModifiedSince)
  // HTTP dates have whole seconds: compare at that resolution.
  return !Number.isNaN(since) && Math.floor(reply.lastModifiedMs / 1000) * 1000 <= since
}

/** The weak ETag of a serialized envelope, ignoring meta.timestamp. */
export function weakTagOf(payload: string): string {
  const hash = createHash('sha1')
  const at = payload.lastIndexOf(TIMESTAMP_MARK)
  if (at === -1) {
    hash.update(payload)
  } else {
    const valueStart = at + TIMESTAMP_MARK.length
    hash.update(payload.slice(0, valueStart))
    hash.update(payload.slice(payload.indexOf('"', valueStart)))
  }
  return `W/"${hash.digest('base64url')}"`
}

/** Weak comparison (RFC 9110 §8.8.3.2) of a tag against an If-None-Match or If-Match list. */
export function matchesAny(header: string, etag: string): boolean {
  if (header.trim() === '*') return true
  const opaque = etag.replace(/^W\//, '')
  for (const match of header.matchAll(/(?:W\/)?("[^"]*")/g)) {
    if (match[1] === opaque) return true
  }
  return false
}

/**
 * For PUT, PATCH and DELETE: the If-Match check the service runs on the current representation,
 * tagged exactly as a GET with `schema` would tag it; undefined without If-Match.
 */
export function ifMatchOf<T>(request: FastifyRequest, reply: FastifyReply, schema: TSchema): ((current: T) => boolean) | undefined {
  const header = request.headers['if-match']
  if (header === undefined) return undefined
  if (header.trim() === '*') return () => true
  const serialize = reply.compileSerializationSchema(schema as unknown as Record<string, unknown>)
  return (current) => matchesAny(header, weakTagOf(serialize({ data: current, meta: { timestamp: '' } })))
}

function newestUpdate(data: unknown): number | null {
  const items = Array.isArray(data) ? data : [data]
  let newest: number | null = null
  for (const item of items) {
    const updatedAt = (item as { updatedAt?: unknown } | null)?.updatedAt
    const ms = typeof updatedAt === 'string' ? Date.parse(updatedAt) : NaN
    if (!Number.isNaN(ms) && (newest === null || ms > newest)) newest = ms
  }
  return newest
}
