// The benchmark suite: Threadline against what Node.js itself can do and against the servers a user
// would pick instead, in ONE run on one machine, on the same generated data set.
//
//   node:http    the ceiling: a bare node:http server answering a fixed ~120-byte JSON body
//   threadline   `threadline serve` on SQLite, production settings: logging at `info`, the rate
//                limiter on (with an allowance no run reaches), every header and check it always has,
//                and the fair scheduler at its defaults
//   json-server  json-server 0.17, its CLI on a JSON file of the same users and posts
//   apollo       a minimal Apollo Server 5, same schema and resolvers as yoga (bench/peers/)
//   yoga         a minimal GraphQL Yoga 5
//   fastify-bare    the bare REST reference: Fastify 5 + better-sqlite3, a response schema
//                   on each route, no hooks, plain prepared statements (bench/peers/fastify-bare.mjs)
//   mercurius-jit   the bare GraphQL reference: Mercurius with `jit: 1`, the same schema
//                   and resolvers as apollo and yoga (bench/peers/mercurius-bare.mjs)
//   threadline, no cache   the same with HTTP_REPRESENTATION_CACHE_MB=0: what every request pays
//                   that no kept answer serves (a GET of a resource written since, or never read)
//   threadline on PostgreSQL + Redis (and its `no cache` twin): the scale-out deployment, on a
//                   database of the bench's own (seeded alike, dropped at the end), Redis beside it
//   fastify + pg, mercurius JIT + pg   the bare references on PostgreSQL: pg with a pool of 10 and
//                   named prepared statements; Mercurius with loaders (bench/peers/*-pg.mjs)
//
// The mixed scenario is what stands for a real workload: GETs of random users (every id of the
// data set) with 2% of the requests a PATCH of a random user (the admin's token on Threadline),
// against Threadline as shipped and the bare references, on SQLite and on PostgreSQL.
//
// Each scenario runs against every server that can answer it, interleaved (A B C ... A B C ...,
// after a 1 s warm-up of each, 8 s for the mixed scenario), for --rounds rounds; medians with the
// min-max over the rounds: the table of what each server does.
// The goals that are ratios of two throughputs (Threadline to a reference, or to the ceiling) are
// read after the rounds, each in --pairs pairs of --pair-seconds runs, its two sides one right after
// the other and the order swapped from pair to pair; the figure is the median of the pairs' ratios,
// printed with the middle half of them (readInPairs says why).
// Before anything is timed, the answers of the servers to each scenario are compared, so that
// every server does the same work (the same 20 users in the same order, the same nested posts).
// Then a subscription fan-out: --subscribers graphql-ws subscribers, --comments comments.
//
// Writes bench/results/latest.json and bench/results/latest.svg (the ratios to the ceiling).
//
// Then the cost of each convention: GET one user on a fresh Threadline with the main
// target's settings and on one more per convention with that one switched off (CORS and tracing,
// off by default: switched on, the load sending an Origin for CORS), each read in pairs with the
// baseline as the goals' ratios are; each must cost at most 5%, but tracing turned on, which is reported. With --before-tracing <checkout> (a checkout of
// the code before tracing, built), a row runs that build's server beside this one's, both with
// tracing off as shipped: what tracing costs when off, at most 1%. --conventions false skips it.
//
// Last, aggregates (bench/aggregates.ts: comments per post and posts per author over 100,000 posts,
// req/s and p99) and a bulk create of 1,000 posts against 1,000 single POSTs (bench/bulk.ts), each
// in a process of its own on its own data; --aggregates-and-bulk false skips them.
//
//   npm run bench [-- --rounds 3 --seconds 3 --pairs 7 --pair-seconds 1 --connections 50 --users 10000 --posts 100000 --conventions true --before-tracing /tmp/before --aggregates-and-bulk true]
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual, parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { freePort } from '../test/helpers/private-redis.js'
import type { MeasurableConvention } from '../src/app.js'
import { renderChart } from './chart.js'
import { createPost, type Delivery, timeDeliveries } from './deliveries.js'
import {
  benchDatabase,
  BENCH_REDIS_URL,
  build,
  discardingOtlpReceiver,
  graphqlRequest,
  type Load,
  machine,
  measure,
  median,
  pinServersApart,
  middleHalf,
  inPairs,
  quiet,
  seedBenchDatabase,
  type Round,
  rssOf,
  type RunningServer,
  startServe,
  startServeWithout,
  startServer,
  summarize,
  threadline,
} from './lib.js'
import { formatBreakdown, type MemoryBreakdown, memoryBreakdown, startProbedServe } from './memory.js'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    // The goals' ratios: each read in this many pairs of runs this long (readInPairs).
    pairs: { type: 'string', default: '7' },
    'pair-seconds': { type: 'string', default: '1' },
    connections: { type: 'string', default: '50' },
    users: { type: 'string', default: '10000' },
    posts: { type: 'string', default: '100000' },
    subscribers: { type: 'string', default: '1000' },
    comments: { type: 'string', default: '20' },
    // The cost of each convention: GET one user with each one turned off in turn.
    conventions: { type: 'string', default: 'true' },
    // Another checkout, built (`npm run build` there), of the code before tracing: the table's
    // row "tracing, off" runs its server beside this build's, both with no OTEL_* variable.
    'before-tracing': { type: 'string' },
    // The aggregates (bench/aggregates.ts) and the bulk create (bench/bulk.ts), each in a process of
    // its own on a data set of its own, after the rest.
    'aggregates-and-bulk': { type: 'string', default: 'true' },
  },
})
const options = { rounds: Number(args.rounds), seconds: Number(args.seconds), connections: Number(args.connections) }
const pairOptions = { pairs: Number(args.pairs), seconds: Number(args['pair-seconds']) }

type Target =
  | 'node:http'
  | 'threadline'
  | 'threadline, no scheduler'
  | 'threadline, no cache'
  | 'json-server'
  | 'apollo'
  | 'yoga'
  | 'fastify-bare'
  | 'mercurius-jit'
  | 'threadline on PostgreSQL + Redis'
  | 'threadline on PostgreSQL + Redis, no cache'
  | 'fastify + pg'
  | 'mercurius JIT + pg'

/** The same build and settings with the fair scheduler off (HTTP_MAX_IN_FLIGHT=0): what a lone caller would get without it. */
const UNSCHEDULED = 'threadline, no scheduler' satisfies Target
/** The same with no representation cache: every request runs the handler, as after a write. */
const UNCACHED = 'threadline, no cache' satisfies Target
const ON_PG = 'threadline on PostgreSQL + Redis' satisfies Target
const ON_PG_UNCACHED = 'threadline on PostgreSQL + Redis, no cache' satisfies Target
/** The servers on PostgreSQL: what each of their loads costs PostgreSQL is measured too. */
const ON_POSTGRES: ReadonlySet<Target> = new Set<Target>([ON_PG, ON_PG_UNCACHED, 'fastify + pg', 'mercurius JIT + pg'])
/** Whose throughput a scenario's other servers are compared with: Threadline's, on the scenario's store. */
const OURS: readonly Target[] = ['threadline', ON_PG]

interface Scenario {
  name: string
  targets: Partial<Record<Target, Load>>
}

