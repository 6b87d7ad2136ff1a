// Attacks on the service, replayed against a real `threadline serve` (SQLite, default config,
// 200,000 users and 1,000,000 posts) while a probe from other addresses times GET /health and
// GET /api/v1/users/1 every 50 ms and the server's resident memory is sampled:
//
//   search batch     a GraphQL batch of 10 operations, each usersPage(q: "zz-nomatch") { pageInfo { total } } under 15 aliases
//   deep offset      8 at once: GET /api/v1/users?sort=-age,name&page=2000&limit=100 (past the offset window)
//   window's end     8 at once: the same at page=100 (the deepest page inside a 10,000-row window)
//   fan-out          20 WebSockets × 20 subscriptions, each commentAdded { post { author { posts(limit: 45)
//                    { comments(limit: 45) { author { posts(limit: 45) { content } } } } } } }, then one
//                    comment a second on a post of that cluster, by another user
//   websocket queries one WebSocket, 4 subscribe messages in flight, each a query (not a subscription) of
//                    usersPage(limit: 100) { items { id posts(limit: 100) { id } } } under 9 aliases
//   sign-in flood    failed sign-ins (the victim's e-mail with a wrong password, unknown e-mails) while a
//                    bystander signs in every second from another address (and the victim too, from a third)
//   password batch   a batch of 10 updateUser(id: <self>, input: {password}) (signed in only)
//   upgrade flood    1,000 requests that ask to upgrade the connection (Upgrade: websocket, h2c or
//                    foo; /api/v1/users/1, /health, /nope, /, a malformed handshake on /graphql), 50
//                    at a time, each connection dropped by the client once the answer's head is read
//   contention       8 at once, the window's end page, for --seconds alone, then --seconds more while a
//                    light caller (127.0.0.6) sends GET /api/v1/users/<id> every 20 ms (open loop); the
//                    rate limit's allowance raised for this one, so that it is the scheduler that is measured
//
// Attacks on what work costs rather than how many requests it takes (bytes held, stored and sent,
// and CPU spread over many callers):
//
//   unread answers   16 raw sockets from 127.0.0.1, each POST /graphql a batch of 10 × 8 aliased
//                    introspections (about 6 MB of answer), then never read a byte; each socket watched
//                    (`ss`) until the server lets it go, or --drain seconds after the attack; `unread
//                    large answers`: the same with posts(limit: 20) { content } of the large author
//                    (about 2 MB), an answer every bound admits, past what the sockets' buffers take
//   many callers, 64 64 addresses (127.0.1.x), each one request at a time: the heaviest page an anonymous
//                    caller gets for 1 point, GET /api/v1/users?sort=-age,name&page=N&limit=100 with
//                    include=posts,todos at 100 each, N going through 1-100
//   many callers, 200 rotating  the same, 64 at once, each request from the next of 200 addresses
//                    (127.0.2.x): flows that go idle and come back
//   kept answers     a batch of a failing mutation (deletePost of no post) and 6 × posts(limit: 100)
//                    { content } of the large author (about 30 MB), a fresh Idempotency-Key each time;
//                    the database's size (with its WAL) before and after, the idempotency rows and bytes
//   replays          that batch (signed in, with addTodo in place of the failing mutation, so that a
//                    write is done) sent once, then again with the same key for --seconds: the
//                    X-RateLimit-Cost of each answer, the replays answered a minute and their MB
//   aliased introspection  16 addresses (127.0.5.x), each one request at a time: 8 aliases of the
//                    standard introspection query's __schema (less the fields' arguments, so that 8 fit
//                    the cost bound introspection had), about 0.6 MB
//   large answers    15 × posts(limit: 100) { content } of the large author, whose 50 posts are 100 KB
//                    each (about 75 MB), 4 at once; `large answers batch`: a batch of 10 of it, one at a time
//
// Each attack runs for --seconds from one address (127.0.0.1) unless said, once anonymous and once with
// a token of an ordinary user (those above: anonymous only, but kept answers and replays), each against a
// fresh server on a fresh copy of the database (so one attack's backlog or allowance does not reach the
// next). The attacker sends as fast as its allowance lets: --concurrency requests in flight (8 for the
// offset pages), each worker waiting min(Retry-After, 1 s) after a 429 or a 503 (load shed) and going
// on; 429s and 503s are counted apart. Requests still unanswered --drain seconds after the attack are
// given up. The probe runs on a thread of its own (abuse-probe.ts: its timings are the server's, not
// the attacker's loop), from 127.0.0.3 (/health) and 127.0.3.1-8 in turn (/api/v1/users/1, so the
// probe stays inside the anonymous allowance), and for the attacks above from 127.0.4.1-8 a small POST
// /graphql too, open loop: each request is timed from when it was due, so a stall counts in full. The
// server's event-loop delay during each attack is read from its GET /metrics (prom-client's histogram,
// reset by a read at the start; the 10 ms sampling period taken off), else from the probe's /health
// timings; a server whose /health reports its loop's delay has those figures printed beside.
//
// Goals, per attack: probe p99 under 100 ms and no probe over 250 ms, peak RSS under 300 MB, the
// bystander's sign-in under 1 s, after the upgrade flood the server's connections from the attacker
// (as `ss` lists them) back to their number before it within 5 s, and in the contention run the light
// caller's p99 under 100 ms while the heavy one keeps at least 0.8 of the pages it is answered alone;
// the loop's delay p99 under 50 ms (many callers, aliased introspection, large answers), no answer
// held on an unread socket by the end of the watch (the socket dropped by the server, or the answer
// wholly with the client), no 500 for a large answer, the database grown by under 32 MB by kept answers, and every answer to the replays charged (X-RateLimit-Cost ≥ 1). Prints met / NOT MET
// and exits 1 if any is not. A flood stops early (and says so) when the server passes 2 GB of RSS or
// the database 2 GB: the machine is shared.
//
// Short, for a check (a few seconds, small data):
//   npm run bench:abuse -- --seconds 3 --drain 12 --users 2000 --posts 10000 --comments 1000 --only unread,many
// (a --drain past the server's send timeout, 10 s by default, for the unread answers to be let go)
//
// --server-dir runs another checkout's dist/main.js (built beforehand: `npm run build`
// there), e.g. the code before a fix; the database is seeded with that build's migrations.
//
//   npm run bench:abuse [-- --seconds 15 --only search,offset --skip-build --server-dir /work/baseline --out bench/results/abuse-baseline.json]
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { getIntrospectionQuery } from 'graphql'
import { Agent, request } from 'undici'
import WebSocket from 'ws'
import { freePort } from '../test/helpers/private-redis.js'
import { abuseDatabase, ACCOUNTS, HOT_FIRST, HOT_POST_ID, LARGE_POST_BYTES, LARGE_POSTS } from './abuse-data.js'
import { type Probes, startProbe } from './abuse-probe.js'
import { build, machine, rssOf, type RunningServer, startServer, stats } from './lib.js'

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    drain: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '4' },
    users: { type: 'string', default: '200000' },
    posts: { type: 'string', default: '1000000' },
    comments: { type: 'string', default: '100000' },
    'comment-every-ms': { type: 'string', default: '1000' },
    only: { type: 'string' },
    'server-dir': { type: 'string', default: '.' },
    /** Runs this repository's dist/ as it is, without compiling src/ first. */
    'skip-build': { type: 'boolean', default: false },
    out: { type: 'string', default: join('bench', 'results', 'abuse.json') },
  },
})

const SECONDS = Number(args.seconds)
const DRAIN_MS = Number(args.drain) * 1000
const CONCURRENCY = Number(args.concurrency)
const SERVER_DIR = resolve(args['server-dir'])
const DATA = join('bench', '.data')
const GOALS = {
  probeP99Ms: 100,
  probeMaxMs: 250,
  rssMb: 300,
  signInMs: 1000,
  connectionsBackWithinMs: 5000,
  lightP99Ms: 100,
  heavyKept: 0.8,
  loopDelayP99Ms: 50,
  /** Twice what one caller may keep of answers in all (16 MB), for the file's own growth besides. */
  keptGrowthMb: 32,
}
/** Past this the fan-out stops commenting, and a flood sending: the machine is shared, and the point is made long before. */
const RSS_SAFETY_MB = 2048
/** Past this size of the database (with its WAL) the kept answers' flood stops: the disk is shared too. */
const DISK_SAFETY_MB = 2048
/** Every loop's count limit, besides its time limit. */
const MAX_REQUESTS = 200_000

/** Loopback addresses (Linux answers all of 127/8): the attacker, and those the attacker's allowance must not touch. */
const ADDRESS = {
  attacker: '127.0.0.1',
  bystander: '127.0.0.2',
  probe: '127.0.0.3',
  commenter: '127.0.0.4',
  victim: '127.0.0.5',
  light: '127.0.0.6',
  probePool: loopback(3, 8),
  /** The probe's small POST /graphql, from addresses of its own (inside the anonymous allowance). */
  graphqlProbePool: loopback(4, 8),
  /** Many callers: each address one caller, 64 of them, or 200 taken in turn. */
  many: loopback(1, 64),
  rotating: loopback(2, 200),
  introspectors: loopback(5, 16),
}

/** `n` loopback addresses 127.0.<third>.1.. */
function loopback(third: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `127.0.${third}.${i + 1}`)
}

type Variant = 'anonymous' | 'signed-in'
/**
 * 'refused': an operation on a WebSocket turned down by an `error` message, which has no HTTP status;
 * 'dropped': a request whose answer was never read, its connection closed by the server;
 * 'delivered': one whose answer, never read, reached the client's kernel whole (its status unread).
 */
type Status = number | 'error' | 'timeout' | 'unanswered' | 'refused' | 'dropped' | 'delivered'

/** What the attack's requests got: HTTP statuses, and the error codes in the bodies (GraphQL: one per operation, 'ok' without one). */
class Tally {
  statuses: Record<string, number> = {}
  codes: Record<string, number> = {}
  sent = 0
  add(status: Status, body?: string): void {
    this.statuses[status] = (this.statuses[status] ?? 0) + 1
    for (const code of body === undefined ? [] : codesOf(body)) this.codes[code] = (this.codes[code] ?? 0) + 1
  }
}

