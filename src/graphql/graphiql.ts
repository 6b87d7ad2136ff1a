// GraphiQL at /graphiql, served whole by the service itself (no CDN: it works on a closed network).
// The page runs no inline script, so its Content-Security-Policy can forbid them; the bootstrap
// is a static script that reads the endpoints from data- attributes on the page. Assets are a
// fixed list of routes, read into memory at start-up: there is no directory to traverse.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants as zlib, gzip } from 'node:zlib'
import type { FastifyInstance } from 'fastify'
import { matchesAny } from '../http/caching.js'

export interface GraphiqlOptions {
  /** The GraphQL endpoint, a path on this service (`/graphql`): the page may connect to its own origin only. */
  endpoint: string
  /**
   * The graphql-ws endpoint, a path on this service; the page turns it into a ws: or wss: URL on
   * its own host. Without it, GraphiQL runs no subscriptions.
   * @default undefined
   */
  subscriptionEndpoint?: string
}

/**
 * GraphiQL needs 'unsafe-inline' styles: react-style-singleton (under its Radix dialogs) injects
 * <style> elements at run time. Its fonts and icons are data: URLs inside graphiql.min.css.
 * `connect-src 'self'` admits ws: and wss: to the same host (CSP Level 3).
 */
export const GRAPHIQL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  // Kept from the service-wide policy (no framing), and no <base> to redirect relative URLs.
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

const ASSET_CACHE_CONTROL = 'public, max-age=86400'
const MIN_COMPRESSED_BYTES = 1024
const JS = 'text/javascript; charset=utf-8'
const CSS = 'text/css; charset=utf-8'

const DEFAULT_QUERY = `# Threadline's GraphQL API. Run a query with Ctrl-Enter; the Docs button lists the schema.
#
# Some queries need a signed-in caller: get a token (POST /tokens) and put it in the
# Headers tab below, as JSON:
#   {"Authorization": "Bearer <token>"}
# Headers are kept in this browser's localStorage.

{
  users {
    id
    name
  }
}
`

// Written for the browsers of the day, as it is served: no build step.
const INIT_SCRIPT = `'use strict';
(function () {
  var root = document.getElementById('graphiql');
  var fetcherOptions = { url: root.dataset.endpoint };
  var subscriptionEndpoint = root.dataset.subscriptionEndpoint;
  if (subscriptionEndpoint) {
    var url = new URL(subscriptionEndpoint, location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    fetcherOptions.subscriptionUrl = url.href;
  }
  ReactDOM.createRoot(root).render(
    React.createElement(GraphiQL, {
      fetcher: GraphiQL.createFetcher(fetcherOptions),
      defaultQuery: ${JSON.stringify(DEFAULT_QUERY)},
      defaultEditorToolsVisibility: 'headers',
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: true,
    }),
  );
})();
`

const PAGE_CSS = `html, body { height: 100%; margin: 0; }
#graphiql { height: 100vh; }
`

interface Asset {
  name: string
  contentType: string
  body: Buffer
  etag: string
  /** The body compressed once, on first demand (graphiql.min.js is 3.5 MB: compressing it per request would cost ~55 ms of CPU each time). */
  encoded: Map<Encoding, Promise<Buffer>>
}

type Encoding = 'br' | 'gzip'

const ENCODERS: Record<Encoding, (body: Buffer) => Promise<Buffer>> = {
  br: (body) => promisify(brotliCompress)(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  gzip: (body) => promisify(gzip)(body, { level: 9 }),
}

/** The best encoding the client takes (br, then gzip), or none. */
function chooseEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  const accepted = new Set<string>()
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name = '', ...parameters] = part.split(';').map((p) => p.trim())
    const q = parameters.find((p) => p.startsWith('q='))
    if (q === undefined || Number(q.slice(2)) > 0) accepted.add(name)
  }
  if (accepted.has('br')) return 'br'
  if (accepted.has('gzip')) return 'gzip'
  return undefined
}