/** The database of the PostgreSQL rounds: the bench's own, created and dropped by it. */
const postgres = benchDatabase('threadline_bench_suite')

const DATA = join('bench', '.data')
const PEERS_DIR = join('bench', 'peers')
const RESULTS = join('bench', 'results')

// --- the data set

/** The seeded database, made once per size and kept: each run copies it, so every run starts alike. */
function seededDatabase(): string {
  const file = join(DATA, `suite-${args.users}-${args.posts}.db`)
  if (existsSync(file)) return file
  console.log(`Seeding ${Number(args.users).toLocaleString('en')} users and ${Number(args.posts).toLocaleString('en')} posts into ${file} ...`)
  const env = { DATABASE_URL: `sqlite:${file}.tmp` }
  rmSync(`${file}.tmp`, { force: true })
  threadline(['migrate'], env)
  threadline(['seed', '--users', args.users, '--posts', args.posts, '--comments', '0', '--todos', '0', '--batch-size', '4000'], env)
  const db = new Database(`${file}.tmp`)
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.pragma('journal_mode = DELETE')
  db.close()
  copyFileSync(`${file}.tmp`, file)
  rmSync(`${file}.tmp`, { force: true })
  return file
}

/** The same users and posts as json-server's JSON file, in Threadline's representation. */
function exportForJsonServer(dbFile: string, jsonFile: string): void {
  const db = new Database(dbFile, { readonly: true })
  const users = (
    db
      .prepare(
        'select id, name, email, age, avatar, role, username, phone, website, address, company, created_at as createdAt, updated_at as updatedAt from users order by id',
      )
      .all() as { address: string | null; company: string | null }[]
  ).map((row) => ({
    ...row,
    address: row.address === null ? null : (JSON.parse(row.address) as unknown),
    company: row.company === null ? null : (JSON.parse(row.company) as unknown),
  }))
  const posts = db
    .prepare(
      'select id, user_id as userId, title, content, status, published_at as publishedAt, created_at as createdAt, updated_at as updatedAt from posts order by id',
    )
    .all()
  db.close()
  writeFileSync(jsonFile, JSON.stringify({ users, posts }))
}

/** The peers live in bench/peers/ with their own lockfile: installed on first run (and when the lockfile changes), never by the project. */
function ensurePeers(): void {
  const installed = join(PEERS_DIR, 'node_modules', '.package-lock.json')
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(join(PEERS_DIR, 'package-lock.json')).mtimeMs) return
  console.log('Installing the peers (bench/peers: json-server, Apollo Server, GraphQL Yoga) ...')
  execFileSync('npm', ['ci', '--prefix', PEERS_DIR, '--ignore-scripts', '--no-audit', '--no-fund'], { stdio: 'inherit' })
}

// --- the scenarios

/** The user the conditional GET asks for with the ETag it had at the start: never written by the mixed load. */
const CONDITIONAL_USER = 2

/**
 * The mixed load's warm-up, each server: a server that has answered only GETs re-optimizes its code
 * for the mix once writes begin (V8 sees new shapes of requests, replies and sockets and
 * deoptimizes what it had compiled for the old): Threadline took 51, 44, then 41-42 us of CPU a
 * request over three 4 s rounds of the mix, the same build 33 us before the writes began. What
 * a server running this workload spends is the last figure: it is measured once that is over.
 */
const MIXED_WARM_UP_S = 8

/**
 * GETs of random users, one request in 50 a PATCH of one (its age), on every id of the data set:
 * the same mix for every server; Threadline's writes as user 1, an admin.
 */
function mixed(token?: string): Load {
  return {
    path: '/api/v1/users/{id}',
    warmUpSeconds: MIXED_WARM_UP_S,
    mix: {
      ids: Number(args.users),
      writeShare: 0.02,
      writeHeaders: token === undefined ? {} : { authorization: `Bearer ${token}` },
      unwritten: [CONDITIONAL_USER],
    },
  }
}

/** The REST reads the representation cache may answer: each runs on a server without it too. */
const CACHEABLE = new Set(['GET one user', 'GET page of 20, v1 (total)', 'GET page of 20, v2 (no total)'])

/** The scenarios on SQLite, then the mixed ones and those on PostgreSQL + Redis. */
function allScenarios(token: string, etag: string, pgToken: string): Scenario[] {
  const uncachedToo = (scenario: Scenario): Scenario =>
    CACHEABLE.has(scenario.name) && scenario.targets.threadline !== undefined
      ? { ...scenario, targets: { ...scenario.targets, [UNCACHED]: scenario.targets.threadline } }
      : scenario
  return [
    ...withUnscheduled(scenarios(token, etag)).map(uncachedToo),
    { name: 'mixed: random users, 2% PATCH', targets: { threadline: mixed(token), 'fastify-bare': mixed() } },
    ...postgresScenarios(pgToken),
  ]
}

/** On PostgreSQL: Threadline as shipped (Redis beside it) and without its cache, and the bare references on pg. */
function postgresScenarios(token: string): Scenario[] {
  const onPostgres = (name: string, threadlineLoad: Load, peer: Target, peerLoad: Load = threadlineLoad): Scenario => ({
    name: `PostgreSQL: ${name}`,
    targets: { [ON_PG]: threadlineLoad, [ON_PG_UNCACHED]: threadlineLoad, [peer]: peerLoad },
  })
  return [
    onPostgres('GET one user', { path: '/api/v1/users/1' }, 'fastify + pg'),
    onPostgres('GET page of 20, v1 (total)', { path: '/api/v1/users?role=user&sort=name&limit=20' }, 'fastify + pg', {
      path: '/api/v1/users?role=user&page=1&limit=20',
    }),
    onPostgres(
      'GraphQL user(id)',
      { path: '/graphql', ...graphqlRequest('query($id: ID!) { user(id: $id) { id name email } }', { id: '1' }) },
      'mercurius JIT + pg',
    ),
    onPostgres('GraphQL users (20)', { path: '/graphql', ...graphqlRequest('{ users { id name } }') }, 'mercurius JIT + pg'),
    onPostgres('GraphQL users { posts }', { path: '/graphql', ...graphqlRequest('{ users { id name posts { id title } } }') }, 'mercurius JIT + pg'),
    { name: 'PostgreSQL: mixed: random users, 2% PATCH', targets: { [ON_PG]: mixed(token), 'fastify + pg': mixed() } },
  ]
}