function codesOf(body: string): string[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return []
  }
  type Answer = { error?: { code?: string }; errors?: { extensions?: { code?: string } }[]; data?: unknown }
  const answers = (Array.isArray(parsed) ? parsed : [parsed]) as Answer[]
  return answers.flatMap((answer) => {
    if (answer?.error?.code !== undefined) return [answer.error.code]
    if (answer?.errors !== undefined && answer.errors.length > 0) return [answer.errors[0]?.extensions?.code ?? 'ERROR']
    return answer?.data !== undefined ? ['ok'] : []
  })
}

interface Sent {
  status: Status
  /** The whole body; of a large one (send's `large`), its outcome alone, as codesOf reads it. */
  body?: string
  retryAfterS?: number
  /** The answer's headers, when there was one. */
  headers?: Record<string, string | string[] | undefined>
  /** The body's bytes as received. */
  bytes?: number
}

/** Of a body past this, send's `large` keeps only the ends: an answer of hundreds of MB is not held in the bench. */
const KEPT_BODY_BYTES = 1 << 20

const agents: Agent[] = []
const agentFrom = (localAddress: string, connections = 64) => {
  const agent = new Agent({ localAddress, connections, headersTimeout: 0, bodyTimeout: 0 })
  agents.push(agent)
  return agent
}

/**
 * One request; `deadline` (epoch ms) bounds it. `large`: the body is counted as it streams in, and
 * past KEPT_BODY_BYTES only its ends are kept, as a small body saying the codes found in them.
 */
async function send(
  dispatcher: Agent,
  url: string,
  req: { method?: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string },
  deadline: number,
  large = false,
): Promise<Sent> {
  try {
    const response = await request(`${url}${req.path}`, {
      dispatcher,
      method: req.method ?? 'GET',
      headers: req.headers,
      body: req.body,
      signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
    })
    const { body, bytes } = large ? await endsOf(response.body) : await response.body.text().then((text) => ({ body: text, bytes: Buffer.byteLength(text) }))
    const retryAfter = response.headers['retry-after']
    return {
      status: response.statusCode,
      body,
      bytes,
      headers: response.headers,
      ...(typeof retryAfter === 'string' ? { retryAfterS: Number(retryAfter) } : {}),
    }
  } catch (error) {
    return { status: (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError' ? 'timeout' : 'error' }
  }
}

/** A body read in chunks: whole up to KEPT_BODY_BYTES, else its error codes (from its first and last bytes) as a small JSON body. */
async function endsOf(stream: AsyncIterable<Buffer>): Promise<{ body: string; bytes: number }> {
  const head: Buffer[] = []
  let headBytes = 0
  let tail = Buffer.alloc(0)
  let bytes = 0
  for await (const chunk of stream) {
    bytes += chunk.length
    if (headBytes < KEPT_BODY_BYTES) {
      head.push(chunk)
      headBytes += chunk.length
    } else tail = Buffer.concat([tail, chunk]).subarray(-64 * 1024)
  }
  const whole = Buffer.concat(head)
  if (bytes <= KEPT_BODY_BYTES) return { body: whole.toString(), bytes }
  const ends = `${whole.subarray(0, 64 * 1024).toString()} ${tail.toString()}`
  const codes = [...ends.matchAll(/"code":"([A-Z_]+)"/g)].map((match) => match[1])
  const answers = codes.length > 0 ? codes.map((code) => ({ errors: [{ extensions: { code } }] })) : [{ data: null }]
  return { body: JSON.stringify(answers), bytes }
}

interface Context {
  url: string
  /** The database file the server under attack runs on. */
  db: string
  variant: Variant
  /** The attacker's token in the signed-in variant. */
  token: string | undefined
  commenterToken: string
  /** Epoch ms: the attack stops sending. */
  end: number
  tally: Tally
  pid: number
  notes: string[]
}

const json = { 'content-type': 'application/json' }
const authorized = (context: Context): Record<string, string> => (context.token === undefined ? {} : { authorization: `Bearer ${context.token}` })

interface FloodOptions {
  /** Who sends: worker i from addresses[i % n], or with `rotate` each request from the next address in turn. @default [ADDRESS.attacker] */
  addresses?: readonly string[]
  rotate?: boolean
  /** Answers of many MB: counted as they stream in, not kept (send's `large`). */
  large?: boolean
  /** Sees every answer, after the tally. */
  onAnswer?: (answer: Sent) => void
  /** Asked before each request: a reason to stop sending (noted once), or undefined to go on. */
  stopWhen?: () => string | undefined
}

/**
 * `concurrency` workers sending `make(n)` until the attack's end; after a 429, or a 503 (load shed),
 * each waits min(Retry-After, 1 s).
 */
async function flood(
  context: Context,
  concurrency: number,
  make: (n: number) => { method?: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string },
  options: FloodOptions = {},
) {
  const addresses = options.addresses ?? [ADDRESS.attacker]
  const perAddress = options.rotate === true ? 4 : Math.ceil(concurrency / addresses.length)
  const dispatchers = addresses.map((address) => agentFrom(address, perAddress))
  let turn = 0
  let stopped = false
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (!stopped && Date.now() < context.end && context.tally.sent < MAX_REQUESTS) {
        const reason = options.stopWhen?.()
        if (reason !== undefined) {
          if (!stopped) context.notes.push(reason)
          stopped = true
          break
        }
        const dispatcher = dispatchers[(options.rotate === true ? turn++ : worker) % dispatchers.length] as Agent
        const answer = await send(dispatcher, context.url, make(context.tally.sent++), context.end + DRAIN_MS, options.large)
        context.tally.add(answer.status, answer.body)
        options.onAnswer?.(answer)
        if (answer.status === 429 || answer.status === 503) {
          await sleep(Math.min((answer.retryAfterS ?? 1) * 1000, 1000, Math.max(0, context.end - Date.now())))
        }
        if (answer.status === 'error') await sleep(100)
      }
    }),
  )
}

/** A reason to stop once the server under attack is past RSS_SAFETY_MB (none once it is gone: its requests fail anyway). */
const rssSafety = (context: Context) => () => {
  let mb: number
  try {
    mb = rssOf(context.pid) / 2 ** 20
  } catch {
    return undefined
  }
  return mb > RSS_SAFETY_MB ? `stopped sending at ${context.tally.sent}: server RSS over ${RSS_SAFETY_MB} MB` : undefined
}

const graphqlPost = (context: Context, query: string) => ({
  method: 'POST' as const,
  path: '/graphql',
  headers: { ...json, ...authorized(context) },
  body: JSON.stringify({ query }),
})

const withKey = <T extends { headers: Record<string, string> }>(req: T, key: string): T => ({ ...req, headers: { ...req.headers, 'idempotency-key': key } })

const graphqlBatch = (context: Context, queries: string[]) => ({
  method: 'POST' as const,
  path: '/graphql',
  headers: { ...json, ...authorized(context) },
  body: JSON.stringify(queries.map((query) => ({ query }))),
})

// --- the attacks

/** Goals besides the probe's and RSS that an attack is judged by. */
type ExtraGoal = 'loop delay' | 'no 500' | 'storage' | 'replays charged'

interface Attack {
  name: string
  /** What is sent, for the table's legend. */
  what: string
  variants: Variant[]
  /** The probe times a small POST /graphql too. */
  probeGraphql?: boolean
  extraGoals?: readonly ExtraGoal[]
  /** Settings of the server under attack besides the defaults. */
  env?: Record<string, string>
  run(context: Context): Promise<Record<string, unknown> | undefined>
}

/** What the warm-up asks of GraphQL: a page of users with their posts, as the attacks' documents do. */
const WARM_GRAPHQL = JSON.stringify({ query: '{ usersPage(limit: 20) { items { id name posts(limit: 5) { id title } } } }' })

const WINDOW_END = '/api/v1/users?sort=-age,name&page=100&limit=100'

