// The formats a collection GET answers besides JSON, and which one a request's Accept prefers: read
// by the versioning hook (which admits them on collection GETs only) and by the collection's answer
// (collection-export.ts streams them).
import type { FastifyRequest } from 'fastify'
import { isAcceptable, parseAccept } from './accept.js'
import { routeConfigOf } from '../core/route-config-read.js'

/** The formats a collection GET streams besides JSON, by their media types. */
export const EXPORT_MEDIA_TYPES = { csv: 'text/csv', ndjson: 'application/x-ndjson' } as const
export type ExportFormat = keyof typeof EXPORT_MEDIA_TYPES

/** The Content-Type of each; `header=present`: a CSV's first record names the fields (RFC 4180 §3). */
export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  ndjson: 'application/x-ndjson; charset=utf-8',
}

/** What an Accept header that may prefer an export holds somewhere (media types are read in any case). */
const NAMES_AN_EXPORT = /text\/|ndjson/i

/**
 * The export format Accept prefers, or undefined for JSON: the acceptable range of the highest q
 * wins, a named type over a wildcard at equal q, then the first written. Any type and
 * `application/*` stand for JSON, `text/*` for CSV.
 */
export function exportFormatOf(accept: string | undefined): ExportFormat | undefined {
  // Every list GET asks: an Accept that names neither (no `text/`, no `ndjson`, in any case) is JSON, unparsed.
  if (accept === undefined || !NAMES_AN_EXPORT.test(accept)) return undefined
  let best: { format: ExportFormat | 'json'; q: number; named: boolean } | undefined
  for (const range of parseAccept(accept).filter(isAcceptable)) {
    const format = formatOf(`${range.type}/${range.subtype}`)
    if (format === undefined) continue
    const named = range.subtype !== '*'
    if (best === undefined || range.q > best.q || (range.q === best.q && named && !best.named)) best = { format, q: range.q, named }
  }
  return best === undefined || best.format === 'json' ? undefined : best.format
}

function formatOf(mediaType: string): ExportFormat | 'json' | undefined {
  if (mediaType === EXPORT_MEDIA_TYPES.csv || mediaType === 'text/*') return 'csv'
  if (mediaType === EXPORT_MEDIA_TYPES.ndjson) return 'ndjson'
  if (mediaType === '*/*' || mediaType === 'application/*' || mediaType === 'application/json' || mediaType === 'application/vnd.threadline+json') return 'json'
  return undefined
}

/** A GET (or HEAD) of a collection: exports are served there, and nowhere else. */
export const servesExports = (request: FastifyRequest): boolean =>
  (request.method === 'GET' || request.method === 'HEAD') && routeConfigOf(request).collection !== undefined
