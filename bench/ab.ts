// Two servers, A and B, compared in pairs: a short run of one load on each, one right after the
// other, the order swapped from pair to pair, and each pair's ratio of CPU a request (B over A).
// On a shared machine a server's CPU a request moves by a third within a minute with nothing
// changed in it or its load (docs/performance.md, the benchmark suite, "Found since (2026-12-07,
// late morning)"): runs of a few seconds per server, with other servers measured between them,
// take that drift for a difference. Pairs of 1 s do not: the median of many pairs' ratios, and how
// far the middle half of them spreads, says whether B costs more than A and by how much, and
// whether a difference stands out of the noise at all.
//
// Both run `threadline serve` with `npm run bench`'s settings for its main target (logging at info,
// the rate limit's allowance out of reach), each on its own copy of the suite's data set. B differs
// by --b-env NAME=value (repeatable) and/or --b-checkout (another checkout, built: the code before a
// change); --a-env likewise. With --b-peer, B is one of `npm run bench`'s bare references in
// bench/peers/ instead, on its own copy, for the loads whose paths it answers (fastify-bare.mjs:
// get-one, random, mixed and patch; mercurius-bare.mjs: the GraphQL ones); --a-peer makes A one too.
// --b-load gives B another load than A's: the same server answering two loads, such as random users
// against the same with writes among them (`--load random --b-load mixed`), says what the second
// costs more a request. --prepare runs a load on both first, for --prepare-seconds (`mixed`: servers
// that have answered writes, with the representation cache full of random users).
//
// With --store postgres, both run on PostgreSQL with Redis beside them, as `npm run bench` runs its
// PostgreSQL target: one database of the script's own, seeded alike and dropped at the end, which
// both sides read (each with a key prefix of its own in Redis); the peers are then the references
// on pg (fastify-pg.mjs, mercurius-pg.mjs). PostgreSQL's CPU a request is printed beside each
// side's own, and the ratio B/A of the two together.
//
// --write-share sets the mixed load's share of PATCHes (0.02): what a write costs on the whole, per
// write, as writes grow rarer (`--load random --b-load mixed --write-share 0.1`).
//
//   npm run bench:ab [-- --load get-one --b-load mixed --write-share 0.02 --pairs 30 --seconds 1 --connections 50 --store sqlite|postgres --b-env HTTP_REPRESENTATION_CACHE_MB=0 --b-checkout /tmp/before --a-peer fastify-bare.mjs --b-peer fastify-bare.mjs --prepare mixed --prepare-seconds 16]
//
// Loads: get-one, get-one-signed-in (as an admin, with a token, on Threadline), page-v1, page-v2, graphql-user,
// graphql-users, graphql-nested, random (GETs of random users), mixed (the same, 2% a PATCH, or --write-share),
// patch (every request a PATCH of a random user, as an admin on Threadline). Prints the figures; writes no file.
// Run `npm run bench` once first: it seeds the data set.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import {
  BENCH_REDIS_URL,
  benchDatabase,
  build,
  graphqlRequest,
  type Load,
  measure,
  median,
  pinServersApart,
  randomUsers,
  inPairs,
  middleHalf,
  type Round,
  type RunningServer,
  seedBenchDatabase,
  startServe,
  startServer,
  threadline,
} from './lib.js'

const { values: args } = parseArgs({
  options: {
    load: { type: 'string', default: 'get-one' },
    'b-load': { type: 'string' },
    pairs: { type: 'string', default: '30' },
    seconds: { type: 'string', default: '1' },
    connections: { type: 'string', default: '50' },
    store: { type: 'string', default: 'sqlite' },
    'a-env': { type: 'string', multiple: true, default: [] },
    'b-env': { type: 'string', multiple: true, default: [] },
    'b-checkout': { type: 'string' },
    'a-peer': { type: 'string' },
    'b-peer': { type: 'string' },
    prepare: { type: 'string' },
    'prepare-seconds': { type: 'string', default: '16' },
    'write-share': { type: 'string', default: '0.02' },
    'skip-build': { type: 'boolean', default: false },
  },
})

if (args.store !== 'sqlite' && args.store !== 'postgres') throw new Error(`--store is sqlite or postgres, not ${args.store}`)
const onPostgres = args.store === 'postgres'