const SEARCH = `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: usersPage(q: "zz-nomatch", limit: 1) { pageInfo { total } }`).join(' ')} }`
const FAN_OUT = 'subscription { commentAdded { post { author { posts(limit: 45) { comments(limit: 45) { author { posts(limit: 45) { content } } } } } } } }'
/** 9 aliases: a cost of 91,818, just inside the cost limit (100,000), so each is admitted and charged 92 points. */
/** The queries the WebSocket attacker keeps waiting for an answer at once, as a flood's workers. */
const WS_IN_FLIGHT = 4
const PAGES_OF_POSTS = `{ ${Array.from({ length: 9 }, (_, i) => `a${i}: usersPage(limit: 100) { items { id posts(limit: 100) { id } } }`).join(' ')} }`

/**
 * The standard introspection query's `__schema` selection less the fields' arguments, under
 * `aliases` aliases: each nearly the whole answer of the full query, and 8 of them inside the cost
 * bound introspection had before it was charged like any other selection.
 */
function aliasedIntrospection(aliases: number): string {
  const standard = getIntrospectionQuery().replace(/\s+/g, ' ')
  const withoutFieldArgs = standard.replace(
    'fields(includeDeprecated: true) { name description args { ...InputValue } type',
    'fields(includeDeprecated: true) { name description type',
  )
  if (withoutFieldArgs === standard) throw new Error("graphql's introspection query changed: aliasedIntrospection no longer finds the fields' arguments")
  const open = withoutFieldArgs.indexOf('__schema {')
  let depth = 0
  let close = open + '__schema '.length
  for (; close < withoutFieldArgs.length; close++) {
    if (withoutFieldArgs[close] === '{') depth++
    else if (withoutFieldArgs[close] === '}' && --depth === 0) break
  }
  const schema = withoutFieldArgs.slice(open, close + 1)
  const fragments = withoutFieldArgs.slice(withoutFieldArgs.indexOf('fragment '))
  return `query { ${Array.from({ length: aliases }, (_, i) => `i${i}: ${schema}`).join(' ')} } ${fragments}`
}

const INTROSPECTION_8 = aliasedIntrospection(8)
/** The sockets of the unread answers, each with one batch of 10 × INTROSPECTION_8. */
const UNREAD_SOCKETS = 16

/** `aliases` × the large author's posts with their content: about 5 MB each. */
const largePosts = (aliases: number) =>
  `{ user(id: "${ACCOUNTS.largeAuthor.id}") { ${Array.from({ length: aliases }, (_, i) => `p${i}: posts(limit: 100) { content }`).join(' ')} } }`
const LARGE_ANSWER = largePosts(15)
/** The query whose answer is kept, or replayed: about 30 MB. */
const KEPT_QUERY = largePosts(6)
/** A mutation that fails for anyone: anonymous (UNAUTHENTICATED) or signed in (NOT_FOUND); no write is done. */
const FAILING_WRITE = 'mutation { deletePost(id: "999999999") }'
/** A write the signed-in attacker may do, so that its answer is one a server keeps. */
const DONE_WRITE = 'mutation { addTodo(text: "kept for its replays") { id } }'

/**
 * The heaviest page an anonymous caller may ask for 1 point: the end of the offset window's reach,
 * sorted on a column pair, each user with up to 100 posts and 100 todos. A GraphQL page of the same
 * is charged by its rows, so the same allowance buys far fewer of them.
 */
const heavyPage = (n: number) => `/api/v1/users?sort=-age,name&page=${(n % 100) + 1}&limit=100&include=posts,todos&posts.limit=100&todos.limit=100`

const ATTACKS: Attack[] = [
  {
    name: 'search batch',
    what: 'POST /graphql, a batch of 10 × usersPage(q: "zz-nomatch") { pageInfo { total } } × 15 aliases',
    variants: ['anonymous', 'signed-in'],
    run: async (context) => {
      await flood(context, CONCURRENCY, () =>
        graphqlBatch(
          context,
          Array.from({ length: 10 }, () => SEARCH),
        ),
      )
      return undefined
    },
  },
  {
    name: 'deep offset',
    what: '8 at once: GET /api/v1/users?sort=-age,name&page=2000&limit=100',
    variants: ['anonymous', 'signed-in'],
    run: async (context) => {
      await flood(context, 8, () => ({ path: '/api/v1/users?sort=-age,name&page=2000&limit=100', headers: authorized(context) }))
      return undefined
    },
  },
  {
    name: "window's end",
    what: '8 at once: GET /api/v1/users?sort=-age,name&page=100&limit=100',
    variants: ['anonymous', 'signed-in'],
    run: async (context) => {
      await flood(context, 8, () => ({ path: WINDOW_END, headers: authorized(context) }))
      return undefined
    },
  },
  {
    name: 'fan-out',
    what: '20 WebSockets × 20 subscriptions of a 45 × 45 × 45 selection, then 1 comment/s on a post of the cluster',
    variants: ['anonymous', 'signed-in'],
    run: fanOut,
  },
  {
    name: 'websocket queries',
    what: `one WebSocket on /graphql, ${WS_IN_FLIGHT} subscribe messages in flight, each a query of 9 × usersPage(limit: 100) { items { id posts(limit: 100) { id } } }`,
    variants: ['anonymous', 'signed-in'],
    run: websocketQueries,
  },
  {
    name: 'sign-in flood',
    what: 'POST /api/v1/tokens with wrong passwords (victim, unknown e-mails); a bystander signs in every second from 127.0.0.2',
    variants: ['anonymous', 'signed-in'],
    run: signInFlood,
  },
  {
    name: 'upgrade flood',
    what: '1,000 requests asking to upgrade (websocket, h2c, foo) on /api/v1/users/1, /health, /nope, /, and /graphql (malformed), 50 at a time, dropped by the client',
    variants: ['anonymous'],
    run: upgradeFlood,
  },
  {
    name: 'password batch',
    what: 'POST /graphql, a batch of 10 × updateUser(id: <self>, input: {password})',
    variants: ['signed-in'],
    run: async (context) => {
      await flood(context, CONCURRENCY, (n) =>
        graphqlBatch(
          context,
          Array.from({ length: 10 }, (_, i) => `mutation { updateUser(id: "${ACCOUNTS.attacker.id}", input: {password: "new password ${n}-${i}"}) { id } }`),
        ),
      )
      return undefined
    },
  },
  {
    name: 'contention',
    what: `8 at once: GET ${WINDOW_END}, alone, then with a light caller's GET /api/v1/users/<id> every 20 ms from ${ADDRESS.light}`,
    variants: ['anonymous'],
    env: { RATE_LIMIT_MAX: '1000000000', RATE_LIMIT_AUTHENTICATED_MAX: '1000000000' },
    run: contention,
  },
  {
    name: 'unread answers',
    what: `${UNREAD_SOCKETS} raw sockets from ${ADDRESS.attacker}, each POST /graphql a batch of 10 × 8 aliased introspections (about 6 MB), never read`,
    variants: ['anonymous'],
    probeGraphql: true,
    run: (context) => unreadAnswers(context, JSON.stringify(Array.from({ length: 10 }, () => ({ query: INTROSPECTION_8 })))),
  },
  {
    name: 'unread large answers',
    what: `${UNREAD_SOCKETS} raw sockets from ${ADDRESS.attacker}, each POST /graphql of posts(limit: 20) { content } of the large author (about 2 MB, inside every bound), never read`,
    variants: ['anonymous'],
    probeGraphql: true,
    run: (context) => unreadAnswers(context, JSON.stringify({ query: `{ user(id: "${ACCOUNTS.largeAuthor.id}") { posts(limit: 20) { content } } }` })),
  },
  {
    name: 'many callers, 64',
    what: `64 addresses (127.0.1.x), each one request at a time: GET ${heavyPage(99)}, pages 1-100 in turn`,
    variants: ['anonymous'],
    probeGraphql: true,
    extraGoals: ['loop delay'],
    run: async (context) => {
      await flood(context, ADDRESS.many.length, (n) => ({ path: heavyPage(n), headers: authorized(context) }), { addresses: ADDRESS.many })
      return undefined
    },
  },
  {
    name: 'many callers, 200 rotating',
    what: '64 requests at once, each from the next of 200 addresses (127.0.2.x): the same pages',
    variants: ['anonymous'],
    probeGraphql: true,
    extraGoals: ['loop delay'],
    run: async (context) => {
      await flood(context, 64, (n) => ({ path: heavyPage(n), headers: authorized(context) }), { addresses: ADDRESS.rotating, rotate: true })
      return undefined
    },
  },
  {
    name: 'kept answers',
    what: `${CONCURRENCY} at once: POST /graphql, a fresh Idempotency-Key each, a batch of a failing mutation and 6 × posts(limit: 100) { content } of 100 KB posts (about 30 MB)`,
    variants: ['anonymous', 'signed-in'],
    extraGoals: ['storage'],
    run: keptAnswers,
  },
  {
    name: 'replays',
    what: `${CONCURRENCY} at once, one Idempotency-Key: a batch of a write (failing anonymous, addTodo signed in) and 6 × posts(limit: 100) { content } (about 30 MB), replayed`,
    variants: ['anonymous', 'signed-in'],
    extraGoals: ['replays charged'],
    run: replays,
  },
  {
    name: 'aliased introspection',
    what: `16 addresses (127.0.5.x), each one request at a time: POST /graphql of 8 aliased introspections (about 0.6 MB)`,
    variants: ['anonymous'],
    probeGraphql: true,
    extraGoals: ['loop delay'],
    run: async (context) => {
      await flood(context, ADDRESS.introspectors.length, () => graphqlPost(context, INTROSPECTION_8), { addresses: ADDRESS.introspectors })
      return undefined
    },
  },
  {
    name: 'large answers',
    what: `${CONCURRENCY} at once: POST /graphql of 15 × posts(limit: 100) { content } over one user's ${LARGE_POSTS} posts of ${LARGE_POST_BYTES / 1000} KB (about 75 MB)`,
    variants: ['anonymous'],
    probeGraphql: true,
    extraGoals: ['loop delay', 'no 500'],
    run: async (context) => {
      await flood(context, CONCURRENCY, () => graphqlPost(context, LARGE_ANSWER), { large: true, stopWhen: rssSafety(context) })
      return undefined
    },
  },
  {
    name: 'large answers batch',
    what: 'one at a time: a batch of 10 of the same (about 750 MB)',
    variants: ['anonymous'],
    probeGraphql: true,
    extraGoals: ['loop delay', 'no 500'],
    run: async (context) => {
      await flood(
        context,
        1,
        () =>
          graphqlBatch(
            context,
            Array.from({ length: 10 }, () => LARGE_ANSWER),
          ),
        { large: true, stopWhen: rssSafety(context) },
      )
      return undefined
    },
  },
]

/** GET `path` from the attacker's address by `concurrency` workers until `until` (epoch ms); answers 200 per second. */
async function heavyCaller(context: Context, concurrency: number, path: string, until: number): Promise<number> {
  const dispatcher = agentFrom(ADDRESS.attacker, concurrency)
  const startedAt = performance.now()
  let answered = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until && context.tally.sent < MAX_REQUESTS) {
        context.tally.sent++
        const answer = await send(dispatcher, context.url, { path, headers: authorized(context) }, until + DRAIN_MS)
        context.tally.add(answer.status, answer.body)
        if (answer.status === 200) answered++
        else await sleep(answer.status === 429 ? Math.min((answer.retryAfterS ?? 1) * 1000, 1000) : 100)
      }
    }),
  )
  return answered / ((performance.now() - startedAt) / 1000)
}

interface LightResult {
  p50Ms: number
  p99Ms: number
  maxMs: number
  n: number
  statuses: Record<string, number>
}

