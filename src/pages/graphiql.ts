// GraphiQL at /graphiql, served whole by the service itself (no CDN: it works on a closed network).
// The page runs no inline script, so its Content-Security-Policy can forbid them; the bootstrap
// is a static script that reads the endpoints from data- attributes on the page. Assets are a
// fixed list of routes, read into memory at start-up: there is no directory to traverse.
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
  readPackageAsset,
  servePageAssets,
} from './page-assets.js'

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

/** What the editor holds on a first visit: a page of a cursor connection, and how to go on. */
export const DEFAULT_QUERY = `# Threadline's GraphQL API. Run a query with Ctrl-Enter; the Docs button lists the schema.
#
# Some queries need a signed-in caller: get a token (npx threadline tokens create --user 1,
# or POST /api/v1/tokens with an e-mail and password, or an access token of the
# OpenID Connect issuer the service trusts) and put it in the Headers tab below, as JSON:
#   {"Authorization": "Bearer <token>"}
# Headers are kept in this browser's localStorage.
#
# A Relay connection: for the next page, pass pageInfo.endCursor as after.

{
  usersConnection(first: 3, where: {age: {gte: 30}}) {
    edges {
      cursor
      node {
        id
        name
        postsConnection(first: 2) {
          edges {
            node {
              title
            }
          }
        }
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
    totalCount
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

/** The files the page loads, in the order it loads them (React before GraphiQL before the bootstrap). */
async function loadAssets(): Promise<PageAsset[]> {
  return [
    await readPackageAsset('graphiql', 'graphiql.min.css', CSS),
    createPageAsset('page.css', CSS, Buffer.from(PAGE_CSS)),
    await readPackageAsset('react', 'umd/react.production.min.js', JS),
    await readPackageAsset('react-dom', 'umd/react-dom.production.min.js', JS),
    await readPackageAsset('graphiql', 'graphiql.min.js', JS),
    createPageAsset('init.js', JS, Buffer.from(INIT_SCRIPT)),
  ]
}

function pageHtml(assetsPath: string, assets: readonly PageAsset[], options: GraphiqlOptions): string {
  const subscription = options.subscriptionEndpoint === undefined ? '' : ` data-subscription-endpoint="${escapeHtml(options.subscriptionEndpoint)}"`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Threadline GraphiQL</title>
<link rel="icon" href="data:,">
${assetElements(assetsPath, assets)}
</head>
<body>
<div id="graphiql" data-endpoint="${escapeHtml(options.endpoint)}"${subscription}>Loading GraphiQL…</div>
<noscript>GraphiQL needs JavaScript.</noscript>
</body>
</html>
`
}

export async function graphiqlRoutes(app: FastifyInstance, options: GraphiqlOptions): Promise<void> {
  assertServicePath('graphiqlRoutes', 'endpoint', options.endpoint)
  assertServicePath('graphiqlRoutes', 'subscriptionEndpoint', options.subscriptionEndpoint)
  const assets = await loadAssets()
  const assetsPath = `${app.prefix}/graphiql/assets`
  const html = pageHtml(assetsPath, assets, options)

  app.get('/graphiql', { config: { access: 'public' } }, async (_request, reply) =>
    reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-cache').header('content-security-policy', PAGE_CSP).send(html),
  )

  servePageAssets(app, '/graphiql/assets', assets)
}
