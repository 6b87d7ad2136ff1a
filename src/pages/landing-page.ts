// The landing page at GET /: the first address a person opens. A browser (one that prefers text/html)
// gets a small page of the service's own: what it is, where the docs are, how much data there is, a
// curl line to copy and a live feed of new comments over the event stream. Anything else (curl,
// a client library) gets the API's index as JSON, URL templates (RFC 6570) of every resource, as
// GitHub's API root does. Counting is the composition root's to do: this layer knows no feature.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { withThousands } from '../core/digits.js'
import { AppError } from '../errors.js'
import { parseAccept, type MediaRange } from '../http/accept.js'
import { matchesAny, weakTagOf } from '../http/caching.js'
import { addVary } from '../http/vary.js'
import { assetElements, createPageAsset, CSS, escapeHtml, JS, PAGE_CSP, type PageAsset, servePageAssets } from './page-assets.js'

export const LANDING_PAGE_PATH = '/'
// The path the page's assets were first published at: an HTTP path, once published, does not change.
const ASSETS_PATH = '/front-door/assets'

/** One resource's count on the page: its name (the element's id), its label and the number. */
export interface ResourceCount {
  readonly name: string
  readonly label: string
  readonly count: number
}

/**
 * One of a feature's addresses in the API's index (the landing page's JSON answer): a URL template
 * (RFC 6570) under the API's prefix, its query expression added for a collection or an item.
 */
export interface IndexedAddress {
  /** The path, its variables in braces: `/users/{user_id}/posts`. */
  readonly path: string
  /** `collection`: the collection query language's parameters; `item`: select and include. @default none */
  readonly query?: 'collection' | 'item'
}

export interface LandingPageOptions {
  /** Counted on every page view, as an anonymous caller. */
  counts: () => Promise<readonly ResourceCount[]>
  /** Counts stop there: one above it shows as "10,000+". */
  countCap: number
  /** The REST API's path prefix the index points to (`/api/v1`). */
  apiPrefix: string
  /** The resources' addresses under `apiPrefix`, by their name in the index, in its order (the features'). */
  resources: Readonly<Record<string, IndexedAddress>>
  /** Paths of the other endpoints on this service; a page that is turned off is left out. */
  paths: {
    graphql: string
    graphqlStream: string
    graphqlSchema?: string | undefined
    graphiql?: string | undefined
    openapi?: string | undefined
    docs?: string | undefined
    health: string
  }
}

// The collection query language's parameters (docs/rest.md, "Collections"); field filters are open-ended.
const QUERY_EXPRESSIONS: Record<NonNullable<IndexedAddress['query']>, string> = {
  collection: '{?page,limit,cursor,sort,q,fields,select,include}',
  item: '{?select,include}',
}

/** The API's index: every resource of the API version `apiPrefix` names, as URL templates on `origin`. */
export function apiIndex(origin: string, options: Pick<LandingPageOptions, 'apiPrefix' | 'resources' | 'paths'>): Record<string, string> {
  const api = `${origin}${options.apiPrefix}`
  const { paths } = options
  const ws = origin.replace(/^http/, 'ws')
  const index: Record<string, string> = {}
  for (const [name, { path, query }] of Object.entries(options.resources)) index[name] = `${api}${path}${query === undefined ? '' : QUERY_EXPRESSIONS[query]}`
  Object.assign(index, {
    graphql_url: `${origin}${paths.graphql}`,
    graphql_ws_url: `${ws}${paths.graphql}`,
    graphql_stream_url: `${origin}${paths.graphqlStream}{?query,variables,operationName}`,
  })
  if (paths.graphqlSchema !== undefined) index.graphql_schema_url = `${origin}${paths.graphqlSchema}`
  if (paths.openapi !== undefined) index.openapi_url = `${origin}${paths.openapi}`
  if (paths.docs !== undefined) index.docs_url = `${origin}${paths.docs}`
  if (paths.graphiql !== undefined) index.graphiql_url = `${origin}${paths.graphiql}`
  index.health_url = `${origin}${paths.health}`
  return index
}

type Representation = 'html' | 'json'

/**
 * HTML to a client that prefers it to JSON (a browser's Accept), JSON to anything else, curl's
 * `*\/*` and no Accept included; 406 to a client that takes neither.
 */
export function chooseRepresentation(accept: string | undefined): Representation {
  const ranges = parseAccept(accept)
  if (ranges.length === 0) return 'json'
  const html = quality(ranges, 'text', 'html')
  const json = quality(ranges, 'application', 'json')
  if (html > json) return 'html'
  if (json > 0) return 'json'
  throw new AppError('NOT_ACCEPTABLE', 'This address answers in application/json or text/html')
}

/** The quality the most specific matching range gives (RFC 9110 §12.5.1); 0 when none matches. */
function quality(ranges: readonly MediaRange[], type: string, subtype: string): number {
  let best: { specificity: number; q: number } | undefined
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype
        ? 3
        : range.type === type && range.subtype === '*'
          ? 2
          : range.type === '*' && range.subtype === '*'
            ? 1
            : 0
    if (specificity > 0 && (best === undefined || specificity > best.specificity)) best = { specificity, q: range.q }
  }
  return best === undefined || !(best.q > 0) ? 0 : best.q
}