function scenarios(token: string, etag: string): Scenario[] {
  // The last user's posts (as user 1, an admin): not among the 20 users the nested GraphQL query reads.
  const create: Load = {
    path: `/api/v1/users/${args.users}/posts`,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Benchmark', content: 'Written by bench/suite.ts, many times over.' }),
    status: 201,
  }
  const userById = graphqlRequest('query($id: ID!) { user(id: $id) { id name email } }', { id: '1' })
  const list = graphqlRequest('{ users { id name } }')
  const nested = graphqlRequest('{ users { id name posts { id title } } }')
  return [
    { name: 'ceiling (fixed JSON)', targets: { 'node:http': { path: '/' } } },
    {
      name: 'GET one user',
      targets: { threadline: { path: '/api/v1/users/1' }, 'json-server': { path: '/users/1' }, 'fastify-bare': { path: '/api/v1/users/1' } },
    },
    { name: 'GET one user, with a token', targets: { threadline: { path: '/api/v1/users/1', headers: { authorization: `Bearer ${token}` } } } },
    {
      name: 'GET page of 20, v1 (total)',
      targets: {
        threadline: { path: '/api/v1/users?role=user&sort=name&limit=20' },
        'json-server': { path: '/users?role=user&_sort=name&_order=asc&_page=1&_limit=20' },
        'fastify-bare': { path: '/api/v1/users?role=user&page=1&limit=20' },
      },
    },
    {
      name: 'GET page of 20, v2 (no total)',
      targets: {
        threadline: { path: '/api/v2/users?role=user&sort=name&limit=20' },
        'json-server': { path: '/users?role=user&_sort=name&_order=asc&_page=1&_limit=20' },
        'fastify-bare': { path: '/api/v1/users?role=user&page=1&limit=20' },
      },
    },
    { name: 'conditional GET, 304', targets: { threadline: { path: `/api/v1/users/${CONDITIONAL_USER}`, headers: { 'if-none-match': etag }, status: 304 } } },
    {
      name: 'POST create',
      targets: {
        threadline: create,
        // The same INSERT (the post and its search-index trigger) into the peers' copy, by the bare route.
        'fastify-bare': { ...create, headers: { 'content-type': 'application/json' } },
      },
    },
    // The same create, each request with a key of its own (as the typed client sends it): the
    // claim of the key and the kept answer are its cost over POST create.
    { name: 'POST create, with an Idempotency-Key', targets: { threadline: { ...create, idempotencyKeys: true } } },
    {
      name: 'GraphQL user(id)',
      targets: {
        threadline: { path: '/graphql', ...userById },
        apollo: { path: '/', ...userById },
        yoga: { path: '/graphql', ...userById },
        'mercurius-jit': { path: '/graphql', ...userById },
      },
    },
    {
      name: 'GraphQL users (20)',
      targets: {
        threadline: { path: '/graphql', ...list },
        apollo: { path: '/', ...list },
        yoga: { path: '/graphql', ...list },
        'mercurius-jit': { path: '/graphql', ...list },
      },
    },
    {
      name: 'GraphQL users { posts }',
      targets: {
        threadline: { path: '/graphql', ...nested },
        apollo: { path: '/', ...nested },
        yoga: { path: '/graphql', ...nested },
        'mercurius-jit': { path: '/graphql', ...nested },
      },
    },
  ]
}

/** Every scenario Threadline answers, answered by the same server without its scheduler too. */
const withUnscheduled = (list: Scenario[]): Scenario[] =>
  list.map((scenario) =>
    scenario.targets.threadline === undefined ? scenario : { ...scenario, targets: { ...scenario.targets, [UNSCHEDULED]: scenario.targets.threadline } },
  )

interface Essence {
  data: unknown
  /** A list's total, where the server tells it (Threadline's v1, json-server's X-Total-Count). */
  total?: number
}

/** What a server answered, reduced to what every server of a scenario must agree on. */
async function essence(scenario: string, target: Target, response: Response): Promise<Essence> {
  const body = (await response.json()) as { data?: unknown; errors?: unknown; meta?: { pagination?: { total?: number } } }
  if (body.errors !== undefined) throw new Error(`${scenario}: ${target} answered errors: ${JSON.stringify(body.errors)}`)
  // Threadline wraps REST answers in {data, meta}; json-server answers the bare resource.
  if (target === 'json-server') {
    const total = response.headers.get('x-total-count')
    return { data: body, ...(total === null ? {} : { total: Number(total) }) }
  }
  const total = body.meta?.pagination?.total
  return { data: body.data, ...(total === undefined ? {} : { total }) }
}

/** One request per server and scenario before anything is timed: the status, and the same answer from every server. */
async function checkAnswers(list: readonly Scenario[], servers: Record<Target, RunningServer>): Promise<void> {
  for (const scenario of list) {
    let first: (Essence & { target: Target }) | undefined
    for (const [target, load] of Object.entries(scenario.targets) as [Target, Load][]) {
      // A mixed load's answers differ by design (random ids).
      if (load.mix !== undefined) continue
      const response = await fetch(`${servers[target].url}${load.path}`, { method: load.method ?? 'GET', headers: load.headers, body: load.body })
      const expected = load.status ?? 200
      if (response.status !== expected) throw new Error(`${scenario.name}: ${target} answered ${response.status}: ${await response.text()}`)
      if (expected !== 200) continue
      const answer = await essence(scenario.name, target, response)
      if (first === undefined) {
        first = { ...answer, target }
        continue
      }
      const totalsDisagree = first.total !== undefined && answer.total !== undefined && first.total !== answer.total
      if (!isDeepStrictEqual(first.data, answer.data) || totalsDisagree) {
        throw new Error(
          `${scenario.name}: ${target} does not answer what ${first.target} does:\n${JSON.stringify(answer).slice(0, 500)}\n${JSON.stringify(first).slice(0, 500)}`,
        )
      }
    }
  }
}

// --- running

/** Every server started so far: stopped at the end, on a failure and on Ctrl-C alike. */
const started: RunningServer[] = []
const stopAll = () => Promise.all(started.splice(0).map((server) => server.stop()))
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().then(() => process.exit(130)))

/** The main `threadline` target's settings: production, with the bounds no run should reach lifted. */
function threadlineEnv(runDb: string): Record<string, string> {
  return {
    DATABASE_URL: `sqlite:${runDb}`,
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '1000000000',
    RATE_LIMIT_AUTHENTICATED_MAX: '1000000000',
    // The fan-out's subscribers each connect from an address of their own (bench/deliveries.ts), so
    // every per-caller bound of subscriptions stays at its default.
  }
}

/** Threadline on PostgreSQL with Redis beside it, as a scaled-out instance runs (its own key prefix in Redis). */
function postgresEnv(): Record<string, string> {
  return {
    DATABASE_URL: postgres.url,
    REDIS_URL: BENCH_REDIS_URL,
    REDIS_KEY_PREFIX: `bench-suite-${process.pid}:`,
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '1000000000',
    RATE_LIMIT_AUTHENTICATED_MAX: '1000000000',
  }
}

/** The bench's own PostgreSQL database, made anew and seeded as the SQLite file is; returns a token of user 1 there. */
async function seedPostgres(): Promise<string> {
  console.log('Seeding the same users and posts into PostgreSQL ...')
  await seedBenchDatabase(postgres, args.users, args.posts)
  return threadline(['tokens', 'create', '--user', '1'], { DATABASE_URL: postgres.url }).trim()
}

