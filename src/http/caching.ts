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
//
// The representation cache (representation-cache.ts) keeps the answers of the routes marked
// `representationCacheable`, with their validators, and answers from it, 200 or 304, while what
// they were read from has not changed: the tables a route names in `reads` (its own first), and of
// one resource its own row.
import { hash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { TSchema } from 'typebox'
import type { ChangeFeed } from '../db/change-feed.js'
import type { Dependencies } from '../db/change-clock.js'
import { createRepresentationCache, type Representation } from './representation-cache.js'
import { varyAdder } from './vary.js'
import { isoNow } from '../core/instant.js'
import { routeConfigOf } from '../core/route-config-read.js'

declare module 'fastify' {
  interface FastifyReply {
    /** What the answer's validators are made from, gathered before serialization. */
    lastModifiedMs: number | null
    isCollection: boolean
    /** A GET the representation cache could not answer: where its answer is to be kept. */
    representationMiss: Miss | null
  }
}

/** What a GET answer depends on besides the URL; added to Vary, after what CORS named (Origin). */
const addVaryOfReads = varyAdder('Accept', 'Authorization', 'Accept-Encoding')
const TIMESTAMP_MARK = ',"meta":{"timestamp":"'

/** For the API's routes (an onRoute hook of their plugin): the representation cache may keep their GET answers. */
export function markRepresentationCacheable(route: RouteOptions): void {
  route.config = { ...route.config, representationCacheable: true }
}

export interface CachingOptions {
  maxAgeS: number
  /** The representation cache: the answers of the marked routes, within this many bytes, kept while `changes` tells nothing they depend on; absent: none. */
  representationCache?: { budgetBytes: number; changes: Pick<ChangeFeed, 'listen' | 'heard'> }
}

/** A request that missed: where its answer goes in the representation cache, when it began, and (once its data is known) what it depends on. */
interface Miss {
  readonly key: string
  readonly readAt: number
  dependencies: Dependencies
}

/** Every table: what an answer of unknown origin depends on. */
const EVERY_TABLE: Dependencies = {}

/** What the answer `data` of `request` was read from: its row and the route's other tables, a page's tables, or every table. */
function dependenciesOf(request: FastifyRequest, data: unknown): Dependencies {
  const { reads } = routeConfigOf(request)
  // Embedded resources come from other features' tables, which the route does not name.
  if (reads === undefined || reads.length === 0 || (request.query as { include?: unknown }).include !== undefined) return EVERY_TABLE
  if (Array.isArray(data)) return { tables: reads }
  const id = (data as { id?: unknown } | null)?.id
  return typeof id === 'number' ? { row: { table: reads[0]!, id }, tables: reads.slice(1) } : { tables: reads }
}

export function registerCaching(app: FastifyInstance, options: CachingOptions): void {
  app.decorateReply('lastModifiedMs', null)
  app.decorateReply('isCollection', false)
  app.decorateReply('representationMiss', null)
  const publicCacheControl = `public, max-age=${options.maxAgeS}`
  const { representationCache } = options

  const cache =
    representationCache !== undefined && representationCache.budgetBytes > 0 ? createRepresentationCache(representationCache.budgetBytes) : undefined
  if (cache !== undefined && representationCache !== undefined) {
    const { changes } = representationCache
    const stopListening = changes.listen((told) => cache.clock.tell(told))
    app.addHook('onClose', async () => stopListening())
    // The hooks here are callbacks, not async functions: each runs for every GET, and a promise
    // and a turn of the microtask queue apiece were a measurable share of a cached answer.
    app.addHook('preHandler', (request, reply, done) => {
      if (request.method !== 'GET' || routeConfigOf(request).representationCacheable !== true) return done()
      // Nothing is kept or answered while changes may go unheard (PostgreSQL's listening connection down).
      if (!changes.heard()) return done()
      const { caller } = request
      const key = `${request.url}\n${request.headers.accept ?? ''}\n${caller === null ? '' : `${caller.userId}:${caller.role}`}`
      const readAt = cache.clock.time
      const hit = cache.get(key)
      if (hit === undefined) {
        reply.representationMiss = { key, readAt, dependencies: EVERY_TABLE }
        return done()
      }
      reply.lastModifiedMs = hit.lastModifiedMs
      reply.isCollection = hit.isCollection
      if (hit.lastModified !== undefined) reply.header('last-modified', hit.lastModified)
      if (hit.link !== undefined) reply.header('link', hit.link)
      reply.header('cache-control', hit.cacheControl)
      reply.header('etag', hit.etag)
      // Answered here: the chain stops without done().
      if (isNotModified(request, reply, hit.etag)) reply.code(304).send()
      else reply.type('application/json; charset=utf-8').send(`${hit.head}${isoNow()}${hit.tail}`)
    })
  }

  app.addHook('preSerialization', (request, reply, payload: unknown, done) => {
    if (!isRead(request) || reply.statusCode !== 200) return done(null, payload)
    const data = (payload as { data?: unknown } | null)?.data
    if (data === undefined) return done(null, payload)
    reply.isCollection = Array.isArray(data)
    const miss = reply.representationMiss
    if (miss !== null) miss.dependencies = dependenciesOf(request, data)
    // Embedded resources (`include`) change without their item's updatedAt: only the ETag dates such an answer.
    reply.lastModifiedMs = (request.query as { include?: unknown }).include === undefined ? newestUpdate(data) : null
    if (reply.lastModifiedMs !== null) reply.header('last-modified', new Date(reply.lastModifiedMs).toUTCString())
    reply.header('cache-control', request.caller === null ? publicCacheControl : 'private, no-cache')
    done(null, payload)
  })

  app.addHook('onSend', (request, reply, payload: unknown, done) => {
    if (!isRead(request)) return done(null, payload)
    addVaryOfReads(reply)
    if (reply.statusCode !== 200) {
      if (reply.statusCode >= 300 && reply.statusCode !== 304) reply.header('cache-control', 'no-store')
      return done(null, payload)
    }
    if (typeof payload !== 'string') return done(null, payload)
    // A representation from the representation cache has its validators set already (and was not a 304).
    if (reply.hasHeader('etag')) return done(null, payload)
    const etag = weakTagOf(payload)
    reply.header('etag', etag)
    const miss = reply.representationMiss
    if (miss !== null) {
      const representation = representationOf(payload, etag, reply, miss)
      if (representation !== undefined) cache?.set(miss.key, representation)
    }
    if (!isNotModified(request, reply, etag)) return done(null, payload)
    reply.code(304)
    reply.removeHeader('content-type')
    // No body, and no Content-Length: on a 304 it would have to be the 200's length (RFC 9110 §8.6).
    done(null, null)
  })
}

/** A 200 answer about to be sent, as the representation cache keeps it: split around meta.timestamp's value. */
function representationOf(payload: string, etag: string, reply: FastifyReply, miss: Miss): Representation | undefined {
  const at = payload.lastIndexOf(TIMESTAMP_MARK)
  if (at === -1) return undefined
  const valueStart = at + TIMESTAMP_MARK.length
  return {
    head: payload.slice(0, valueStart),
    tail: payload.slice(payload.indexOf('"', valueStart)),
    etag,
    lastModifiedMs: reply.lastModifiedMs,
    lastModified: reply.getHeader('last-modified') as string | undefined,
    isCollection: reply.isCollection,
    cacheControl: String(reply.getHeader('cache-control')),
    link: reply.getHeader('link') as string | undefined,
    dependencies: miss.dependencies,
    readAt: miss.readAt,
  }
}

const isRead = (request: FastifyRequest): boolean => request.method === 'GET' || request.method === 'HEAD'

function isNotModified(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  const ifNoneMatch = request.headers['if-none-match']
  if (ifNoneMatch !== undefined) return matchesAny(ifNoneMatch, etag)
  const ifModifiedSince = request.headers['if-modified-since']
  if (ifModifiedSince === undefined || reply.isCollection || reply.lastModifiedMs === null) return false
  if (routeConfigOf(request).lastModifiedCoversAll === false) return false
  const since = Date.parse(ifModifiedSince)
  // HTTP dates have whole seconds: compare at that resolution.
  return !Number.isNaN(since) && Math.floor(reply.lastModifiedMs / 1000) * 1000 <= since
}

/**
 * The weak ETag of a serialized envelope, ignoring meta.timestamp (one-shot `hash`: half the time of
 * a Hash object). The parts before and after the timestamp are never joined: the two joined would
 * be a copy of the whole answer (a page of 20 users: 6.5 KB), made only to be hashed. When the
 * timestamp ends the envelope (`…"timestamp":"<value>"}}`, a single resource's), what comes before
 * it is hashed alone; else the part after it (a page's links and counts, a few hundred bytes) is
 * hashed with the digest of the part before.
 */
export function weakTagOf(payload: string): string {
  const at = payload.lastIndexOf(TIMESTAMP_MARK)
  if (at === -1) return tagOf(payload)
  const valueStart = at + TIMESTAMP_MARK.length
  const valueEnd = payload.indexOf('"', valueStart)
  const head = payload.slice(0, valueStart)
  if (valueEnd === payload.length - ENVELOPE_END.length && payload.endsWith(ENVELOPE_END)) return tagOf(head)
  return tagOf(hash('sha1', head, 'base64url') + payload.slice(valueEnd))
}

const tagOf = (text: string): string => `W/"${hash('sha1', text, 'base64url')}"`

/** How an envelope ends when the timestamp is the last of it: the value's closing quote, then meta's and the envelope's braces. */
const ENVELOPE_END = '"}}'

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

/**
 * The newest `updatedAt` of the items, in ms. Those in the one form the API writes instants in
 * (`2024-05-01T12:00:00.000Z`) order as their text does, so of them only the newest is parsed
 * (a page of 20: one parse, not 20); any other text is parsed as it comes.
 */
function newestUpdate(data: unknown): number | null {
  const items = Array.isArray(data) ? data : [data]
  let newestText: string | undefined
  let newest = NaN
  for (const item of items) {
    const updatedAt = (item as { updatedAt?: unknown } | null)?.updatedAt
    if (typeof updatedAt !== 'string') continue
    if (isIsoInstant(updatedAt)) {
      if (newestText === undefined || updatedAt > newestText) newestText = updatedAt
    } else {
      newest = later(newest, Date.parse(updatedAt))
    }
  }
  if (newestText !== undefined) newest = later(newest, Date.parse(newestText))
  return Number.isNaN(newest) ? null : newest
}

/** The later of two instants in ms, either of which may be NaN (none). */
const later = (a: number, b: number): number => (Number.isNaN(a) || b > a ? b : a)

/** In Date's toISOString form, as far as its fixed marks say: 24 characters, `T` at 10, `.` at 19, `Z` last. */
const isIsoInstant = (text: string): boolean =>
  text.length === 24 && text.charCodeAt(10) === 84 /* T */ && text.charCodeAt(19) === 46 /* . */ && text.charCodeAt(23) === 90 /* Z */