/** GET /api/v1/users/<id> every `everyMs` from ADDRESS.light until `until`, open loop: each timed from when it was due. */
async function lightCaller(context: Context, everyMs: number, until: number): Promise<LightResult> {
  const dispatcher = agentFrom(ADDRESS.light, 64)
  const times: number[] = []
  const tally = new Tally()
  const pending: Promise<void>[] = []
  const startedAt = performance.now()
  for (let n = 0; Date.now() < until && n < MAX_REQUESTS; n++) {
    const due = startedAt + n * everyMs
    await sleep(Math.max(0, due - performance.now()))
    pending.push(
      send(dispatcher, context.url, { path: `/api/v1/users/${(n % 1000) + 1}` }, until + DRAIN_MS).then((answer) => {
        times.push(performance.now() - due)
        tally.add(answer.status)
      }),
    )
  }
  await Promise.all(pending)
  const s = stats(times)
  return { p50Ms: round(s.p50), p99Ms: round(s.p99), maxMs: round(s.max), n: s.n, statuses: tally.statuses }
}

/** The window's end alone for --seconds, then as long again beside a light caller: what each gets. */
async function contention(context: Context): Promise<Record<string, unknown>> {
  const aloneUntil = Date.now() + SECONDS * 1000
  const alonePerS = await heavyCaller(context, 8, WINDOW_END, aloneUntil)
  const togetherUntil = Date.now() + SECONDS * 1000
  const [togetherPerS, light] = await Promise.all([heavyCaller(context, 8, WINDOW_END, togetherUntil), lightCaller(context, 20, togetherUntil)])
  return { contention: { heavyAlonePerS: round(alonePerS), heavyTogetherPerS: round(togetherPerS), heavyKept: round(togetherPerS / alonePerS), light } }
}

/** The subscribers of the fan-out: what each socket was told, counted without parsing the big messages. */
interface Sockets {
  opened: number
  acknowledged: number
  closeCodes: Record<string, number>
  /** Subscriptions refused (an `error` message), by code. */
  refused: Record<string, number>
  deliveries: number
  deliveredBytes: number
  /** Deliveries that carried errors instead of data, by code. */
  deliveryErrors: Record<string, number>
  /** Upgrades answered with an HTTP status instead of 101, by status. */
  upgradesRefused: Record<string, number>
  /** Set when the bench closes the sockets itself. */
  ending: boolean
}

function openSocket(context: Context, sockets: Sockets, subscriptions: number): Promise<WebSocket> {
  const socket = new WebSocket(`${context.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', {
    localAddress: ADDRESS.attacker,
    perMessageDeflate: false,
  })
  const count = (into: Record<string, number>, code: string) => (into[code] = (into[code] ?? 0) + 1)
  let refusedAtUpgrade = false
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(socket), 5000)
    socket.on('error', () => undefined)
    // Refused at the upgrade (a 429, say): counted by status, and the attempt given up.
    socket.once('unexpected-response', (req, res) => {
      refusedAtUpgrade = true
      count(sockets.upgradesRefused, String(res.statusCode))
      req.destroy()
      clearTimeout(timer)
      resolve(socket)
    })
    socket.once('open', () => {
      sockets.opened++
      socket.send(JSON.stringify({ type: 'connection_init', payload: context.token === undefined ? {} : { authorization: `Bearer ${context.token}` } }))
    })
    socket.once('close', (code) => {
      // Closed by the server (or the network), not by the end of the attack.
      if (!sockets.ending && !refusedAtUpgrade) count(sockets.closeCodes, String(code))
      clearTimeout(timer)
      resolve(socket)
    })
    socket.on('message', (data: Buffer) => {
      // Deliveries are large: counted from their first bytes; only small messages are parsed.
      const head = data.subarray(0, 80).toString()
      if (data.length > 10_000 && head.includes('"next"')) {
        sockets.deliveries++
        sockets.deliveredBytes += data.length
        return
      }
      const message = JSON.parse(data.toString()) as { type: string; payload?: unknown }
      if (message.type === 'connection_ack') {
        sockets.acknowledged++
        for (let i = 0; i < subscriptions; i++) socket.send(JSON.stringify({ id: `s${i}`, type: 'subscribe', payload: { query: FAN_OUT } }))
        clearTimeout(timer)
        resolve(socket)
      } else if (message.type === 'next') {
        sockets.deliveries++
        sockets.deliveredBytes += data.length
        const errors = (message.payload as { errors?: { extensions?: { code?: string } }[] }).errors
        if (errors !== undefined && errors.length > 0) count(sockets.deliveryErrors, errors[0]?.extensions?.code ?? 'ERROR')
      } else if (message.type === 'error') {
        const errors = message.payload as { extensions?: { code?: string } }[] | undefined
        count(sockets.refused, (Array.isArray(errors) ? errors[0]?.extensions?.code : undefined) ?? 'ERROR')
      }
    })
  })
}

async function fanOut(context: Context): Promise<Record<string, unknown>> {
  const sockets: Sockets = {
    upgradesRefused: {},
    opened: 0,
    acknowledged: 0,
    closeCodes: {},
    refused: {},
    deliveries: 0,
    deliveredBytes: 0,
    deliveryErrors: {},
    ending: false,
  }
  const open: WebSocket[] = []
  try {
    for (let i = 0; i < 20 && Date.now() < context.end; i++) open.push(await openSocket(context, sockets, 20))
    // The refusals of subscribe messages arrive right after them; then the comments begin.
    await sleep(500)
    const commenter = agentFrom(ADDRESS.commenter, 8)
    const commentTimes: number[] = []
    const pending = new Set<Promise<void>>()
    let skipped = 0
    let n = 0
    while (Date.now() < context.end && n < MAX_REQUESTS) {
      if (rssOf(context.pid) / 2 ** 20 > RSS_SAFETY_MB) {
        context.notes.push(`comments stopped at ${n}: server RSS over ${RSS_SAFETY_MB} MB`)
        break
      }
      // A steady rate, whatever the server does with them; not more than 8 waiting at once.
      if (pending.size >= 8) skipped++
      else {
        const sentAt = performance.now()
        const comment = send(
          commenter,
          context.url,
          {
            method: 'POST',
            path: `/api/v1/users/${HOT_FIRST}/posts/${HOT_POST_ID}/comments`,
            headers: { ...json, authorization: `Bearer ${context.commenterToken}` },
            body: JSON.stringify({ content: `fan-out ${n}` }),
          },
          context.end + DRAIN_MS,
        ).then((answer) => {
          commentTimes.push(performance.now() - sentAt)
          context.tally.add(answer.status, answer.body)
          pending.delete(comment)
        })
        pending.add(comment)
        context.tally.sent++
        n++
      }
      await sleep(Number(args['comment-every-ms']))
    }
    await Promise.all(pending)
    // Deliveries still on their way are part of the attack's cost: the probe goes on meanwhile,
    // until every live subscription has had every comment (or the drain time is up).
    const refused = Object.values(sockets.refused).reduce((sum, k) => sum + k, 0)
    const live = sockets.acknowledged * 20 - refused
    const expected = Math.max(0, live) * (context.tally.statuses['201'] ?? 0)
    while (Date.now() < context.end + DRAIN_MS && sockets.deliveries < expected) await sleep(100)
    const s = commentTimes.length > 0 ? stats(commentTimes) : undefined
    return {
      sockets: { ...sockets, expectedDeliveries: expected, deliveredMb: Math.round(sockets.deliveredBytes / 2 ** 20) },
      comments: { posted: n, skippedWhileEightWaited: skipped, p50Ms: round(s?.p50), maxMs: round(s?.max) },
    }
  } finally {
    sockets.ending = true
    for (const socket of open) socket.terminate()
  }
}

/** What the WebSocket attacker's queries were answered, and how its sockets ended. */
interface QuerySockets {
  opened: number
  acknowledged: number
  /** Upgrades answered with an HTTP status instead of 101, by status. */
  upgradesRefused: Record<string, number>
  /** Queries answered (a `next` message, or an `error` message refusing the subscribe). */
  answered: number
  /** By outcome: 'ok' for data, else the first error's code. */
  byOutcome: Record<string, number>
  /** Closed by the server (or the network), by code. */
  closes: Record<string, number>
}

/** A socket the server closes is opened again this many times at most: enough to see whether it keeps closing them. */
const WS_REOPENS = 3

/**
 * Queries, not subscriptions, over one WebSocket: each subscribe message is answered once (`next`,
 * then `complete`), and its slot sends the next, WS_IN_FLIGHT at a time. Each is an HTTP request's
 * work without an HTTP request: it must be charged its points as one, or a socket is a way round
 * the rate limit.
 */
async function websocketQueries(context: Context): Promise<Record<string, unknown>> {
  const sockets: QuerySockets = { opened: 0, acknowledged: 0, upgradesRefused: {}, answered: 0, byOutcome: {}, closes: {} }
  let ids = 0
  for (let opening = 0; opening <= WS_REOPENS && Date.now() < context.end; opening++) {
    if (opening > 0) await sleep(Math.min(1000, Math.max(0, context.end - Date.now())))
    if ((await querySocket(context, sockets, () => `q${ids++}`)) === 'ended') break
  }
  return { websocket: sockets }
}

/**
 * One socket from the attacker's address, signed in by connection_init in the signed-in variant;
 * once acknowledged, WS_IN_FLIGHT slots send queries until the attack's end. Resolves when the
 * socket is closed: 'ended' by the bench (every answer in, or --drain up), 'closed' by the server.
 */
function querySocket(context: Context, sockets: QuerySockets, nextId: () => string): Promise<'ended' | 'closed'> {
  const socket = new WebSocket(`${context.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', {
    localAddress: ADDRESS.attacker,
    perMessageDeflate: false,
  })
  const count = (into: Record<string, number>, key: string) => (into[key] = (into[key] ?? 0) + 1)
  /** The queries waiting for their end (`complete` or `error`), each told the seconds to wait when rate-limited. */
  const waiting = new Map<string, (retryAfterS: number | undefined) => void>()
  const retryAfter = new Map<string, number>()
  let ending = false
  const end = (reason?: string) => {
    if (reason !== undefined) context.notes.push(reason)
    ending = true
    socket.terminate()
  }
  // Answers still missing --drain seconds after the attack are given up, with the socket.
  const drain = setTimeout(() => end(), Math.max(1, context.end + DRAIN_MS - Date.now()))
  const acknowledged = setTimeout(() => end('websocket: no connection_ack within 5 s'), 5000)

  const slot = async () => {
    while (Date.now() < context.end && context.tally.sent < MAX_REQUESTS && socket.readyState === WebSocket.OPEN) {
      const id = nextId()
      const answered = new Promise<number | undefined>((resolve) => waiting.set(id, resolve))
      context.tally.sent++
      socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query: PAGES_OF_POSTS } }))
      const retryAfterS = await answered
      if (retryAfterS !== undefined) await sleep(Math.min(retryAfterS * 1000, 1000, Math.max(0, context.end - Date.now())))
    }
  }
  type Errors = { message?: string; extensions?: { code?: string; retryAfter?: number } }[]
  /** One answer: counted by its outcome; a rate-limited one keeps the seconds its slot is to wait. */
  const answer = (id: string, status: Status, payload: { data?: unknown; errors?: Errors }) => {
    sockets.answered++
    const first = payload.errors?.[0]
    count(sockets.byOutcome, first === undefined ? 'ok' : (first.extensions?.code ?? 'ERROR'))
    // Its outcome alone: the data (up to a few MB) need not be counted again.
    context.tally.add(status, JSON.stringify(first === undefined ? { data: null } : { errors: [first] }))
    if (first?.extensions?.code === 'RATE_LIMITED') retryAfter.set(id, first.extensions.retryAfter ?? 1)
  }
  const finished = (id: string) => {
    const resolve = waiting.get(id)
    waiting.delete(id)
    resolve?.(retryAfter.get(id))
    retryAfter.delete(id)
  }

  return new Promise((resolve) => {
    socket.on('error', () => undefined)
    // Refused at the upgrade (a 429, say): counted by status, and the attempt given up.
    socket.once('unexpected-response', (_req, res) => {
      count(sockets.upgradesRefused, String(res.statusCode))
      context.notes.push(`websocket: upgrade refused with ${res.statusCode}`)
      socket.terminate()
    })
    socket.once('open', () => {
      sockets.opened++
      socket.send(JSON.stringify({ type: 'connection_init', payload: context.token === undefined ? {} : { authorization: `Bearer ${context.token}` } }))
    })
    socket.once('close', (code, reason) => {
      clearTimeout(drain)
      clearTimeout(acknowledged)
      if (!ending && sockets.opened > 0) {
        count(sockets.closes, String(code))
        context.notes.push(`websocket: closed by the server with ${code}${reason.length > 0 ? ` (${reason.toString()})` : ''}`)
      }
      // Queries the socket took with it: never answered.
      for (const id of [...waiting.keys()]) {
        context.tally.add('unanswered')
        finished(id)
      }
      resolve(ending ? 'ended' : 'closed')
    })
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString()) as { id?: string; type: string; payload?: unknown }
      if (message.type === 'connection_ack') {
        sockets.acknowledged++
        clearTimeout(acknowledged)
        void Promise.all(Array.from({ length: WS_IN_FLIGHT }, slot)).then(() => {
          if (socket.readyState !== WebSocket.OPEN) return
          ending = true
          socket.close(1000)
        })
      } else if (message.type === 'ping') {
        socket.send(JSON.stringify({ type: 'pong' }))
      } else if (message.id === undefined) {
        return
      } else if (message.type === 'next') {
        answer(message.id, 200, message.payload as { data?: unknown; errors?: Errors })
      } else if (message.type === 'complete') {
        finished(message.id)
      } else if (message.type === 'error') {
        // The protocol's refusal of the subscribe: its errors, and no `complete` after it.
        answer(message.id, 'refused', { errors: message.payload as Errors })
        finished(message.id)
      }
    })
  })
}