async function startAll(runDb: string, unscheduledDb: string, peersDb: string, jsonFile: string): Promise<Record<Target, RunningServer>> {
  const jsonServerPort = await freePort()
  const peer = (file: string) => join(PEERS_DIR, file)
  const start = async (server: Promise<RunningServer>) => {
    started.push(await server)
    return started.at(-1) as RunningServer
  }
  return {
    'node:http': await start(startServer([peer('ceiling.mjs')], {})),
    threadline: await start(startProbedServe(threadlineEnv(runDb))),
    [UNSCHEDULED]: await start(startServe({ ...threadlineEnv(unscheduledDb), HTTP_MAX_IN_FLIGHT: '0' })),
    'json-server': await start(
      startServer(
        [peer('node_modules/json-server/lib/cli/bin.js'), '--port', String(jsonServerPort), '--host', '127.0.0.1', jsonFile],
        { NODE_ENV: 'production' },
        `http://127.0.0.1:${jsonServerPort}/users/1`,
      ),
    ),
    // The bare REST reference writes (POST create): it opens the peers' copy first and puts it in WAL
    // mode, as Threadline's own file is, before the read-only GraphQL peers open it.
    'fastify-bare': await start(startServer([peer('fastify-bare.mjs')], { DATABASE_FILE: peersDb, NODE_ENV: 'production' })),
    apollo: await start(startServer([peer('apollo.mjs')], { DATABASE_FILE: peersDb, NODE_ENV: 'production' })),
    yoga: await start(startServer([peer('yoga.mjs')], { DATABASE_FILE: peersDb, NODE_ENV: 'production' })),
    'mercurius-jit': await start(startServer([peer('mercurius-bare.mjs')], { DATABASE_FILE: peersDb, NODE_ENV: 'production' })),
    // It reads the file the main target writes: without a cache, it reads what the main one wrote.
    [UNCACHED]: await start(startServe({ ...threadlineEnv(runDb), HTTP_REPRESENTATION_CACHE_MB: '0' })),
    [ON_PG]: await start(startServe(postgresEnv())),
    [ON_PG_UNCACHED]: await start(startServe({ ...postgresEnv(), HTTP_REPRESENTATION_CACHE_MB: '0' })),
    'fastify + pg': await start(startServer([peer('fastify-pg.mjs')], { DATABASE_URL: postgres.url, NODE_ENV: 'production' })),
    'mercurius JIT + pg': await start(startServer([peer('mercurius-pg.mjs')], { DATABASE_URL: postgres.url, NODE_ENV: 'production' })),
  }
}

type Results = Record<string, Partial<Record<Target, Round[]>>>

async function run(list: readonly Scenario[], servers: Record<Target, RunningServer>): Promise<Results> {
  const results: Results = Object.fromEntries(list.map((s) => [s.name, {}]))
  const each = async (callback: (scenario: Scenario, target: Target, load: Load) => Promise<void>) => {
    for (const scenario of list) {
      for (const [target, load] of Object.entries(scenario.targets) as [Target, Load][]) await callback(scenario, target, load)
    }
  }
  console.log('Warming up ...')
  await each(async (_scenario, target, load) => void (await measure(servers[target].url, load, { ...options, seconds: load.warmUpSeconds ?? 1 })))
  for (let round = 1; round <= options.rounds; round++) {
    console.log(`Round ${round} of ${options.rounds} ...`)
    await each(async (scenario, target, load) => {
      const result = await measure(servers[target].url, load, { ...options, pid: servers[target].pid, postgres: ON_POSTGRES.has(target) })
      ;(results[scenario.name]![target] ??= []).push(result)
    })
  }
  return results
}

// --- the cost of each convention

const USER_PATH = '/api/v1/users/1'
const CORS_ORIGIN = 'http://localhost:5173'
/** How long each server of the conventions' part is loaded once it has started, before any is measured. */
const CONVENTION_WARM_UP_S = 4
/** The most any one convention may cost, as a share of GET one user's throughput. */
const CONVENTION_BUDGET = 0.05

interface Convention {
  /** As the table and the goals name it. */
  name: string
  /** What its server changes in the main `threadline` target's settings. */
  env: Record<string, string>
  /** A convention with no setting of its own: its server leaves it out (bench/serve-without.mjs). */
  leftOut?: MeasurableConvention
  /** Off by default (CORS, tracing): the variant turns it on, and its cost is the variant's loss. */
  turnsOn?: boolean
  /** The load sends an Origin header, to the variant and to the baseline it is compared with (CORS). */
  sendsOrigin?: boolean
  /** Where a header tells: true when an answer shows the variant's change (and false for the baseline's). */
  shows?: (headers: Headers) => boolean
  /** The most it may cost, or 'reported': a figure with no goal. @default CONVENTION_BUDGET */
  budget?: number | 'reported'
  /** A checkout whose build the variant runs (the code without the convention), on a copy of the data its migrations know. */
  checkout?: string
}

/** Tracing's share of GET one user when it is off (no OTEL_* variable, as shipped): what its hooks leave on the path. */
const TRACING_OFF_BUDGET = 0.01

/** The conventions measured: those of every build, and tracing's, whose rows need a receiver for its spans and the build before it. */
function conventionsToMeasure(otlpUrl: string, beforeTracing: string | undefined): Convention[] {
  return [
    ...CONVENTIONS,
    {
      name: 'tracing (turned on: every request a trace, OTLP/protobuf to a local receiver)',
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpUrl },
      turnsOn: true,
      budget: 'reported',
    },
    ...(beforeTracing === undefined
      ? []
      : [{ name: `tracing, off as shipped (against the build in ${beforeTracing}, before it)`, env: {}, checkout: beforeTracing, budget: TRACING_OFF_BUDGET }]),
  ]
}

const CONVENTIONS: readonly Convention[] = [
  { name: 'rate limit', env: { RATE_LIMIT_MAX: '0', RATE_LIMIT_AUTHENTICATED_MAX: '0' } },
  { name: 'request log', env: { LOG_LEVEL: 'warn' } },
  {
    name: 'ETag, Last-Modified, 304 and the representation cache',
    env: {},
    leftOut: 'validators',
    shows: (h) => !h.has('etag') && !h.has('last-modified'),
  },
  { name: 'compression', env: {}, leftOut: 'compression' },
  { name: 'request id and security headers', env: {}, leftOut: 'headers', shows: (h) => !h.has('x-request-id') },
  { name: 'metrics', env: { METRICS: 'false' } },
  { name: 'fair scheduler', env: { HTTP_MAX_IN_FLIGHT: '0' } },
  {
    name: 'CORS (turned on)',
    env: { CORS_ORIGINS: CORS_ORIGIN },
    turnsOn: true,
    sendsOrigin: true,
    shows: (h) => h.get('access-control-allow-origin') === CORS_ORIGIN,
  },
]

interface ConventionCost {
  convention: string
  /** The most it may cost, or 'reported'. */
  budget: number | 'reported'
  /** The variant: the convention off (on, for one that is off by default). */
  variant: ReturnType<typeof summarize>
  /** What it is compared with, in the same pairs: every convention on (with the Origin header, for CORS). */
  baseline: ReturnType<typeof summarize>
  /** The share of GET one user's throughput the convention takes, the median of its pairs': 1 - baseline/without, or 1 - with/baseline. */
  cost: number
  /** Where the middle half of the pairs' costs lies. */
  middleHalf: [number, number]
}

interface Conventions {
  costs: ConventionCost[]
  rounds: Record<string, Round[]>
}

/**
 * GET one user on a fresh baseline server (the main target's settings) and on one server per
 * convention with that one switched, all on the same SQLite file (they only read), interleaved.
 */
async function measureConventions(runDb: string): Promise<Conventions> {
  const env = threadlineEnv(runDb)
  const plain: Load = { path: USER_PATH }
  const withOrigin: Load = { path: USER_PATH, headers: { origin: CORS_ORIGIN } }
  const receiver = await discardingOtlpReceiver()
  try {
    return await measureEach(conventionsToMeasure(receiver.url, args['before-tracing']), env, runDb, plain, withOrigin)
  } finally {
    await receiver.close()
  }
}