const SEEDED = join('bench', '.data', 'suite-10000-100000.db')
const USERS = 10_000
const POSTS = 100_000
const postgres = benchDatabase('threadline_bench_ab')
const WRITE_SHARE = Number(args['write-share'])
if (!(WRITE_SHARE > 0 && WRITE_SHARE <= 1)) throw new Error(`--write-share is a fraction above 0 and at most 1, not ${args['write-share']}`)

/** Each load by name, given the token of an admin on the server's copy (the mixed load writes as one; a peer takes none). */
const LOADS: Record<string, (token: string | undefined) => Load> = {
  'get-one': () => ({ path: '/api/v1/users/1' }),
  'get-one-signed-in': (token) => ({ path: '/api/v1/users/1', headers: adminHeaders(token) }),
  'page-v1': () => ({ path: '/api/v1/users?role=user&sort=name&limit=20' }),
  'page-v2': () => ({ path: '/api/v2/users?role=user&sort=name&limit=20' }),
  'graphql-user': () => ({ path: '/graphql', ...graphqlRequest('{ user(id: 1) { id name email } }') }),
  'graphql-users': () => ({ path: '/graphql', ...graphqlRequest('{ users { id name } }') }),
  'graphql-nested': () => ({ path: '/graphql', ...graphqlRequest('{ users { id name posts { id title } } }') }),
  random: () => randomUsers(USERS),
  mixed: (token) => randomUsers(USERS, WRITE_SHARE, adminHeaders(token)),
  patch: (token) => randomUsers(USERS, 1, adminHeaders(token)),
}

/** What a write sends to be an admin's: the token's header on a Threadline, nothing to a peer. */
const adminHeaders = (token: string | undefined): Record<string, string> => (token === undefined ? {} : { authorization: `Bearer ${token}` })

function loadNamed(name: string): (token: string | undefined) => Load {
  const load = LOADS[name]
  if (load === undefined) throw new Error(`--load ${name}: not one of ${Object.keys(LOADS).join(', ')}`)
  return load
}

const envOf = (pairs: readonly string[]): Record<string, string> =>
  Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=')
      if (at < 1) throw new Error(`${pair}: not NAME=value`)
      return [pair.slice(0, at), pair.slice(at + 1)]
    }),
  )

interface Side {
  label: string
  server: RunningServer
  /** An admin's, on a Threadline's copy; none on a peer. */
  token: string | undefined
  cpu: number[]
  /** PostgreSQL's CPU a request, on PostgreSQL. */
  postgresCpu: number[]
  throughput: number[]
}

/** Where a side's data lives: its own copy of the SQLite data set, or the one PostgreSQL database with a Redis key prefix of its own. */
function storeEnv(label: string, dir: string, peer: boolean): Record<string, string> {
  if (onPostgres) {
    return peer
      ? { DATABASE_URL: postgres.url }
      : { DATABASE_URL: postgres.url, REDIS_URL: BENCH_REDIS_URL, REDIS_KEY_PREFIX: `bench-ab-${process.pid}-${label}:` }
  }
  const file = join(dir, `${label}.db`)
  copyFileSync(SEEDED, file)
  return peer ? { DATABASE_FILE: file } : { DATABASE_URL: `sqlite:${file}` }
}

async function startSide(label: string, dir: string, env: Record<string, string>, checkout: string, peer?: string): Promise<Side> {
  const store = storeEnv(label, dir, peer !== undefined)
  const measured = { cpu: [], postgresCpu: [], throughput: [] }
  if (peer !== undefined) {
    const server = await startServer([join('bench', 'peers', peer)], { ...store, NODE_ENV: 'production', ...env })
    return { label, server, token: undefined, ...measured }
  }
  const token = threadline(['tokens', 'create', '--user', '1'], { DATABASE_URL: store['DATABASE_URL'] ?? '' }).trim()
  const server = await startServe(
    { ...store, LOG_LEVEL: 'info', RATE_LIMIT_MAX: '1000000000', RATE_LIMIT_AUTHENTICATED_MAX: '1000000000', ...env },
    [],
    checkout,
  )
  return { label, server, token, ...measured }
}

const describe = (env: readonly string[], checkout?: string, peer?: string) =>
  [...(peer === undefined ? [] : [`bench/peers/${peer}`]), ...env, ...(checkout === undefined ? [] : [`the build in ${checkout}`])].join(', ') ||
  'this build, as shipped'

