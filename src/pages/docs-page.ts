// The interactive API reference at /docs: Swagger UI (swagger-ui-dist) over /openapi.json, served
// whole by the service (no CDN), as GraphiQL is. "Authorize" takes a bearer token (the document's
// bearerAuth scheme) and "Try it out" sends requests to this same origin (the document's server is
// "/"). The page runs no inline script: a static bootstrap reads the document's path from a data-
// attribute, so the Content-Security-Policy forbids inline scripts and every other origin.
import type { FastifyInstance } from 'fastify'
import {
  assertServicePath,
  assetElements,
  createPageAsset,
  CSS,
  escapeHtml,
  JS,
  PAGE_CSP,
  type PageAsset,
  PNG,
  readPackageAsset,
  servePageAssets,
} from './page-assets.js'

export const DOCS_PATH = '/docs'

export interface DocsPageOptions {
  /** The OpenAPI document, a path on this service (`/openapi.json`): the page may connect to its own origin only. */
  specUrl: string
}

// Written for the browsers of the day, as it is served: no build step. BaseLayout, not the
// standalone one: its top bar would let a visitor load a document from anywhere. queryConfigEnabled
// stays off for the same reason (no ?url= or ?configUrl= from the address bar).
const INIT_SCRIPT = `'use strict';
(function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.dataset.specUrl,
    domNode: root,
    layout: 'BaseLayout',
    presets: [SwaggerUIBundle.presets.apis],
    validatorUrl: null,
    queryConfigEnabled: false,
    deepLinking: true,
    persistAuthorization: true,
    displayRequestDuration: true,
    filter: true,
    tryItOutEnabled: false,
  });
})();
`

const PAGE_CSS = `html { box-sizing: border-box; overflow-y: scroll; }
*, *::before, *::after { box-sizing: inherit; }
body { margin: 0; background: #fafafa; }
`

/** The files the page loads, in the order it loads them (Swagger UI before the bootstrap). */
async function loadAssets(): Promise<PageAsset[]> {
  return [
    await readPackageAsset('swagger-ui-dist', 'swagger-ui.css', CSS),
    createPageAsset('page.css', CSS, Buffer.from(PAGE_CSS)),
    await readPackageAsset('swagger-ui-dist', 'swagger-ui-bundle.js', JS),
    createPageAsset('init.js', JS, Buffer.from(INIT_SCRIPT)),
    await readPackageAsset('swagger-ui-dist', 'favicon-32x32.png', PNG),
  ]
}

function pageHtml(assetsPath: string, assets: readonly PageAsset[], options: DocsPageOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Threadline API reference</title>
<link rel="icon" type="image/png" href="${assetsPath}/favicon-32x32.png">
${assetElements(assetsPath, assets)}
</head>
<body>
<div id="swagger-ui" data-spec-url="${escapeHtml(options.specUrl)}">Loading the API reference…</div>
<noscript>The API reference needs JavaScript; the document itself is at <a href="${escapeHtml(options.specUrl)}">${escapeHtml(options.specUrl)}</a>.</noscript>
</body>
</html>
`
}

export async function docsPageRoutes(app: FastifyInstance, options: DocsPageOptions): Promise<void> {
  assertServicePath('docsPageRoutes', 'specUrl', options.specUrl)
  const assets = await loadAssets()
  const assetsPath = `${app.prefix}${DOCS_PATH}/assets`
  const html = pageHtml(assetsPath, assets, options)

  app.get(DOCS_PATH, { config: { access: 'public' } }, async (_request, reply) =>
    reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-cache').header('content-security-policy', PAGE_CSP).send(html),
  )

  servePageAssets(app, `${DOCS_PATH}/assets`, assets)
}