interface SignInResult {
  address: string
  email: string
  statuses: Record<string, number>
  p50Ms: number
  maxMs: number
  n: number
}

async function signInFlood(context: Context): Promise<Record<string, unknown>> {
  const signIn = (email: string, password: string) => JSON.stringify({ email, password })
  /** Every second from `address`: a sign-in with the right password, timed from when it was due. */
  const legitimate = async (address: string, email: string, password: string): Promise<SignInResult> => {
    const dispatcher = agentFrom(address, 8)
    const times: number[] = []
    const tally = new Tally()
    const pending: Promise<void>[] = []
    while (Date.now() < context.end && pending.length < MAX_REQUESTS) {
      const due = performance.now()
      pending.push(
        send(dispatcher, context.url, { method: 'POST', path: '/api/v1/tokens', headers: json, body: signIn(email, password) }, context.end + DRAIN_MS).then(
          (answer) => {
            times.push(performance.now() - due)
            tally.add(answer.status)
          },
        ),
      )
      await sleep(1000)
    }
    await Promise.all(pending)
    const s = stats(times)
    return { address, email, statuses: tally.statuses, p50Ms: round(s.p50), maxMs: round(s.max), n: s.n }
  }
  const [, bystander, victim] = await Promise.all([
    flood(context, CONCURRENCY, (n) => ({
      method: 'POST',
      path: '/api/v1/tokens',
      headers: { ...json, ...authorized(context) },
      body: n % 2 === 0 ? signIn(ACCOUNTS.victim.email, `wrong password ${n}`) : signIn(`nobody.${n}@example.org`, `wrong password ${n}`),
    })),
    legitimate(ADDRESS.bystander, ACCOUNTS.bystander.email, ACCOUNTS.bystander.password),
    legitimate(ADDRESS.victim, ACCOUNTS.victim.email, ACCOUNTS.victim.password),
  ])
  return { bystanderSignIn: bystander, victimSignInFromElsewhere: victim }
}

/**
 * The server's connections from the attacker's address, as the kernel lists them (time-wait ones
 * hold no descriptor and are left out; the probe's kept-alive connections come from other addresses).
 */
const attackerConnections = (port: string) =>
  execFileSync('ss', ['-tnH', 'state', 'connected', 'exclude', 'time-wait', `( sport = :${port} and dst ${ADDRESS.attacker} )`], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.trim() !== '').length

const UPGRADES = [
  ['/api/v1/users/1', 'websocket'],
  ['/health', 'h2c'],
  ['/nope', 'foo'],
  ['/', 'websocket'],
  ['/graphql', 'websocket\r\nSec-WebSocket-Version: 99\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='],
] as const

async function upgradeFlood(context: Context): Promise<Record<string, unknown>> {
  const { port } = new URL(context.url)
  const before = attackerConnections(port)
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, attackerConnections(port))), 50)
  /** One request on a connection of its own; the client reads the answer's head and drops the connection. */
  const upgrade = (n: number) =>
    new Promise<void>((resolve) => {
      const [path, protocol] = UPGRADES[n % UPGRADES.length]!
      const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress: ADDRESS.attacker })
      let head = ''
      const done = (status: Status) => {
        clearTimeout(timer)
        socket.destroy()
        context.tally.add(status)
        resolve()
      }
      const timer = setTimeout(() => done('timeout'), Math.max(1, context.end + DRAIN_MS - Date.now()))
      socket.on('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: ${protocol}\r\n\r\n`))
      socket.on('data', (chunk) => {
        head += chunk.toString('latin1')
        if (head.includes('\r\n')) done(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? Number.NaN))
      })
      socket.on('error', () => done('error'))
    })
  let next = 0
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < 1000 && Date.now() < context.end) {
        context.tally.sent++
        await upgrade(next++)
      }
    }),
  )
  const floodedAt = performance.now()
  let after = attackerConnections(port)
  while (after > before && performance.now() - floodedAt < GOALS.connectionsBackWithinMs) {
    await sleep(100)
    after = attackerConnections(port)
  }
  const backAfterMs = after > before ? undefined : Math.round(performance.now() - floodedAt)
  clearInterval(sampler)
  await sleep(Math.max(0, context.end - Date.now()))
  return { connections: { before, peak, after, backAfterMs } }
}

// --- bytes held, stored and replayed

/**
 * The server's side of its connections from the attacker that are still the server's, by the
 * client's port: held by its process (`ss` names it), or established and waiting to be accepted
 * (the process busy), each with the bytes written to it that the client has not taken (Send-Q). A
 * connection the server closed with its answer unsent lingers in the kernel in another state,
 * without a process, and holds nothing of it.
 */
function serverSides(pid: number, port: string): Map<number, { unsentBytes: number }> {
  const lines = execFileSync('ss', ['-tnpH', 'state', 'all', `( sport = :${port} and dst ${ADDRESS.attacker} )`], { encoding: 'utf8' }).split('\n')
  const sides = new Map<number, { unsentBytes: number }>()
  for (const line of lines) {
    if (!line.includes(`pid=${pid},`) && !line.startsWith('ESTAB')) continue
    // State, Recv-Q, Send-Q, the local address, then the peer's: its port is the client's.
    const fields = line.trim().split(/\s+/)
    const peer = fields[4]
    if (peer !== undefined) sides.set(Number(peer.slice(peer.lastIndexOf(':') + 1)), { unsentBytes: Number(fields[2]) })
  }
  return sides
}

/** The bytes waiting, unread, in the kernel for each of the attacker's connections to the server, by its port (Recv-Q). */
function unreadBytes(port: string): Map<number, number> {
  const lines = execFileSync('ss', ['-tnH', 'state', 'all', `( dport = :${port} and src ${ADDRESS.attacker} )`], { encoding: 'utf8' }).split('\n')
  const unread = new Map<number, number>()
  for (const line of lines) {
    // State, Recv-Q, Send-Q, then the local address: the attacker's port.
    const fields = line.trim().split(/\s+/)
    const local = fields[3]
    if (local !== undefined) unread.set(Number(local.slice(local.lastIndexOf(':') + 1)), Number(fields[1]))
  }
  return unread
}

/**
 * UNREAD_SOCKETS connections each send `body` to POST /graphql and never read a byte of the answer; each is watched until the server holds no answer on it (or --drain seconds after the
 * attack): it dropped the connection, or the whole answer is with the client (some bytes arrived and
 * none wait on the server's side: a small answer, a refusal, fits the sockets' buffers).
 */