function encodedBody(asset: Asset, encoding: Encoding): Promise<Buffer> {
  let body = asset.encoded.get(encoding)
  if (body === undefined) {
    body = ENCODERS[encoding](asset.body)
    asset.encoded.set(encoding, body)
  }
  return body
}

/** The files the page loads, in the order it loads them (React before GraphiQL before the bootstrap). */
async function loadAssets(): Promise<Asset[]> {
  const require = createRequire(import.meta.url)
  const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`))
  const fromPackage = async (name: string, packageName: string, file: string, contentType: string) =>
    asset(name, contentType, await readFile(join(packageDir(packageName), file)))
  return [
    await fromPackage('graphiql.min.css', 'graphiql', 'graphiql.min.css', CSS),
    asset('page.css', CSS, Buffer.from(PAGE_CSS)),
    await fromPackage('react.production.min.js', 'react', 'umd/react.production.min.js', JS),
    await fromPackage('react-dom.production.min.js', 'react-dom', 'umd/react-dom.production.min.js', JS),
    await fromPackage('graphiql.min.js', 'graphiql', 'graphiql.min.js', JS),
    asset('init.js', JS, Buffer.from(INIT_SCRIPT)),
  ]
}

function asset(name: string, contentType: string, body: Buffer): Asset {
  // Weak: the compression plugin may send the same bytes in another encoding.
  return { name, contentType, body, etag: `W/"${createHash('sha1').update(body).digest('base64url')}"`, encoded: new Map() }
}

function pageHtml(assetsPath: string, assets: readonly Asset[], options: GraphiqlOptions): string {
  const styles = assets.filter((a) => a.contentType === CSS).map((a) => `<link rel="stylesheet" href="${assetsPath}/${a.name}">`)
  const scripts = assets.filter((a) => a.contentType === JS).map((a) => `<script defer src="${assetsPath}/${a.name}"></script>`)
  const subscription = options.subscriptionEndpoint === undefined ? '' : ` data-subscription-endpoint="${escapeHtml(options.subscriptionEndpoint)}"`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Threadline GraphiQL</title>
<link rel="icon" href="data:,">
${[...styles, ...scripts].join('\n')}
</head>
<body>
<div id="graphiql" data-endpoint="${escapeHtml(options.endpoint)}"${subscription}>Loading GraphiQL…</div>
<noscript>GraphiQL needs JavaScript.</noscript>
</body>
</html>
`
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** A same-origin path: a full URL, or "//host", would be refused by the page's connect-src. */
function assertServicePath(name: string, value: string | undefined): void {
  if (value !== undefined && !/^\/(?![/\\])/.test(value)) {
    throw new Error(`graphiqlRoutes: ${name} must be a path on this service (starting with one "/"), not ${value}`)
  }
}

export async function graphiqlRoutes(app: FastifyInstance, options: GraphiqlOptions): Promise<void> {
  assertServicePath('endpoint', options.endpoint)
  assertServicePath('subscriptionEndpoint', options.subscriptionEndpoint)
  const assets = await loadAssets()
  const assetsPath = `${app.prefix}/graphiql/assets`
  const html = pageHtml(assetsPath, assets, options)

  app.get('/graphiql', { config: { access: 'public' } }, async (_request, reply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', GRAPHIQL_CSP)
      .send(html),
  )

  for (const asset of assets) {
    // Compressed here, once per encoding, not by the compression plugin on every request.
    app.get(`/graphiql/assets/${asset.name}`, { config: { access: 'public' }, compress: false }, async (request, reply) => {
      reply.header('cache-control', ASSET_CACHE_CONTROL).header('etag', asset.etag).header('vary', 'Accept-Encoding')
      const ifNoneMatch = request.headers['if-none-match']
      if (ifNoneMatch !== undefined && matchesAny(ifNoneMatch, asset.etag)) return reply.code(304).send()
      reply.header('content-type', asset.contentType)
      const encoding = asset.body.length > MIN_COMPRESSED_BYTES ? chooseEncoding(request.headers['accept-encoding']) : undefined
      if (encoding === undefined) return reply.send(asset.body)
      return reply.header('content-encoding', encoding).send(await encodedBody(asset, encoding))
    })
  }
}