/**
 * A copy of the run's database for another checkout's build: without the rows of the migrations
 * that build does not have (it would refuse a schema newer than its own), which only add.
 */
function databaseFor(checkout: string, runDb: string): string {
  const copy = `${runDb}.${checkout.replaceAll(/\W/g, '_')}.db`
  copyFileSync(runDb, copy)
  const known = new Set(readdirSync(join(checkout, 'src/db/migrations')).map((file) => file.replace(/\.ts$/, '')))
  const db = new Database(copy)
  try {
    for (const { name } of db.prepare('select name from kysely_migration').all() as { name: string }[]) {
      if (!known.has(name)) db.prepare('delete from kysely_migration where name = ?').run(name)
    }
  } finally {
    db.close()
  }
  return copy
}

async function measureEach(
  conventions: readonly Convention[],
  env: Record<string, string>,
  runDb: string,
  plain: Load,
  withOrigin: Load,
): Promise<Conventions> {
  // Copied before any server opens the run's database.
  const databases = conventions.map((c) => (c.checkout === undefined ? undefined : databaseFor(c.checkout, runDb)))
  const serverOf = (c: Convention, i: number) => {
    if (c.checkout !== undefined) return startServe({ ...env, DATABASE_URL: `sqlite:${databases[i]}`, ...c.env }, [], c.checkout)
    return c.leftOut === undefined ? startServe({ ...env, ...c.env }) : startServeWithout([c.leftOut], { ...env, ...c.env })
  }
  const settled = await Promise.allSettled([startServe(env), ...conventions.map(serverOf)])
  for (const result of settled) if (result.status === 'fulfilled') started.push(result.value)
  const failed = settled.find((result) => result.status === 'rejected')
  if (failed !== undefined) throw failed.reason
  const [baseline, ...variants] = settled.map((result) => (result as PromiseFulfilledResult<RunningServer>).value) as [RunningServer, ...RunningServer[]]
  const BASELINE = 'baseline (every convention on)'
  const BASELINE_ORIGIN = 'baseline, with an Origin header'
  const plainBaseline = { name: BASELINE, server: baseline, load: plain }
  const originBaseline = { name: BASELINE_ORIGIN, server: baseline, load: withOrigin }
  const variantRuns = conventions.map((c, i) => ({
    name: c.name,
    server: variants[i] as RunningServer,
    load: c.sendsOrigin === true ? withOrigin : plain,
    convention: c,
  }))
  const runs: { name: string; server: RunningServer; load: Load; convention?: Convention }[] = [plainBaseline, originBaseline, ...variantRuns]

  // Before anything is timed: a 200 from each, the same user as the baseline's, and the change visible where a header tells.
  const ask = async (server: RunningServer, load: Load) => {
    const response = await fetch(`${server.url}${load.path}`, { headers: load.headers })
    if (response.status !== 200) throw new Error(`conventions: ${server.url}${load.path} answered ${response.status}: ${await response.text()}`)
    return { headers: response.headers, data: ((await response.json()) as { data?: unknown }).data }
  }
  const expected = await ask(baseline, plain)
  for (const run of runs) {
    const got = await ask(run.server, run.load)
    if (!isDeepStrictEqual(got.data, expected.data))
      throw new Error(`conventions: ${run.name} does not answer the baseline's user: ${JSON.stringify(got.data)}`)
    const { convention } = run
    if (convention?.shows === undefined) continue
    if (!convention.shows(got.headers))
      throw new Error(`conventions: the answer of the server ${convention.turnsOn === true ? 'with' : 'without'} ${run.name} does not show it`)
    if (convention.shows((await ask(baseline, run.load)).headers)) throw new Error(`conventions: the baseline's answer already shows the change of ${run.name}`)
  }

  console.log(`The cost of each convention: GET one user on the baseline and ${conventions.length} variants ...`)
  // Every server fresh, each warmed (the baseline with both its loads); then each convention read
  // in pairs with its baseline, as the goals' ratios are (readInPairs says why), both warmed again first.
  console.log('Warming up ...')
  for (const run of runs) await measure(run.server.url, run.load, { ...options, seconds: CONVENTION_WARM_UP_S })
  const rounds: Record<string, Round[]> = {}
  const costs: ConventionCost[] = []
  const pairRun = async (name: string, server: RunningServer, load: Load): Promise<Round> => {
    const round = await measure(server.url, load, { connections: options.connections, seconds: pairOptions.seconds })
    ;(rounds[name] ??= []).push(round)
    // A server with tracing on exports what it queued after the load: not while the next is measured.
    await quiet(server)
    return round
  }
  console.log(`In pairs (${pairOptions.pairs} of ${pairOptions.seconds} s runs each) ...`)
  for (const variant of variantRuns) {
    const c = variant.convention
    const base = c.sendsOrigin === true ? originBaseline : plainBaseline
    for (const run of [variant, base]) await warm(run.server, run.load, PAIR_WARM_UP_S)
    const pairs = await inPairs(
      pairOptions.pairs,
      () => pairRun(c.name, variant.server, variant.load),
      () => pairRun(`${c.name}: baseline`, base.server, base.load),
    )
    const pairCosts = pairs.map(([variantRound, baseRound]) => {
      const [withIt, without] = c.turnsOn === true ? [variantRound, baseRound] : [baseRound, variantRound]
      return 1 - withIt.requestsPerSecond / without.requestsPerSecond
    })
    costs.push({
      convention: c.name,
      budget: c.budget ?? CONVENTION_BUDGET,
      variant: summarize(pairs.map(([variantRound]) => variantRound)),
      baseline: summarize(pairs.map(([, baseRound]) => baseRound)),
      cost: median(pairCosts),
      middleHalf: middleHalf(pairCosts),
    })
  }
  return { costs, rounds }
}

const conventionGoals = (conventions: Conventions | undefined): Goal[] =>
  (conventions?.costs ?? []).flatMap(({ convention, budget, cost, middleHalf }) =>
    budget === 'reported'
      ? []
      : [
          {
            goal: `${convention} costs ≤ ${budget * 100}% of GET one user`,
            measured: cost * 100,
            target: budget * 100,
            kind: 'max' as const,
            unit: '%',
            middleHalf: [middleHalf[0] * 100, middleHalf[1] * 100],
          },
        ],
  )

// --- reporting

type Summary = ReturnType<typeof summarize> & { peakRss: number }

interface Goal {
  goal: string
  measured: number
  target: number
  /** 'min': the measured figure must reach the target; 'max': stay below it. */
  kind: 'min' | 'max'
  unit: 'x' | 'MB' | '%'
  /** A ratio read in pairs: where the middle half of the pairs' ratios lies, and each pair's. */
  middleHalf?: [number, number]
  pairs?: number[]
}

/** One side of a goal's ratio: a scenario's load on one of its servers. */
interface Side {
  scenario: string
  target: Target
}

/** A goal that is a ratio of two throughputs: `of`'s req/s over `to`'s, read in pairs of short runs (`readInPairs`). */
interface RatioGoal extends Omit<Goal, 'measured' | 'unit'> {
  of: Side
  to: Side
}