/** The address the caller reached, from the Host (or, behind a trusted proxy, X-Forwarded-*) header. */
function originOf(request: FastifyRequest): string {
  // An HTTP/1.0 request may name no host: the address it reached stands in.
  const host = (request.host as string | undefined) || `${request.socket.localAddress ?? '127.0.0.1'}:${request.socket.localPort ?? ''}`
  return `${request.protocol}://${host}`
}

// Written for the browsers of the day, as it is served: no build step. Text from the stream goes
// in with textContent only, never as markup.
const FEED_SCRIPT = `'use strict';
(function () {
  var copy = document.getElementById('copy-curl');
  var curl = document.getElementById('curl');
  copy.addEventListener('click', function () {
    var text = curl.textContent;
    var done = function () { copy.textContent = 'Copied'; setTimeout(function () { copy.textContent = 'Copy'; }, 1500); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { selectCurl(); });
    } else {
      selectCurl();
      try { if (document.execCommand('copy')) done(); } catch (e) { /* selected: the visitor copies it */ }
    }
  });
  function selectCurl() {
    var range = document.createRange();
    range.selectNodeContents(curl);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  var feed = document.getElementById('feed');
  var status = document.getElementById('feed-status');
  var empty = document.getElementById('feed-empty');
  var commentsCount = document.getElementById('count-comments');
  var MAX_SHOWN = 20;
  var query = 'subscription { commentAdded { id content createdAt author { name } post { title } } }';
  var source = new EventSource(feed.dataset.stream + '?query=' + encodeURIComponent(query));
  source.addEventListener('open', function () { status.textContent = 'Live'; status.className = 'status live'; });
  source.addEventListener('error', function () { status.textContent = 'Reconnecting…'; status.className = 'status'; });
  source.addEventListener('next', function (event) {
    var comment;
    try { comment = JSON.parse(event.data).data.commentAdded; } catch (e) { return; }
    if (!comment) return;
    var item = document.createElement('li');
    var head = document.createElement('p');
    head.className = 'meta';
    var author = document.createElement('strong');
    author.textContent = comment.author.name;
    var post = document.createElement('em');
    post.textContent = comment.post.title;
    var time = document.createElement('time');
    time.dateTime = comment.createdAt;
    time.textContent = new Date(comment.createdAt).toLocaleTimeString();
    head.append(author, ' on ', post, ' · ', time);
    var content = document.createElement('p');
    content.className = 'content';
    content.textContent = comment.content;
    item.append(head, content);
    feed.prepend(item);
    if (empty) { empty.remove(); empty = null; }
    while (feed.children.length > MAX_SHOWN) feed.lastElementChild.remove();
    if (commentsCount.dataset.count === undefined) return;
    var count = Number(commentsCount.dataset.count) + 1;
    commentsCount.dataset.count = String(count);
    commentsCount.textContent = count.toLocaleString('en');
  });
})();
`

const PAGE_CSS = `:root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #e3e6ec; --accent: #3a5bd9; --bg: #f7f8fa; }
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 52rem; margin: 0 auto; padding: 2.5rem 1.25rem 3rem; }
h1 { font-size: 2.1rem; margin: 0 0 .25rem; letter-spacing: -.02em; }
h2 { font-size: 1.05rem; margin: 0 0 .75rem; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); }
.lead { margin: 0 0 1.25rem; color: var(--muted); font-size: 1.1rem; }
nav { display: flex; flex-wrap: wrap; gap: .5rem; margin-bottom: 2rem; }
nav a { padding: .45rem .9rem; border: 1px solid var(--line); border-radius: .5rem; background: #fff; color: var(--accent); text-decoration: none; font-weight: 600; }
nav a:hover, nav a:focus-visible { border-color: var(--accent); }
section { margin-bottom: 2rem; }
.counts { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: .75rem; margin: 0; }
.counts div { background: #fff; border: 1px solid var(--line); border-radius: .6rem; padding: .9rem 1rem; }
.counts dt { color: var(--muted); font-size: .9rem; }
.note { color: var(--muted); font-size: .9rem; margin: .6rem 0 0; }
.counts dd { margin: 0; font-size: 1.7rem; font-weight: 700; font-variant-numeric: tabular-nums; }
.try { display: flex; gap: .5rem; align-items: stretch; }
.try code { flex: 1; min-width: 0; overflow-x: auto; white-space: nowrap; padding: .7rem .9rem; background: #121722; color: #e8ecf4; border-radius: .5rem; font: .95rem/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; user-select: all; }
.try button { padding: 0 1.1rem; border: 0; border-radius: .5rem; background: var(--accent); color: #fff; font: inherit; font-weight: 600; cursor: pointer; }
.feed-head { display: flex; justify-content: space-between; align-items: baseline; }
.status { font-size: .85rem; color: var(--muted); }
.status.live::before { content: ""; display: inline-block; width: .55rem; height: .55rem; margin-right: .35rem; border-radius: 50%; background: #2fa84f; }
#feed { list-style: none; margin: 0; padding: 0; }
#feed li, .empty { background: #fff; border: 1px solid var(--line); border-radius: .6rem; padding: .7rem 1rem; margin-bottom: .5rem; }
#feed p { margin: 0; overflow-wrap: anywhere; }
#feed .meta { color: var(--muted); font-size: .9rem; }
#feed .meta strong { color: var(--ink); }
.empty { color: var(--muted); }
footer { color: var(--muted); font-size: .9rem; }
@media (max-width: 30rem) { h1 { font-size: 1.7rem; } .try { flex-direction: column; } .try button { padding: .6rem; } }
`

