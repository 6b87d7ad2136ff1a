// Compression of answers, br or gzip as the client accepts (RFC 9110 §12.5.3), and the one reading
// of Accept-Encoding that every compressed answer follows: the API's through the onSend hook below,
// the page assets' (src/pages/page-assets.ts) from their own cache of encoded bodies.
import { brotliCompress, constants as zlib, gzip } from 'node:zlib'
import type { FastifyInstance, FastifyReply, FastifyRequest, RawServerBase, RawServerDefault, RouteOptions } from 'fastify'
import { addVary } from './vary.js'

declare module 'fastify' {
  interface RouteShorthandOptions<
    // eslint-disable-next-line @typescript-eslint/no-unused-vars
    RawServer extends RawServerBase = RawServerDefault,
  > {
    /** false: the route's answers are never compressed by the hook below (they encode themselves, or must not be). */
    compress?: false
  }
}

/** The codings offered, in the server's order of preference: among equals, the smaller answer. */
export const CONTENT_CODINGS = ['br', 'gzip'] as const
export type ContentCoding = (typeof CONTENT_CODINGS)[number]

/** Answers smaller than this go uncompressed: the framing would cost more than it saves. */
const COMPRESSION_THRESHOLD_BYTES = 1024

/**
 * The coding to send for an Accept-Encoding header, or undefined to send the body as it is. A
 * coding named with q=0 is refused, even when `*` accepts "any other"; `*` stands only for the
 * codings the header does not name; a q that is not a number counts as 0 (sending the body
 * uncompressed is always safe). The client's q decides, then the order of `offered`. No header
 * means no compression.
 */
export function chooseContentCoding<C extends string>(header: string | undefined, offered: readonly C[]): C | undefined {
  if (header === undefined) return undefined
  const qualities = new Map<string, number>()
  for (const element of header.toLowerCase().split(',')) {
    const [name = '', ...parameters] = element.split(';').map((part) => part.trim())
    if (name === '') continue
    const q = parameters.find((parameter) => parameter.startsWith('q='))
    const quality = q === undefined ? 1 : Number(q.slice(2))
    // x-gzip is gzip (RFC 9110 §8.4.1.3); the first mention of a coding stands.
    const coding = name === 'x-gzip' ? 'gzip' : name
    if (!qualities.has(coding)) qualities.set(coding, Number.isFinite(quality) ? quality : 0)
  }
  let best: { coding: C; quality: number } | undefined
  for (const coding of offered) {
    const quality = qualities.get(coding) ?? qualities.get('*') ?? 0
    if (quality > 0 && (best === undefined || quality > best.quality)) best = { coding, quality }
  }
  return best?.coding
}

/**
 * text/* but event streams (each event must reach the client when sent), JSON, XML (SVG), YAML and
 * JavaScript, with any parameters: @fastify/compress's default types and those of mime-db the
 * service sends, plus YAML (application/yaml, which mime-db does not mark compressible: the
 * OpenAPI YAML, ~290 KB, went uncompressed).
 */
const COMPRESSIBLE_TYPE = /^text\/(?!event-stream)|[+/](?:json|text|xml|yaml)(?:;|$)|^application\/(?:x-)?(?:javascript|ecmascript)(?:;|$)|octet-stream(?:;|$)/i

const BROTLI_OPTIONS = { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } }

type Done = (error: Error | null, payload?: unknown) => void

/**
 * Compresses an answer of at least COMPRESSION_THRESHOLD_BYTES, of a compressible type, in the
 * coding chosen by chooseContentCoding; any other answer passes through untouched. Our own hook,
 * not @fastify/compress: a profile (docs/performance.md, "Benchmarks and the hot path") measured compression at 6.5% of GET one user, a ~300-byte
 * answer to a request without Accept-Encoding that was never compressed, spent in the plugin's
 * per-route onRequest and onSend hooks and in our async onRequest hook that rewrote the header.
 * Here a callback hook (no promise) gives the payload back before allocating anything when there
 * is nothing to compress, and only the answers it compresses wait for zlib (on its thread pool).
 * Not compressed, as before: HEAD, 204, 206 and 304 answers, answers with a Content-Encoding or a
 * Content-Range already, requests with X-No-Compression, and streams (no route sends one; the
 * event streams are hijacked, and are never compressed).
 */
function compressAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: Done): void {
  const header = request.headers['accept-encoding']
  if (header === undefined || !isLargeEnough(payload)) return done(null, payload)
  const status = reply.statusCode
  if (status === 204 || status === 206 || status === 304 || request.method === 'HEAD') return done(null, payload)
  if (reply.hasHeader('content-encoding') && reply.getHeader('content-encoding') !== 'identity') return done(null, payload)
  if (reply.hasHeader('content-range') || request.headers['x-no-compression'] !== undefined) return done(null, payload)
  const type = reply.getHeader('content-type')
  if (!COMPRESSIBLE_TYPE.test(typeof type === 'string' ? type : 'application/json')) return done(null, payload)
  const coding = chooseContentCoding(header, CONTENT_CODINGS)
  if (coding === undefined) return done(null, payload)
  const compressed = (error: Error | null, body: Buffer) => {
    if (error !== null) return done(error)
    reply.header('content-encoding', coding)
    addVary(reply, 'Accept-Encoding')
    // Fastify sets the compressed body's length.
    reply.removeHeader('content-length')
    done(null, body)
  }
  if (coding === 'br') brotliCompress(payload, BROTLI_OPTIONS, compressed)
  else gzip(payload, compressed)
}

/** A string or Buffer of at least COMPRESSION_THRESHOLD_BYTES (bytes, not UTF-16 units). */
function isLargeEnough(payload: unknown): payload is string | Buffer {
  if (typeof payload === 'string') {
    if (payload.length >= COMPRESSION_THRESHOLD_BYTES) return true
    return payload.length * 3 >= COMPRESSION_THRESHOLD_BYTES && Buffer.byteLength(payload) >= COMPRESSION_THRESHOLD_BYTES
  }
  return Buffer.isBuffer(payload) && payload.length >= COMPRESSION_THRESHOLD_BYTES
}

/**
 * Registers compression for every answer over the threshold: the hook above on each route
 * registered from now on (as @fastify/compress did: not on the not-found answers), but the routes
 * marked `compress: false`.
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.compress === false || route.method === 'HEAD') return
    const hooks = route.onSend
    if (hooks === undefined) route.onSend = [compressAnswer]
    else if (Array.isArray(hooks)) {
      if (!hooks.includes(compressAnswer)) route.onSend = [...hooks, compressAnswer]
    } else if (hooks !== compressAnswer) route.onSend = [hooks, compressAnswer]
  })
}