async function unreadAnswers(context: Context, body: string): Promise<Record<string, unknown>> {
  const { port } = new URL(context.url)
  const head = `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
  const sockets: { socket: Socket; port: number; sentAt: number; heldMs?: number; how?: 'dropped' | 'delivered' }[] = []
  try {
    for (let i = 0; i < UNREAD_SOCKETS; i++) {
      const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress: ADDRESS.attacker })
      socket.on('error', () => undefined)
      // Paused from the start, with no 'data' listener: nothing is read, the answer stays in the kernel.
      socket.pause()
      const connected = await Promise.race([new Promise<boolean>((resolve) => socket.once('connect', () => resolve(true))), sleep(5000).then(() => false)])
      context.tally.sent++
      if (!connected) {
        context.tally.add('error')
        socket.destroy()
        continue
      }
      socket.write(head + body)
      sockets.push({ socket, port: socket.localPort ?? 0, sentAt: performance.now() })
    }
    let peakHeld = 0
    for (;;) {
      const sides = serverSides(context.pid, port)
      const arrived = unreadBytes(port)
      peakHeld = Math.max(peakHeld, sockets.filter((s) => sides.has(s.port)).length)
      const now = performance.now()
      for (const s of sockets) {
        if (s.heldMs !== undefined) continue
        const side = sides.get(s.port)
        const how = side === undefined ? 'dropped' : side.unsentBytes === 0 && (arrived.get(s.port) ?? 0) > 0 ? 'delivered' : undefined
        if (how === undefined) continue
        s.heldMs = now - s.sentAt
        s.how = how
      }
      const waiting = sockets.filter((s) => s.heldMs === undefined).length
      if ((waiting === 0 && Date.now() >= context.end) || Date.now() >= context.end + DRAIN_MS) break
      await sleep(250)
    }
    const released = sockets.flatMap((s) => (s.heldMs === undefined ? [] : [s.heldMs]))
    for (const s of sockets) context.tally.add(s.how ?? 'unanswered')
    const held = released.length > 0 ? stats(released) : undefined
    return {
      unread: {
        sockets: sockets.length,
        released: released.length,
        delivered: sockets.filter((s) => s.how === 'delivered').length,
        heldP50S: round((held?.p50 ?? Number.NaN) / 1000),
        heldMaxS: round((held?.max ?? Number.NaN) / 1000),
        peakHeld,
        watchedS: round((Date.now() - context.end + SECONDS * 1000) / 1000),
      },
    }
  } finally {
    for (const s of sockets) s.socket.destroy()
  }
}

/** The database's bytes on disk: the file and its write-ahead log. */
function databaseBytes(file: string): number {
  return [file, `${file}-wal`].reduce((sum, part) => sum + (existsSync(part) ? statSync(part).size : 0), 0)
}

/** The kept answers' rows and bytes, read beside the running server; the pages only where SQLite has dbstat. */
function keptFigures(file: string): { rows: number; bodyMb: number; pagesMb?: number } {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const { rows, bytes } = db.prepare('select count(*) as rows, coalesce(sum(length(cast(body as blob))), 0) as bytes from idempotency_keys').get() as {
      rows: number
      bytes: number
    }
    let pagesMb: number | undefined
    try {
      const pages = db.prepare("select coalesce(sum(pgsize), 0) from dbstat where name like 'idempotency%'").pluck().get() as number
      pagesMb = round(pages / 2 ** 20)
    } catch {
      pagesMb = undefined
    }
    return { rows, bodyMb: round(bytes / 2 ** 20), ...(pagesMb === undefined ? {} : { pagesMb }) }
  } finally {
    db.close()
  }
}

/** Batches of FAILING_WRITE and KEPT_QUERY, each with a key of its own, until the attack's end: what the database keeps of them. */
async function keptAnswers(context: Context): Promise<Record<string, unknown>> {
  const before = databaseBytes(context.db)
  const disk = () =>
    databaseBytes(context.db) / 2 ** 20 > DISK_SAFETY_MB ? `stopped sending at ${context.tally.sent}: the database past ${DISK_SAFETY_MB} MB` : undefined
  await flood(context, CONCURRENCY, () => withKey(graphqlBatch(context, [FAILING_WRITE, KEPT_QUERY]), randomUUID()), {
    large: true,
    stopWhen: () => disk() ?? rssSafety(context)(),
  })
  const after = databaseBytes(context.db)
  return {
    storage: {
      beforeMb: round(before / 2 ** 20),
      afterMb: round(after / 2 ** 20),
      grownMb: round((after - before) / 2 ** 20),
      kept: keptFigures(context.db),
    },
  }
}

/**
 * One batch (a write and KEPT_QUERY) sent once, then again and again with the same key for --seconds
 * from its answer (making it is not replaying it): what each answer is charged.
 */
async function replays(context: Context): Promise<Record<string, unknown>> {
  const req = withKey(graphqlBatch(context, [context.token === undefined ? FAILING_WRITE : DONE_WRITE, KEPT_QUERY]), randomUUID())
  context.tally.sent++
  const first = await send(agentFrom(ADDRESS.attacker, 1), context.url, req, context.end + DRAIN_MS, true)
  context.tally.add(first.status, first.body)
  const costs: number[] = []
  let answered = 0
  let replayed = 0
  /** Answers without an X-RateLimit-Cost: what they were charged is not said. */
  let uncosted = 0
  let bytes = 0
  let limit: number | undefined
  const startedAt = performance.now()
  const replaying = { ...context, end: Math.max(context.end, Date.now() + SECONDS * 1000) }
  await flood(replaying, CONCURRENCY, () => req, {
    large: true,
    stopWhen: rssSafety(context),
    onAnswer: (answer) => {
      if (answer.status !== 200 || answer.headers === undefined) return
      answered++
      bytes += answer.bytes ?? 0
      if (answer.headers['idempotent-replayed'] === 'true') replayed++
      const cost = answer.headers['x-ratelimit-cost']
      if (typeof cost === 'string' && Number.isFinite(Number(cost))) costs.push(Number(cost))
      else uncosted++
      const allowance = Number(answer.headers['x-ratelimit-limit'])
      if (Number.isFinite(allowance)) limit = allowance
    },
  })
  const minutes = (performance.now() - startedAt) / 60_000
  const charged = costs.length > 0 ? stats(costs) : undefined
  return {
    replays: {
      first: { status: first.status, mb: round((first.bytes ?? 0) / 2 ** 20), cost: String(first.headers?.['x-ratelimit-cost'] ?? '-') },
      answered,
      replayed,
      uncosted,
      perMinute: round(answered / minutes),
      mbPerMinute: round(bytes / 2 ** 20 / minutes),
      cost: { min: charged?.min, p50: charged?.p50, max: charged?.max, sum: costs.reduce((sum, cost) => sum + cost, 0) },
      limit,
    },
  }
}

// --- the server's loop delay (the probe: abuse-probe.ts)

/** prom-client's sampling period of the loop (its default precision): every sample holds it, a loop never late reads it. */
const METRICS_LOOP_RESOLUTION_MS = 10

/** The server's event-loop delay over a stretch of time: its p99 and max, and where the figures come from. */
interface LoopDelay {
  p99Ms: number
  maxMs: number
  source: string
}

/**
 * The server's own event-loop delay since the last call (prom-client's histogram of
 * monitorEventLoopDelay, on GET /metrics, is reset by each scrape), less the sampling period every
 * sample holds; undefined when the server has no metrics (METRICS=false, or a METRICS_TOKEN). The
 * same instrument in every build, where a newer one's /health figure (a p99 over half a second) is
 * printed beside it.
 */
async function loopDelaySinceLastRead(url: string): Promise<LoopDelay | undefined> {
  const answer = await send(agentFrom(ADDRESS.probe, 1), url, { path: '/metrics' }, Date.now() + 30_000)
  if (answer.status !== 200 || answer.body === undefined) return undefined
  const seconds = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(answer.body ?? '')?.[1])
  const p99 = seconds('nodejs_eventloop_lag_p99_seconds')
  const max = seconds('nodejs_eventloop_lag_max_seconds')
  if (!Number.isFinite(p99) || !Number.isFinite(max)) return undefined
  const late = (s: number) => round(Math.max(0, s * 1000 - METRICS_LOOP_RESOLUTION_MS))
  return { p99Ms: late(p99), maxMs: late(max), source: 'the server (GET /metrics)' }
}

// --- running

const round = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? Number.NaN : Math.round(ms * 10) / 10)

/** Every server started so far: stopped at the end, on a failure and on Ctrl-C alike. */
const started: RunningServer[] = []
const stopAll = () => Promise.all(started.splice(0).map((server) => server.stop()))
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().then(() => process.exit(130)))

const main_js = join(SERVER_DIR, 'dist', 'main.js')

function cli(cliArgs: string[], db: string): string {
  return execFileSync(process.execPath, [main_js, ...cliArgs], {
    env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${db}`, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  }).trim()
}

const removeDb = (file: string) => {
  for (const part of ['', '-wal', '-shm']) rmSync(`${file}${part}`, { force: true })
}

