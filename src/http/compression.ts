// Compression of answers, br or gzip as the client accepts (RFC 9110 §12.5.3), and the one reading
// of Accept-Encoding that every compressed answer follows: the API's through @fastify/compress,
// the page assets' (src/pages/page-assets.ts) from their own cache of encoded bodies.
import { constants as zlib } from 'node:zlib'
import fastifyCompress from '@fastify/compress'
import type { FastifyInstance } from 'fastify'

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
 * Registers compression for every answer over the threshold. @fastify/compress (9.2) reads `*` as
 * gzip before it weighs the header, so `gzip;q=0, *;q=1` got gzip; the header is therefore replaced,
 * before any route runs, by the one coding chosen above (or `identity`), which it cannot misread.
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (request) => {
    const header = request.headers['accept-encoding']
    if (header !== undefined) request.raw.headers['accept-encoding'] = chooseContentCoding(header, CONTENT_CODINGS) ?? 'identity'
  })
  await app.register(fastifyCompress, {
    threshold: COMPRESSION_THRESHOLD_BYTES,
    encodings: [...CONTENT_CODINGS],
    brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } },
    globalDecompression: false,
  })
}
