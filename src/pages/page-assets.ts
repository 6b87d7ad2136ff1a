// The files a browser page served by the service loads (GraphiQL, the API reference): a fixed list,
// found at start-up (packaged-assets.ts: dist/assets in the package, else node_modules), read into
// memory on first demand and served as routes, so there is no directory to traverse and no CDN to
// reach. Each is compressed once per encoding, on first
// demand. Read at start-up, they were 6 MB of every server's memory, pages served or not.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { brotliCompress, constants as zlib, gzip } from 'node:zlib'
import type { FastifyInstance } from 'fastify'
import { matchesAny } from '../http/caching.js'
import { chooseContentCoding, CONTENT_CODINGS, type ContentCoding } from '../http/compression.js'
import { addVary } from '../http/vary.js'
import { findPackagedAsset, PACKAGED_ASSETS, type PackagedAsset } from './packaged-assets.js'

/**
 * The content security policy of every page the service serves (GraphiQL, the API reference):
 * scripts, styles, fonts, images and connections from this origin only (`connect-src 'self'`
 * admits ws: and wss: to the same host, CSP Level 3); no inline script, no eval, no framing, no
 * <base>. Both pages need 'unsafe-inline' styles (GraphiQL's Radix dialogs and Swagger UI inject
 * <style> at run time), and data: images and fonts (their icons and fonts are data: URLs).
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

export const JS = 'text/javascript; charset=utf-8'
export const CSS = 'text/css; charset=utf-8'
export const PNG = 'image/png'

const ASSET_CACHE_CONTROL = 'public, max-age=86400'
const MIN_COMPRESSED_BYTES = 1024

export interface PageAsset {
  name: string
  contentType: string
  /** The bytes and their tag, read once, on first demand. */
  loaded(): Promise<LoadedAsset>
}

interface LoadedAsset {
  body: Buffer
  etag: string
  /** The body compressed once, on first demand (graphiql.min.js is 3.5 MB: compressing it per request would cost ~55 ms of CPU each time). */
  encoded: Map<ContentCoding, Promise<Buffer>>
}

const ENCODERS: Record<ContentCoding, (body: Buffer) => Promise<Buffer>> = {
  br: (body) => promisify(brotliCompress)(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  gzip: (body) => promisify(gzip)(body, { level: 9 }),
}

function encodedBody(asset: LoadedAsset, encoding: ContentCoding): Promise<Buffer> {
  let body = asset.encoded.get(encoding)
  if (body === undefined) {
    body = ENCODERS[encoding](asset.body)
    asset.encoded.set(encoding, body)
  }
  return body
}

// Weak: the compression plugin may send the same bytes in another encoding.
const loadedAsset = (body: Buffer): LoadedAsset => ({ body, etag: `W/"${createHash('sha1').update(body).digest('base64url')}"`, encoded: new Map() })

export function createPageAsset(name: string, contentType: string, body: Buffer): PageAsset {
  const loaded = Promise.resolve(loadedAsset(body))
  return { name, contentType, loaded: () => loaded }
}

type PackageName = PackagedAsset['packageName']

/**
 * A file of another package (one of PACKAGED_ASSETS: the types refuse any other), from the
 * package's prebuilt copy or a development checkout's node_modules (findPackagedAsset), never a
 * path from a request.
 */
export async function readPackageAsset<P extends PackageName>(
  packageName: P,
  file: Extract<PackagedAsset, { packageName: P }>['file'],
  contentType: string,
  name = file.split('/').pop() ?? file,
): Promise<PageAsset> {
  const asset = PACKAGED_ASSETS.find((a) => a.packageName === packageName && a.file === file)
  if (asset === undefined) throw new Error(`${packageName}/${file} is not in PACKAGED_ASSETS`)
  const path = await findPackagedAsset(asset) // a file missing from the install stops the start, not a page later
  let loaded: Promise<LoadedAsset> | undefined
  return { name, contentType, loaded: () => (loaded ??= readFile(path).then(loadedAsset)) }
}

/**
 * Serves each asset at `${path}/${name}`, a day of caching with an ETag (304 on revalidation),
 * brotli or gzip as the client takes them. Compressed here, once per encoding, not by the
 * compression plugin on every request.
 */
export function servePageAssets(app: FastifyInstance, path: string, assets: readonly PageAsset[]): void {
  for (const asset of assets) {
    app.get(`${path}/${asset.name}`, { config: { access: 'public', packagedFile: true }, compress: false }, async (request, reply) => {
      const loaded = await asset.loaded()
      reply.header('cache-control', ASSET_CACHE_CONTROL).header('etag', loaded.etag)
      addVary(reply, 'Accept-Encoding')
      const ifNoneMatch = request.headers['if-none-match']
      if (ifNoneMatch !== undefined && matchesAny(ifNoneMatch, loaded.etag)) return reply.code(304).send()
      reply.header('content-type', asset.contentType)
      const compressible = asset.contentType !== PNG && loaded.body.length > MIN_COMPRESSED_BYTES
      const encoding = compressible ? chooseContentCoding(request.headers['accept-encoding'], CONTENT_CODINGS) : undefined
      if (encoding === undefined) return reply.send(loaded.body)
      return reply.header('content-encoding', encoding).send(await encodedBody(loaded, encoding))
    })
  }
}

/** The <link> and <script defer> elements that load the page's styles and scripts, in list order. */
export function assetElements(assetsPath: string, assets: readonly PageAsset[]): string {
  const styles = assets.filter((a) => a.contentType === CSS).map((a) => `<link rel="stylesheet" href="${assetsPath}/${a.name}">`)
  const scripts = assets.filter((a) => a.contentType === JS).map((a) => `<script defer src="${assetsPath}/${a.name}"></script>`)
  return [...styles, ...scripts].join('\n')
}

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** A same-origin path: a full URL, or "//host", would be refused by the page's connect-src. */
export function assertServicePath(owner: string, name: string, value: string | undefined): void {
  if (value !== undefined && !/^\/(?![/\\])/.test(value)) {
    throw new Error(`${owner}: ${name} must be a path on this service (starting with one "/"), not ${value}`)
  }
}