async function main(): Promise<void> {
  if (!onPostgres && !existsSync(SEEDED)) throw new Error(`${SEEDED} is missing: run npm run bench first`)
  if (args['b-peer'] !== undefined && args['b-checkout'] !== undefined) throw new Error('--b-peer and --b-checkout: B is one or the other')
  const load = loadNamed(args.load)
  const bLoad = args['b-load'] === undefined ? load : loadNamed(args['b-load'])
  const loadOf = (side: Side) => (side.label === 'B' ? bLoad : load)
  const prepare = args.prepare === undefined ? undefined : loadNamed(args.prepare)
  const pairs = Number(args.pairs)
  const options = { connections: Number(args.connections), seconds: Number(args.seconds) }
  if (!args['skip-build']) build()
  const pinned = pinServersApart()
  const dir = mkdtempSync(join(tmpdir(), 'threadline-ab-'))
  const sides: Side[] = []
  try {
    if (onPostgres) {
      console.log('Seeding PostgreSQL ...')
      await seedBenchDatabase(postgres, String(USERS), String(POSTS))
    }
    sides.push(await startSide('A', dir, envOf(args['a-env']), '.', args['a-peer']))
    sides.push(await startSide('B', dir, envOf(args['b-env']), args['b-checkout'] ?? '.', args['b-peer']))
    const [a, b] = sides as [Side, Side]
    console.log(`A: ${describe(args['a-env'], undefined, args['a-peer'])}\nB: ${describe(args['b-env'], args['b-checkout'], args['b-peer'])}`)
    console.log(pinned ? 'Both servers on core 0, autocannon on the others (taskset).' : 'Unpinned: servers and autocannon share the cores.')
    for (const side of sides) await measure(side.server.url, loadOf(side)(side.token), { ...options, seconds: 2 })
    if (prepare !== undefined) {
      for (const side of sides) await measure(side.server.url, prepare(side.token), { ...options, seconds: Number(args['prepare-seconds']) })
      console.log(`Prepared: ${args.prepare}, ${args['prepare-seconds']} s each`)
    }
    const measureSide = async (side: Side) => {
      const round = await measure(side.server.url, loadOf(side)(side.token), { ...options, pid: side.server.pid, postgres: onPostgres })
      if (round.errors > 0) throw new Error(`${side.label}: ${round.errors} errors: ${round.failed}`)
      side.cpu.push(round.cpuUsPerRequest ?? Number.NaN)
      side.postgresCpu.push(round.postgresCpuUsPerRequest ?? 0)
      side.throughput.push(round.requestsPerSecond)
      return round
    }
    const rounds = await inPairs(
      pairs,
      () => measureSide(a),
      () => measureSide(b),
    )
    const cpu = (round: Round) => round.cpuUsPerRequest ?? Number.NaN
    const ratios = rounds.map(([ra, rb]) => cpu(rb) / cpu(ra))
    // On PostgreSQL, what a request costs the machine too: the server's CPU and the database's.
    const cost = (round: Round) => cpu(round) + (round.postgresCpuUsPerRequest ?? 0)
    const withPostgres = rounds.map(([ra, rb]) => cost(rb) / cost(ra))
    console.log(
      `\n${args.load}${args['b-load'] === undefined ? '' : ` (B: ${args['b-load']})`} on ${args.store}, ${pairs} pairs of ${options.seconds} s, ${options.connections} connections:`,
    )
    for (const side of sides) {
      const [low, high] = middleHalf(side.cpu)
      console.log(
        `  ${side.label}: ${median(side.cpu).toFixed(1)} us of CPU a request (middle half ${low.toFixed(1)}-${high.toFixed(1)}),` +
          (onPostgres ? ` PostgreSQL's ${median(side.postgresCpu).toFixed(1)} us,` : '') +
          ` ${Math.round(median(side.throughput)).toLocaleString('en')} req/s`,
      )
    }
    const printRatios = (what: string, values: readonly number[]) => {
      const [low, high] = middleHalf(values)
      console.log(
        `  B/A, ${what}: median ${median(values).toFixed(3)}, middle half ${low.toFixed(3)}-${high.toFixed(3)};` +
          ` B costlier in ${values.filter((r) => r > 1).length} of ${pairs} pairs`,
      )
    }
    printRatios('CPU a request', ratios)
    if (onPostgres) printRatios("CPU a request, the server's and PostgreSQL's", withPostgres)
  } finally {
    await Promise.all(sides.map((side) => side.server.stop()))
    rmSync(dir, { recursive: true, force: true })
    if (onPostgres) await postgres.drop()
  }
}

await main()