async function startThreadline(db: string, env: Record<string, string> = {}): Promise<RunningServer> {
  const port = await freePort()
  const server = await startServer(
    [main_js, 'serve'],
    // The representation cache off: an attacker varies the URL (a page number, a limit) so that every
    // request does its work; with it on, the same URL repeated is answered from memory and measures nothing.
    {
      DATABASE_URL: `sqlite:${db}`,
      SEED_DEMO_DATA: 'false',
      LOG_LEVEL: 'warn',
      HTTP_REPRESENTATION_CACHE_MB: '0',
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    `http://127.0.0.1:${port}/health`,
  )
  started.push(server)
  return server
}

interface Run {
  attack: string
  variant: Variant
  loadAvg1m: number
  seconds: number
  sent: number
  statuses: Record<string, number>
  codes: Record<string, number>
  probe: Probes
  /** The server's event-loop delay during the attack; from the probe's /health when the server tells none. */
  loopDelay: LoopDelay
  peakRssMb: number
  serverDied: boolean
  extraGoals: readonly ExtraGoal[]
  notes: string[]
  details?: Record<string, unknown>
}

async function runAttack(attack: Attack, variant: Variant, master: string, tokens: { attacker: string; commenter: string }): Promise<Run> {
  const db = join(DATA, 'abuse-run.db')
  removeDb(db)
  copyFileSync(master, db)
  // On disk before the server starts: the copy's writeback must not land in the attack's figures.
  const fd = openSync(db, 'r+')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  const server = await startThreadline(db, attack.env)
  const tally = new Tally()
  const notes: string[] = []
  let peakRss = 0
  let died = false
  const sampler = setInterval(() => {
    try {
      peakRss = Math.max(peakRss, rssOf(server.pid))
    } catch {
      died = true
    }
  }, 100)
  const loadAvg1m = round(loadavg()[0])
  try {
    // Warm, from the probe's address: the first answers of a fresh process are not the attack's doing
    // (a fresh process's first GraphQL pages held the loop 130 ms, a warm one's 20-50). The warm-up's
    // document is not the attack's: the attack's first parse, validation and run are still its own.
    const warm = agentFrom(ADDRESS.probe, 1)
    for (let i = 0; i < 5; i++) {
      await send(warm, server.url, { path: '/api/v1/users/1' }, Date.now() + 10_000)
      await send(
        warm,
        server.url,
        { method: 'POST', path: '/graphql', headers: { 'content-type': 'application/json' }, body: WARM_GRAPHQL },
        Date.now() + 10_000,
      )
    }
    // Read once to start the server's histogram afresh: what it holds now is the warm-up's.
    const metrics = (await loopDelaySinceLastRead(server.url)) !== undefined
    const probe = await startProbe({
      url: server.url,
      graphql: attack.probeGraphql === true,
      healthAddress: ADDRESS.probe,
      userAddresses: ADDRESS.probePool,
      graphqlAddresses: ADDRESS.graphqlProbePool,
      maxRequests: MAX_REQUESTS,
    })
    const startedAt = Date.now()
    const context: Context = {
      url: server.url,
      db,
      variant,
      token: variant === 'signed-in' ? tokens.attacker : undefined,
      commenterToken: tokens.commenter,
      end: startedAt + SECONDS * 1000,
      tally,
      pid: server.pid,
      notes,
    }
    const details = await attack.run(context)
    const loopDelay = metrics ? await loopDelaySinceLastRead(server.url) : undefined
    const probed = await probe.stop()
    try {
      peakRss = Math.max(peakRss, rssOf(server.pid, 'VmHWM'))
    } catch {
      died = true
    }
    if (died) notes.push('the server exited during the attack')
    return {
      attack: attack.name,
      variant,
      loadAvg1m,
      seconds: round((Date.now() - startedAt) / 1000),
      sent: tally.sent,
      statuses: tally.statuses,
      codes: tally.codes,
      probe: probed,
      loopDelay: loopDelay ?? { p99Ms: probed.health.p99, maxMs: probed.health.max, source: "the probe's GET /health (the server tells none)" },
      peakRssMb: Math.round(peakRss / 2 ** 20),
      serverDied: died,
      extraGoals: attack.extraGoals ?? [],
      notes,
      ...(details === undefined ? {} : { details }),
    }
  } finally {
    clearInterval(sampler)
    await server.stop()
    started.splice(started.indexOf(server), 1)
    removeDb(db)
  }
}

interface Goal {
  run: string
  goal: string
  measured: string
  met: boolean
}

function goalsOf(run: Run): Goal[] {
  const name = `${run.attack}, ${run.variant}`
  const probes = [run.probe.health, run.probe.user, ...(run.probe.graphql === undefined ? [] : [run.probe.graphql])]
  const p99 = Math.max(...probes.map((probe) => probe.p99))
  const max = Math.max(...probes.map((probe) => probe.max))
  const goals: Goal[] = [
    { run: name, goal: `probe p99 < ${GOALS.probeP99Ms} ms`, measured: `${p99} ms`, met: p99 < GOALS.probeP99Ms },
    { run: name, goal: `no probe > ${GOALS.probeMaxMs} ms`, measured: `${max} ms`, met: max <= GOALS.probeMaxMs },
    { run: name, goal: `peak RSS < ${GOALS.rssMb} MB`, measured: `${run.peakRssMb} MB`, met: run.peakRssMb < GOALS.rssMb && !run.serverDied },
  ]
  goals.push(...extraGoalsOf(run, name))
  const connections = run.details?.connections as { before: number; after: number; backAfterMs: number | undefined } | undefined
  if (connections !== undefined) {
    goals.push({
      run: name,
      goal: `attacker's connections back to ${connections.before} within ${GOALS.connectionsBackWithinMs / 1000} s`,
      measured:
        connections.backAfterMs === undefined
          ? `${connections.after} after ${GOALS.connectionsBackWithinMs / 1000} s`
          : `back after ${connections.backAfterMs} ms`,
      met: connections.backAfterMs !== undefined,
    })
  }
  const bystander = run.details?.bystanderSignIn as SignInResult | undefined
  if (bystander !== undefined) {
    const allSignedIn = (bystander.statuses['201'] ?? 0) === bystander.n
    goals.push({
      run: name,
      goal: `bystander's sign-in < ${GOALS.signInMs} ms, each 201`,
      measured: `max ${bystander.maxMs} ms, ${JSON.stringify(bystander.statuses)}`,
      met: bystander.maxMs < GOALS.signInMs && allSignedIn,
    })
  }
  const contended = run.details?.contention as { heavyKept: number; heavyAlonePerS: number; heavyTogetherPerS: number; light: LightResult } | undefined
  if (contended !== undefined) {
    const allAnswered = (contended.light.statuses['200'] ?? 0) === contended.light.n
    goals.push(
      {
        run: name,
        goal: `light caller p99 < ${GOALS.lightP99Ms} ms, each 200`,
        measured: `${contended.light.p99Ms} ms (max ${contended.light.maxMs} ms), ${JSON.stringify(contended.light.statuses)}`,
        met: contended.light.p99Ms < GOALS.lightP99Ms && allAnswered,
      },
      {
        run: name,
        goal: `heavy caller keeps ≥ ${GOALS.heavyKept} of its pages alone`,
        measured: `${contended.heavyKept} (${contended.heavyTogetherPerS} of ${contended.heavyAlonePerS} pages/s)`,
        met: contended.heavyKept >= GOALS.heavyKept,
      },
    )
  }
  return goals
}

interface Unread {
  sockets: number
  /** Sockets the server holds no answer on any more: dropped, or `delivered` whole. */
  released: number
  delivered: number
  heldP50S: number
  heldMaxS: number
  peakHeld: number
  watchedS: number
}

interface Storage {
  beforeMb: number
  afterMb: number
  grownMb: number
  kept: { rows: number; bodyMb: number; pagesMb?: number }
}

interface Replays {
  first: { status: Status; mb: number; cost: string }
  answered: number
  replayed: number
  uncosted: number
  perMinute: number
  mbPerMinute: number
  cost: { min?: number; p50?: number; max?: number; sum: number }
  limit?: number
}

/** The goals an attack named besides the probe's and RSS, and those that follow from what it measured. */
function extraGoalsOf(run: Run, name: string): Goal[] {
  const goals: Goal[] = []
  if (run.extraGoals.includes('loop delay')) {
    const { p99Ms, maxMs, source } = run.loopDelay
    goals.push({
      run: name,
      goal: `loop delay p99 < ${GOALS.loopDelayP99Ms} ms`,
      measured: `${p99Ms} ms (max ${maxMs} ms), from ${source}`,
      met: p99Ms < GOALS.loopDelayP99Ms,
    })
  }
  if (run.extraGoals.includes('no 500')) {
    const errors = (run.statuses['500'] ?? 0) + (run.codes['INTERNAL_ERROR'] ?? 0)
    goals.push({ run: name, goal: 'no 500 nor INTERNAL_ERROR', measured: `${errors}`, met: errors === 0 })
  }
  const storage = run.details?.storage as Storage | undefined
  if (run.extraGoals.includes('storage') && storage !== undefined) {
    goals.push({
      run: name,
      goal: `the database grows < ${GOALS.keptGrowthMb} MB`,
      measured: `${storage.grownMb} MB (${storage.beforeMb} → ${storage.afterMb} MB)`,
      met: storage.grownMb < GOALS.keptGrowthMb,
    })
  }
  const replayed = run.details?.replays as Replays | undefined
  if (run.extraGoals.includes('replays charged') && replayed !== undefined) {
    // Each answer takes a point at least (its arrival's, which an answer without X-RateLimit-Cost
    // took too), so the allowance bounds how many are answered in each window the run touched.
    const least = replayed.cost.min
    const bound = replayed.limit === undefined ? undefined : replayed.limit * Math.ceil(SECONDS / 60)
    goals.push({
      run: name,
      goal: `replays bounded by the allowance (≤ ${bound ?? '?'} answered in ${SECONDS} s)`,
      measured:
        `${replayed.answered} answered; cost ${least ?? '-'}-${replayed.cost.max ?? '-'} (p50 ${replayed.cost.p50 ?? '-'})` +
        (replayed.uncosted > 0 ? `; ${replayed.uncosted} of ${replayed.answered} without the header (their arrival point only)` : ''),
      met: bound !== undefined && replayed.answered <= bound,
    })
  }
  const unread = run.details?.unread as Unread | undefined
  if (unread !== undefined) {
    goals.push({
      run: name,
      goal: 'no answer held on an unread socket',
      measured:
        unread.released === unread.sockets
          ? `${unread.released} of ${unread.sockets}, held p50 ${unread.heldP50S} s, max ${unread.heldMaxS} s`
          : `${unread.released} of ${unread.sockets} within ${unread.watchedS} s`,
      met: unread.released === unread.sockets,
    })
  }
  return goals
}

const compact = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([, a], [, b]) => b - a)
    .map(([key, n]) => `${key}×${n}`)
    .join(' ')