const side = (scenario: string, target: Target = 'threadline'): Side => ({ scenario, target })
const CEILING = side('ceiling (fixed JSON)', 'node:http')

/** The goals stated as ratios of Threadline's throughput to a reference's (or to its own in another scenario). */
function ratioGoals(): RatioGoal[] {
  const atLeast = (goal: string, of: Side, to: Side, target: number): RatioGoal => ({ goal, of, to, target, kind: 'min' })
  const toCeiling = (goal: string, scenario: string, target: number) => atLeast(goal, side(scenario), CEILING, target)
  const toPeer = (goal: string, scenario: string, peer: Target, target: number, ours: Target = 'threadline') =>
    atLeast(goal, side(scenario, ours), side(scenario, peer), target)
  return [
    toCeiling('GET one user, x ceiling (aim 0.6)', 'GET one user', 0.45),
    toCeiling('GET page of 20 v1, x ceiling', 'GET page of 20, v1 (total)', 0.21),
    toCeiling('GET page of 20 v2, x ceiling', 'GET page of 20, v2 (no total)', 0.35),
    toCeiling('conditional GET 304, x ceiling', 'conditional GET, 304', 0.5),
    toCeiling('GraphQL user(id), x ceiling', 'GraphQL user(id)', 0.28),
    atLeast('GraphQL users { posts } / user(id) (within 2x)', side('GraphQL users { posts }'), side('GraphQL user(id)'), 0.5),
    ...['GET one user', 'GET page of 20, v1 (total)', 'GraphQL user(id)', 'GraphQL users { posts }'].map((scenario) =>
      toPeer(`${scenario}: with the scheduler / without (a lone caller)`, scenario, UNSCHEDULED, 0.95),
    ),
    toPeer('GET one user, x json-server', 'GET one user', 'json-server', 10),
    toPeer('GET page v1, x json-server', 'GET page of 20, v1 (total)', 'json-server', 20),
    toPeer('GET page v2, x json-server', 'GET page of 20, v2 (no total)', 'json-server', 20),
    toPeer('GraphQL user(id), x Apollo Server', 'GraphQL user(id)', 'apollo', 3),
    toPeer('GraphQL user(id), x GraphQL Yoga', 'GraphQL user(id)', 'yoga', 5),
    // A repeated GET, answered by the representation cache.
    toPeer('GET one user, cached, x bare Fastify', 'GET one user', 'fastify-bare', 1),
    toPeer('GET page v1, cached, x bare page + COUNT', 'GET page of 20, v1 (total)', 'fastify-bare', 2),
    toPeer('GET page v2, cached, x bare page + COUNT', 'GET page of 20, v2 (no total)', 'fastify-bare', 2),
    // What every request pays that no kept answer serves.
    toPeer('GET one user, no cached answer, x bare Fastify', 'GET one user', 'fastify-bare', 0.9, UNCACHED),
    toPeer('GET page v1, no cached answer, x bare page + COUNT', 'GET page of 20, v1 (total)', 'fastify-bare', 0.9, UNCACHED),
    toPeer('GET page v2, no cached answer, x bare page + COUNT', 'GET page of 20, v2 (no total)', 'fastify-bare', 1, UNCACHED),
    toPeer('mixed (random users, 2% PATCH), x bare Fastify', 'mixed: random users, 2% PATCH', 'fastify-bare', 0.9),
    // PostgreSQL + Redis: as shipped (cached), with no cached answer, and the GraphQL reads (never cached).
    toPeer('PostgreSQL: GET one user, cached, x Fastify + pg', 'PostgreSQL: GET one user', 'fastify + pg', 1, ON_PG),
    toPeer('PostgreSQL: GET page v1, cached, x Fastify + pg page + COUNT', 'PostgreSQL: GET page of 20, v1 (total)', 'fastify + pg', 2, ON_PG),
    toPeer('PostgreSQL: GET one user, no cached answer, x Fastify + pg', 'PostgreSQL: GET one user', 'fastify + pg', 0.9, ON_PG_UNCACHED),
    toPeer('PostgreSQL: GET page v1, no cached answer, x Fastify + pg', 'PostgreSQL: GET page of 20, v1 (total)', 'fastify + pg', 0.9, ON_PG_UNCACHED),
    ...(
      [
        ['GraphQL user(id)', 0.9],
        ['GraphQL users (20)', 0.9],
        ['GraphQL users { posts }', 1.2],
      ] as const
    ).map(([scenario, target]) =>
      toPeer(
        `PostgreSQL: ${scenario}, x Mercurius JIT + pg${scenario.includes('posts') ? ' with loaders' : ''}`,
        `PostgreSQL: ${scenario}`,
        'mercurius JIT + pg',
        target,
        ON_PG,
      ),
    ),
    toPeer('PostgreSQL: mixed (random users, 2% PATCH), x Fastify + pg', 'PostgreSQL: mixed: random users, 2% PATCH', 'fastify + pg', 0.9, ON_PG),
    ...['GraphQL user(id)', 'GraphQL users (20)', 'GraphQL users { posts }'].map((scenario) =>
      toPeer(`${scenario}, x bare Mercurius JIT`, scenario, 'mercurius-jit', 0.7),
    ),
    toPeer('GraphQL users { posts }, x Apollo Server', 'GraphQL users { posts }', 'apollo', 1.5),
    toPeer('GraphQL users { posts }, x GraphQL Yoga', 'GraphQL users { posts }', 'yoga', 1.5),
  ]
}

/** The goals of memory: the main target's peak under the scenarios and its resident set once every server has started. */
const memoryGoals = (threadlinePeakRss: number, idleRss: number): Goal[] => [
  { goal: 'Threadline peak RSS under load', measured: threadlinePeakRss / 2 ** 20, target: 120, kind: 'max', unit: 'MB' },
  { goal: 'Threadline RSS idle after start', measured: idleRss / 2 ** 20, target: 80, kind: 'max', unit: 'MB' },
]

/**
 * Before a goal's (or a convention's) pairs, each of its two servers runs its load this long, not
 * counted. A Threadline that has waited a minute since its last load answers its next second at a
 * fraction of its speed: the conventions' variants, warmed once and measured after the others, read
 * 1,700-4,900 req/s in their first pair of 1 s, 8,000-17,000 in their later ones, and so priced
 * every convention below nothing. The goals compare servers under a steady load.
 */
const PAIR_WARM_UP_S = 3
/** Loads `server` for `seconds`, not counted, and waits until it has gone quiet. */
async function warm(server: RunningServer, load: Load, seconds: number): Promise<void> {
  await measure(server.url, load, { connections: options.connections, seconds })
  await quiet(server)
}
/** The fewest answers a side of a pair should give in its run: a slow reference's runs last longer to reach them. */
const PAIR_ANSWERS = 50
/** ... but no run of a pair lasts longer than this. */
const PAIR_SECONDS_AT_MOST = 4

/**
 * Each ratio goal read in `--pairs` pairs: `--pair-seconds` of its one side's load, then of the
 * other's, right after, the order swapped from pair to pair; the goal's figure is the median of the
 * pairs' ratios of req/s, and the middle half of them says how far they spread. On this shared
 * machine a server's speed drifts by a third within a minute: the rounds measure each server some
 * tens of seconds apart from the one it is compared with and take that drift for a difference;
 * two runs a second apart see the same machine. A side the rounds found slow (json-server's pages)
 * runs long enough for `PAIR_ANSWERS` answers.
 */