const ASSETS: readonly PageAsset[] = [
  createPageAsset('front-door.css', CSS, Buffer.from(PAGE_CSS)),
  createPageAsset('front-door.js', JS, Buffer.from(FEED_SCRIPT)),
]

function pageHtml(origin: string, counts: readonly ResourceCount[], options: LandingPageOptions): string {
  const { paths } = options
  const links = [
    paths.docs && `<a href="${escapeHtml(paths.docs)}">API reference</a>`,
    paths.graphiql && `<a href="${escapeHtml(paths.graphiql)}">GraphiQL</a>`,
    paths.openapi && `<a href="${escapeHtml(paths.openapi)}">OpenAPI document</a>`,
    `<a href="${escapeHtml(`${options.apiPrefix}/users`)}">/users</a>`,
  ].filter(Boolean)
  const curl = `curl ${origin}${options.apiPrefix}/users?limit=2`
  const countItems = counts
    .map(({ name: key, label, count }) => {
      // A capped count is not a number the live feed could add to.
      const shown =
        count > options.countCap
          ? `<dd id="count-${key}">${withThousands(options.countCap)}+</dd>`
          : `<dd id="count-${key}" data-count="${count}">${withThousands(count)}</dd>`
      return `<div><dt>${label}</dt>${shown}</div>`
    })
    .join('\n')
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Threadline</title>
<link rel="icon" href="data:,">
${assetElements(ASSETS_PATH, ASSETS)}
</head>
<body>
<main>
<header>
<h1>Threadline</h1>
<p class="lead">A REST, GraphQL and live API of users, their posts, comments and todos — a fake API to build and test front ends against.</p>
</header>
<nav aria-label="Documentation">
${links.join('\n')}
</nav>
<section aria-labelledby="counts-title">
<h2 id="counts-title">What is here</h2>
<dl class="counts">
${countItems}
</dl>
<p class="note">What anyone may read: drafts, and the comments on them, are seen only by their authors and admins, and are not counted here.</p>
</section>
<section aria-labelledby="try-title">
<h2 id="try-title">Try it</h2>
<div class="try"><code id="curl">${escapeHtml(curl)}</code><button type="button" id="copy-curl">Copy</button></div>
</section>
<section aria-labelledby="feed-title">
<div class="feed-head"><h2 id="feed-title">New comments, live</h2><span id="feed-status" class="status">Connecting…</span></div>
<p id="feed-empty" class="empty">Comments appear here as they are written, over <code>${escapeHtml(paths.graphqlStream)}</code>.</p>
<ol id="feed" data-stream="${escapeHtml(paths.graphqlStream)}"></ol>
</section>
<footer>Ask this address for JSON (<code>curl ${escapeHtml(origin)}/</code>) for an index of the API.</footer>
</main>
<noscript>The live feed and the copy button need JavaScript; the rest of this page does not.</noscript>
</body>
</html>
`
}

/** A 200 with a weak ETag of the body, or 304 when the client has it. */
function sendTagged(request: FastifyRequest, reply: FastifyReply, contentType: string, body: string) {
  const etag = weakTagOf(body)
  reply.header('etag', etag).header('cache-control', 'no-cache')
  addVary(reply, 'Accept', 'Accept-Encoding')
  const ifNoneMatch = request.headers['if-none-match']
  if (ifNoneMatch !== undefined && matchesAny(ifNoneMatch, etag)) return reply.code(304).send()
  return reply.header('content-type', contentType).send(body)
}

export async function landingPageRoutes(app: FastifyInstance, options: LandingPageOptions): Promise<void> {
  app.get(LANDING_PAGE_PATH, { config: { access: 'public' } }, async (request, reply) => {
    const origin = originOf(request)
    if (chooseRepresentation(request.headers.accept) === 'json') {
      return sendTagged(request, reply, 'application/json; charset=utf-8', JSON.stringify(apiIndex(origin, options), null, 2))
    }
    const html = pageHtml(origin, await options.counts(), options)
    reply.header('content-security-policy', PAGE_CSP)
    return sendTagged(request, reply, 'text/html; charset=utf-8', html)
  })

  servePageAssets(app, ASSETS_PATH, ASSETS)
}