function table(runs: readonly Run[]): string[] {
  const header = [
    'attack',
    'caller',
    'sent',
    'statuses',
    'codes',
    '/health p50/p99/max ms',
    '/users/1 p50/p99/max ms',
    '/graphql p50/p99/max ms',
    'loop p99/max ms',
    'peak RSS MB',
  ]
  const rows = runs.map((r) => [
    r.attack,
    r.variant,
    String(r.sent),
    compact(r.statuses),
    compact(r.codes),
    `${r.probe.health.p50} / ${r.probe.health.p99} / ${r.probe.health.max}`,
    `${r.probe.user.p50} / ${r.probe.user.p99} / ${r.probe.user.max}`,
    r.probe.graphql === undefined ? '-' : `${r.probe.graphql.p50} / ${r.probe.graphql.p99} / ${r.probe.graphql.max}`,
    `${r.loopDelay.p99Ms} / ${r.loopDelay.maxMs}${r.loopDelay.source.includes('probe') ? ' (probe)' : ''}`,
    `${r.peakRssMb}${r.serverDied ? ' (died)' : ''}`,
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)))
  const line = (cells: readonly string[]) => cells.map((c, i) => (i < 5 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)]
}

function detailLines(runs: readonly Run[]): string[] {
  const lines: string[] = []
  for (const r of runs) {
    const d = r.details as
      | {
          sockets?: Sockets & { deliveredMb: number; expectedDeliveries: number }
          comments?: Record<string, number>
          bystanderSignIn?: SignInResult
          victimSignInFromElsewhere?: SignInResult
          connections?: { before: number; peak: number; after: number; backAfterMs: number | undefined }
        }
      | undefined
    const at = `${r.attack}, ${r.variant}:`
    if (d?.connections !== undefined) {
      const { before, peak, after, backAfterMs } = d.connections
      lines.push(
        `${at} the server's connections from the attacker: ${before} before, ${peak} at most, ${after} ${backAfterMs === undefined ? 'when given up' : `${backAfterMs} ms after the flood`}`,
      )
    }
    if (d?.sockets !== undefined) {
      const s = d.sockets
      lines.push(
        `${at} upgrades refused ${compact(s.upgradesRefused) || 'none'}; sockets opened ${s.opened}, acknowledged ${s.acknowledged}, closed ${compact(s.closeCodes) || 'none'}; subscriptions refused ${compact(s.refused) || 'none'};` +
          ` deliveries ${s.deliveries} of ${s.expectedDeliveries} (${s.deliveredMb} MB${Object.keys(s.deliveryErrors).length > 0 ? `, with errors ${compact(s.deliveryErrors)}` : ''});` +
          ` comments posted ${d.comments?.posted}, POST p50 ${d.comments?.p50Ms} ms, max ${d.comments?.maxMs} ms`,
      )
    }
    const queried = r.details?.websocket as QuerySockets | undefined
    if (queried !== undefined) {
      lines.push(
        `${at} sockets opened ${queried.opened}, acknowledged ${queried.acknowledged}, upgrades refused ${compact(queried.upgradesRefused) || 'none'};` +
          ` queries answered ${queried.answered} (${compact(queried.byOutcome) || 'none'}); closed by the server ${compact(queried.closes) || 'none'}`,
      )
    }
    for (const [who, signIn] of [
      ['bystander', d?.bystanderSignIn],
      ['victim (from 127.0.0.5)', d?.victimSignInFromElsewhere],
    ] as const) {
      if (signIn !== undefined) lines.push(`${at} ${who} signs in every second: ${compact(signIn.statuses)}, p50 ${signIn.p50Ms} ms, max ${signIn.maxMs} ms`)
    }
    const contended = r.details?.contention as { heavyAlonePerS: number; heavyTogetherPerS: number; light: LightResult } | undefined
    if (contended !== undefined) {
      const { light } = contended
      lines.push(
        `${at} heavy caller ${contended.heavyAlonePerS} pages/s alone, ${contended.heavyTogetherPerS} beside the light caller;` +
          ` light caller ${compact(light.statuses)}, p50 ${light.p50Ms} ms, p99 ${light.p99Ms} ms, max ${light.maxMs} ms`,
      )
    }
    const unread = r.details?.unread as Unread | undefined
    if (unread !== undefined) {
      lines.push(
        `${at} ${unread.sockets} sockets never read; the server let ${unread.released - unread.delivered} go and delivered ${unread.delivered} answers whole (each held, from its request, p50 ${unread.heldP50S} s, max ${unread.heldMaxS} s), ${unread.peakHeld} held at most at once, watched ${unread.watchedS} s`,
      )
    }
    const storage = r.details?.storage as Storage | undefined
    if (storage !== undefined) {
      const { kept } = storage
      lines.push(
        `${at} the database (with its WAL) ${storage.beforeMb} MB before, ${storage.afterMb} MB after (+${storage.grownMb} MB); idempotency_keys: ${kept.rows} rows, ${kept.bodyMb} MB of bodies${kept.pagesMb === undefined ? '' : `, ${kept.pagesMb} MB of pages (with idempotency_callers)`}`,
      )
    }
    const replayed = r.details?.replays as Replays | undefined
    if (replayed !== undefined) {
      const { first, cost } = replayed
      lines.push(
        `${at} first answer ${first.status}, ${first.mb} MB, cost ${first.cost}; then ${replayed.answered} answered 200 (${replayed.replayed} marked Idempotent-Replayed, ${replayed.uncosted} without X-RateLimit-Cost), ${replayed.perMinute}/min, ${replayed.mbPerMinute} MB/min;` +
          ` X-RateLimit-Cost min ${cost.min ?? '-'}, p50 ${cost.p50 ?? '-'}, max ${cost.max ?? '-'}, ${cost.sum} in all, of an allowance of ${replayed.limit ?? '?'}/min`,
      )
    }
    const shed = r.statuses['503'] ?? 0
    const limited = r.statuses['429'] ?? 0
    if (shed + limited > 0) lines.push(`${at} refused: ${limited} by the rate limit (429), ${shed} shed by load (503), of ${r.sent} sent`)
    const reported = r.probe.reportedLoopDelay
    lines.push(
      `${at} loop delay p99 ${r.loopDelay.p99Ms} ms, max ${r.loopDelay.maxMs} ms, from ${r.loopDelay.source}` +
        (reported === undefined ? '' : `; as /health reported it (${reported.n} answers), p99 ${reported.p99Ms} ms, max ${reported.maxMs} ms`),
    )
    for (const note of r.notes) lines.push(`${at} ${note}`)
    const graphqlProbe = r.probe.graphql
    if (
      r.probe.user.statuses['200'] !== r.probe.user.n ||
      r.probe.health.statuses['200'] !== r.probe.health.n ||
      (graphqlProbe !== undefined && graphqlProbe.statuses['200'] !== graphqlProbe.n)
    ) {
      lines.push(
        `${at} probe statuses: /health ${compact(r.probe.health.statuses)}, /users/1 ${compact(r.probe.user.statuses)}${graphqlProbe === undefined ? '' : `, /graphql ${compact(graphqlProbe.statuses)}`}`,
      )
    }
  }
  return lines
}

async function main(): Promise<void> {
  const startedAt = Date.now()
  if (SERVER_DIR === resolve('.') && !args['skip-build']) build()
  else if (!existsSync(main_js)) throw new Error(`${main_js} is missing: run \`npm run build\` in ${SERVER_DIR}`)
  mkdirSync(DATA, { recursive: true })
  const seeded = await abuseDatabase(SERVER_DIR, DATA, { users: Number(args.users), posts: Number(args.posts), comments: Number(args.comments) })
  // This run's tokens, in a copy every attack starts from.
  const master = join(DATA, 'abuse-master.db')
  removeDb(master)
  copyFileSync(seeded, master)
  const tokens = {
    attacker: cli(['tokens', 'create', '--user', String(ACCOUNTS.attacker.id)], master),
    commenter: cli(['tokens', 'create', '--user', String(ACCOUNTS.commenter.id)], master),
  }
  const only = args.only?.split(',').map((s) => s.trim().toLowerCase())
  const chosen = ATTACKS.filter((a) => only === undefined || only.some((o) => a.name.toLowerCase().includes(o)))
  const runs: Run[] = []
  try {
    for (const attack of chosen) {
      for (const variant of attack.variants) {
        console.log(`${attack.name}, ${variant}: ${attack.what} for ${SECONDS} s ...`)
        runs.push(await runAttack(attack, variant, master, tokens))
      }
    }
  } finally {
    await stopAll()
    await Promise.all(agents.map((agent) => agent.close().catch(() => undefined)))
    removeDb(master)
  }

  const goals = runs.flatMap(goalsOf)
  const date = new Date().toISOString()
  const lines = [
    `${date}, ${machine().cpus} cores (${machine().cpu}), Node ${process.version}; server ${main_js};` +
      ` ${Number(args.users).toLocaleString('en')} users, ${Number(args.posts).toLocaleString('en')} posts; each attack ${SECONDS} s from ${ADDRESS.attacker},` +
      ` up to ${CONCURRENCY} requests in flight (8 for the offset pages); probe every 50 ms; load average at each start: ${runs.map((r) => r.loadAvg1m).join(', ')}`,
    '',
    ...table(runs),
    '',
    ...detailLines(runs),
    '',
    'Goals',
    ...goals.map((g) => `  ${g.met ? 'met    ' : 'NOT MET'}  ${`${g.run}: ${g.goal}`.padEnd(58)} ${g.measured}`),
  ]
  for (const line of lines) console.log(line)
  mkdirSync(join('bench', 'results'), { recursive: true })
  writeFileSync(
    args.out,
    `${JSON.stringify({ date, machine: machine(), server: SERVER_DIR, args, goalsSet: GOALS, attacks: ATTACKS.map((a) => ({ name: a.name, what: a.what })), runs, goals, printed: lines }, null, 2)}\n`,
  )
  console.log(`\nwritten to ${args.out} in ${Math.round((Date.now() - startedAt) / 1000)} s`)
  if (goals.some((g) => !g.met)) process.exitCode = 1
}

await main()