async function readInPairs(
  goals: readonly RatioGoal[],
  list: readonly Scenario[],
  servers: Record<Target, RunningServer>,
  results: Results,
): Promise<{ goals: Goal[]; failed: string[] }> {
  const loadOf = ({ scenario, target }: Side): Load => {
    const load = list.find((s) => s.name === scenario)?.targets[target]
    if (load === undefined) throw new Error(`a goal reads ${target} in "${scenario}", which it does not run`)
    return load
  }
  const inRounds = ({ scenario, target }: Side) => median((results[scenario]?.[target] ?? []).map((round) => round.requestsPerSecond))
  const failed: string[] = []
  const throughput = async (at: Side, seconds: number): Promise<number> => {
    const round = await measure(servers[at.target].url, loadOf(at), { connections: options.connections, seconds })
    // What a slow server still answers once the load stops (json-server's queue) must not run while the other side is measured.
    await quiet(servers[at.target])
    if (round.errors > 0) failed.push(`${at.scenario}, ${at.target}, in pairs: ${round.failed}`)
    if (round.requestsPerSecond > 0) return round.requestsPerSecond
    failed.push(`${at.scenario}, ${at.target}, in pairs: no answer in ${seconds} s`)
    return Number.NaN
  }
  console.log(`Reading ${goals.length} goals in pairs (${pairOptions.pairs} pairs of ${pairOptions.seconds} s runs each) ...`)
  const read: Goal[] = []
  for (const { of, to, ...goal } of goals) {
    const slowest = Math.min(inRounds(of), inRounds(to))
    const seconds = Math.min(PAIR_SECONDS_AT_MOST, Math.max(pairOptions.seconds, Math.ceil(PAIR_ANSWERS / slowest)))
    for (const at of [of, to]) await warm(servers[at.target], loadOf(at), Math.max(PAIR_WARM_UP_S, seconds))
    const pairs = await inPairs(
      pairOptions.pairs,
      () => throughput(of, seconds),
      () => throughput(to, seconds),
    )
    const ratios = pairs.map(([ours, theirs]) => ours / theirs)
    read.push({ ...goal, unit: 'x', measured: median(ratios), middleHalf: middleHalf(ratios), pairs: ratios })
  }
  return { goals: read, failed }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
const ratio = (n: number) => (n >= 10 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(2))

function printTable(summary: Record<string, Partial<Record<Target, Summary>>>, ceiling: number): void {
  const header = [
    'scenario',
    'server',
    'req/s',
    'min-max',
    'p50 ms',
    'p99 ms',
    'errors',
    'CPU µs/req',
    'PostgreSQL µs/req',
    'peak RSS MB',
    'x ceiling',
    'Threadline x this',
  ]
  const rows: string[][] = []
  for (const [scenario, byTarget] of Object.entries(summary)) {
    const oursTarget = OURS.find((target) => byTarget[target] !== undefined)
    const ours = oursTarget === undefined ? undefined : byTarget[oursTarget]?.requestsPerSecond
    for (const [target, s] of Object.entries(byTarget) as [Target, Summary][]) {
      rows.push([
        scenario,
        target,
        fmt(s.requestsPerSecond),
        `${fmt(s.min)}-${fmt(s.max)}`,
        String(s.p50),
        String(s.p99),
        String(s.errors),
        s.cpuUsPerRequest === undefined ? '' : s.cpuUsPerRequest.toFixed(1),
        s.postgresCpuUsPerRequest === undefined ? '' : s.postgresCpuUsPerRequest.toFixed(1),
        fmt(s.peakRss / 2 ** 20),
        ratio(s.requestsPerSecond / ceiling),
        ours !== undefined && target !== oursTarget ? `${ratio(ours / s.requestsPerSecond)}x` : '',
      ])
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)))
  const line = (cells: readonly string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')
  console.log(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`)
  for (const row of rows) console.log(line(row))
}

/** A share's budget ('%') may be reached; a memory bound ('MB') must not. */
const metGoal = (g: Goal) => (g.kind === 'min' ? g.measured >= g.target : g.unit === '%' ? g.measured <= g.target : g.measured < g.target)

function printGoals(goals: readonly Goal[]): void {
  console.log("\nGoals (each ratio the median of its pairs of runs, with the middle half of the pairs' ratios)")
  const width = Math.max(52, ...goals.map((g) => g.goal.length))
  for (const g of goals) {
    const shown =
      g.unit === 'MB'
        ? `${fmt(g.measured)} MB (below ${g.target})`
        : g.unit === '%'
          ? `${g.measured.toFixed(1)}% (at most ${g.target}%${g.middleHalf === undefined ? '' : `; middle half ${g.middleHalf[0].toFixed(1)}-${g.middleHalf[1].toFixed(1)}%`})`
          : `${ratio(g.measured)}x (at least ${g.target}${g.middleHalf === undefined ? '' : `; middle half ${ratio(g.middleHalf[0])}-${ratio(g.middleHalf[1])}`})`
    console.log(`  ${metGoal(g) ? 'met    ' : 'NOT MET'}  ${g.goal.padEnd(width)} ${shown}`)
  }
}

function printConventions(conventions: Conventions): void {
  console.log(
    `\nThe cost of each convention: GET one user with it off, against the baseline with every convention on, in ${pairOptions.pairs} pairs of ${pairOptions.seconds} s runs;` +
      ` cost = 1 - baseline/without (for CORS and tracing, off by default: 1 - with/baseline, for CORS both with an Origin header), the median of the pairs'`,
  )
  const header = ['convention', 'req/s with it off', 'min-max', 'errors', 'baseline req/s', 'min-max', 'cost', 'middle half', 'goal']
  const rows = conventions.costs.map((c) => [
    c.convention,
    fmt(c.variant.requestsPerSecond),
    `${fmt(c.variant.min)}-${fmt(c.variant.max)}`,
    String(c.variant.errors),
    fmt(c.baseline.requestsPerSecond),
    `${fmt(c.baseline.min)}-${fmt(c.baseline.max)}`,
    `${(c.cost * 100).toFixed(1)}%`,
    `${(c.middleHalf[0] * 100).toFixed(1)}-${(c.middleHalf[1] * 100).toFixed(1)}%`,
    c.budget === 'reported' ? 'reported' : `${c.cost <= c.budget ? 'met' : 'NOT MET'} (<= ${c.budget * 100}%)`,
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)))
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')
  console.log(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`)
  for (const row of rows) console.log(line(row))
}

async function main(): Promise<void> {
  const started = Date.now()
  build()
  ensurePeers()
  const pinned = pinServersApart()
  console.log(
    pinned ? 'Every server runs on core 0, autocannon on the other cores (taskset).' : 'Servers and autocannon share the cores (one core, or no taskset).',
  )
  mkdirSync(DATA, { recursive: true })
  mkdirSync(RESULTS, { recursive: true })
  const seeded = seededDatabase()
  // Every run and every server starts from the same copy; Threadline's writes stay in its own.
  const runDb = join(DATA, 'suite-run.db')
  const peersDb = join(DATA, 'suite-peers.db')
  const jsonFile = join(DATA, 'suite-json-server.json')
  for (const file of [runDb, peersDb]) for (const part of ['', '-wal', '-shm']) rmSync(`${file}${part}`, { force: true })
  copyFileSync(seeded, runDb)
  copyFileSync(seeded, peersDb)
  exportForJsonServer(seeded, jsonFile)
  const token = threadline(['tokens', 'create', '--user', '1'], { DATABASE_URL: `sqlite:${runDb}` }).trim()
  // The same data and token for the server without the scheduler, whose writes stay in a copy of their own.
  const unscheduledDb = join(DATA, 'suite-run-unscheduled.db')
  for (const part of ['', '-wal', '-shm']) rmSync(`${unscheduledDb}${part}`, { force: true })
  copyFileSync(runDb, unscheduledDb)

  let results: Results
  let paired: Awaited<ReturnType<typeof readInPairs>>
  let fanOut: Delivery
  const peakRss: Partial<Record<Target, number>> = {}
  let fanOutPeakRss = Number.NaN
  const memory: Record<string, MemoryBreakdown> = {}
  const pgToken = await seedPostgres()
  try {
    const servers = await startAll(runDb, unscheduledDb, peersDb, jsonFile)
    memory['idle, once every server has started'] = await memoryBreakdown(servers.threadline)
    const etag = (await fetch(`${servers.threadline.url}/api/v1/users/${CONDITIONAL_USER}`)).headers.get('etag') ?? ''
    const list = allScenarios(token, etag, pgToken)
    await checkAnswers(list, servers)
    results = await run(list, servers)
    // VmHWM: the most each server held at any moment since it started, which sampling can miss.
    for (const [target, server] of Object.entries(servers) as [Target, RunningServer][]) peakRss[target] = rssOf(server.pid, 'VmHWM')
    memory['after the scenarios'] = await memoryBreakdown(servers.threadline)
    paired = await readInPairs(ratioGoals(), list, servers, results)
    console.log(`Subscription fan-out: ${args.subscribers} subscribers, ${args.comments} comments ...`)
    const postPath = await createPost(servers.threadline, token)
    fanOut = await timeDeliveries(servers.threadline, servers.threadline, token, postPath, 'fan-out', {
      subscribers: Number(args.subscribers),
      comments: Number(args.comments),
    })
    fanOutPeakRss = rssOf(servers.threadline.pid, 'VmHWM')
  } finally {
    await stopAll()
    await postgres.drop()
  }
  // Its own servers, started once the main ones are gone (their peak RSS is the main target's alone).
  let conventions: Conventions | undefined
  if (args.conventions !== 'false') {
    try {
      conventions = await measureConventions(runDb)
    } finally {
      await stopAll()
    }
  }

  const summary = Object.fromEntries(
    Object.entries(results).map(([scenario, byTarget]) => [
      scenario,
      Object.fromEntries(
        Object.entries(byTarget).map(([target, rounds]) => [target, { ...summarize(rounds), peakRss: Math.max(...rounds.map((r) => r.peakRss ?? 0)) }]),
      ) as Partial<Record<Target, Summary>>,
    ]),
  )
  const ceiling = summary[CEILING.scenario]?.[CEILING.target]?.requestsPerSecond ?? Number.NaN
  const idleRss = memory['idle, once every server has started']?.rss ?? Number.NaN
  const goals = [...paired.goals, ...memoryGoals(peakRss.threadline ?? Number.NaN, idleRss), ...conventionGoals(conventions)]
  const date = new Date().toISOString()
  console.log(
    `\n${date}, ${machine().cpus} cores (${machine().cpu}), Node ${process.version}; ${fmt(Number(args.users))} users, ${fmt(Number(args.posts))} posts;` +
      ` autocannon, ${options.connections} connections, ${options.rounds} interleaved rounds of ${options.seconds} s, medians (min-max over the rounds);` +
      ` the goals' ratios in ${pairOptions.pairs} pairs of ${pairOptions.seconds} s runs`,
  )
  printTable(summary, ceiling)
  if (conventions !== undefined) printConventions(conventions)
  printGoals(goals)
  console.log(
    `\nPeak RSS of each server over all its scenarios (VmHWM): ${Object.entries(peakRss)
      .map(([target, bytes]) => `${target} ${fmt(bytes / 2 ** 20)} MB`)
      .join(', ')}` + `; Threadline after the fan-out's ${args.subscribers} sockets too: ${fmt(fanOutPeakRss / 2 ** 20)} MB`,
  )
  for (const [when, breakdown] of Object.entries(memory)) console.log(`\n${formatBreakdown(`Threadline's memory, ${when}`, breakdown)}`)
  console.log(
    `\nSubscription fan-out (${fanOut.subscribers} graphql-ws subscribers of one post, ${fanOut.comments} comments one at a time, ms):` +
      ` from the 201 p50 ${fanOut.from201Ms.p50} / p99 ${fanOut.from201Ms.p99}; last subscriber from send p50 ${fanOut.lastSubscriberFromSendMs.p50} /` +
      ` p99 ${fanOut.lastSubscriberFromSendMs.p99}; lost ${fanOut.lost}${fanOut.ended === undefined ? '' : ` (${fanOut.ended})`}`,
  )
  const errors = [
    ...Object.values(summary).flatMap((byTarget) =>
      Object.entries(byTarget)
        .filter(([, s]) => s.errors > 0)
        .map(([target]) => target),
    ),
    ...(conventions?.costs ?? []).filter((c) => c.variant.errors > 0 || c.baseline.errors > 0).map((c) => `threadline (${c.convention})`),
    ...paired.failed,
  ]
  writeFileSync(
    join(RESULTS, 'latest.json'),
    `${JSON.stringify({ date, machine: machine(), pinned, options, dataset: { users: Number(args.users), posts: Number(args.posts) }, ceiling, summary, goals, peakRss, fanOut: { ...fanOut, threadlinePeakRss: fanOutPeakRss }, memory, results, conventions }, null, 2)}\n`,
  )
  writeFileSync(join(RESULTS, 'latest.svg'), renderChart({ summary, ceiling, goals, date, machine: machine() }))
  console.log(`\nwritten to bench/results/latest.json and bench/results/latest.svg in ${Math.round((Date.now() - started) / 1000)} s`)
  if (args['aggregates-and-bulk'] !== 'false') {
    for (const script of ['bench/aggregates.ts', 'bench/bulk.ts']) {
      console.log(`\n${script}:`)
      execFileSync(process.execPath, ['--import', 'tsx', script], { stdio: 'inherit' })
    }
  }
  if (errors.length > 0 || fanOut.lost > 0) {
    console.error(`errors from: ${[...new Set(errors)].join(', ') || 'none'}; deliveries lost: ${fanOut.lost}`)
    for (const [scenario, byTarget] of Object.entries(results)) {
      for (const [target, rounds] of Object.entries(byTarget)) {
        for (const [i, round] of (rounds ?? []).entries())
          if (round.failed !== undefined) console.error(`  ${scenario}, ${target}, round ${i + 1}: ${round.failed}`)
      }
    }
    process.exitCode = 1
  }
}

await main()
