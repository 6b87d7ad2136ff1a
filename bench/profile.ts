// A CPU profile of the hot path: `threadline serve` under `node --cpu-prof`, loaded by autocannon
// with one scenario at a time (a fresh process each: GET one user, GraphQL user(id), a page of 20
// users in v2, GraphQL users (20), GraphQL users { posts }), on the suite's data set. Prints, per
// scenario, the throughput and the functions that took the most of the server's CPU (self time,
// and time inside each of our own source files and each package), and keeps the .cpuprofile files
// in bench/results/profiles/ (open them in Chrome DevTools or speedscope); the summary goes to
// bench/results/profile.json.
//
// With --store postgres, Threadline runs on PostgreSQL with Redis beside it (the scale-out
// deployment), on a database of the script's own, seeded alike and dropped at the end; with
// --cache false, without the representation cache (HTTP_REPRESENTATION_CACHE_MB=0: the path of
// every answer no kept one serves).
//
//   npm run bench:profile [-- --seconds 10 --connections 50 --top 25 --store sqlite|postgres --cache true|false]
//
// Run `npm run bench` once first: it seeds the SQLite data set this script reuses.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parseArgs } from 'node:util'
import { BENCH_REDIS_URL, benchDatabase, build, type Load, machine, measure, pinServersApart, seedBenchDatabase, startServe, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    top: { type: 'string', default: '25' },
    users: { type: 'string', default: '10000' },
    posts: { type: 'string', default: '100000' },
    store: { type: 'string', default: 'sqlite' },
    cache: { type: 'string', default: 'true' },
  },
})
if (args.store !== 'sqlite' && args.store !== 'postgres') throw new Error(`--store is sqlite or postgres, not ${args.store}`)

const PROFILES = join('bench', 'results', 'profiles')

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
  children?: number[]
}

interface Profile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
}

/** Where a frame's code lives: our own file, a package, Node itself, or the engine. */
function placeOf(url: string): string {
  if (url === '') return '(engine: GC, native, idle)'
  if (url.startsWith('node:')) return 'node: (Node.js core)'
  const path = url.replace(/^file:\/\//, '')
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)
  if (inPackage?.[1]) return inPackage[1]
  return relative(process.cwd(), path)
}

interface Shares {
  samples: number
  byPlace: Record<string, number>
  byFunction: Record<string, number>
}

function report(profile: Profile, top: number): Shares {
  const total = profile.samples.length
  const byFunction = new Map<string, number>()
  const byPlace = new Map<string, number>()
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0
    if (hits === 0) continue
    const { functionName, url, lineNumber } = node.callFrame
    const place = placeOf(url)
    const name = `${functionName || '(anonymous)'}  ${place}${url === '' ? '' : `:${lineNumber + 1}`}`
    byFunction.set(name, (byFunction.get(name) ?? 0) + hits)
    byPlace.set(place, (byPlace.get(place) ?? 0) + hits)
  }
  const idle = byFunction.get('(idle)  (engine: GC, native, idle)') ?? 0
  const percent = (hits: number) => `${((hits / total) * 100).toFixed(1).padStart(5)}%`
  console.log(`  ${total} samples; idle ${percent(idle)}`)
  console.log('  self time by place:')
  for (const [place, hits] of [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`    ${percent(hits)}  ${place}`)
  console.log(`  self time by function (top ${top}):`)
  for (const [name, hits] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${percent(hits)}  ${name}`)
  const shares = (entries: Map<string, number>) =>
    Object.fromEntries(
      [...entries]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([name, hits]) => [name, Math.round((hits / total) * 1000) / 10]),
    )
  return { samples: total, byPlace: shares(byPlace), byFunction: shares(byFunction) }
}

const graphql = (query: string, variables?: Record<string, unknown>): Load => ({
  path: '/graphql',
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query, variables }),
})

async function main(): Promise<void> {
  build()
  pinServersApart()
  rmSync(PROFILES, { recursive: true, force: true })
  mkdirSync(PROFILES, { recursive: true })
  const env = {
    DATABASE_URL: args.store === 'postgres' ? await seededPostgres() : `sqlite:${sqliteCopy()}`,
    ...(args.store === 'postgres' ? { REDIS_URL: BENCH_REDIS_URL, REDIS_KEY_PREFIX: `threadline-profile-${process.pid}:` } : {}),
    ...(args.cache === 'false' ? { HTTP_REPRESENTATION_CACHE_MB: '0' } : {}),
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '1000000000',
    RATE_LIMIT_AUTHENTICATED_MAX: '1000000000',
  }
  const scenarios: Record<string, Load> = {
    'get-one-user': { path: '/api/v1/users/1' },
    'graphql-user': graphql('query($id: ID!) { user(id: $id) { id name email } }', { id: '1' }),
    'page-v2': { path: '/api/v2/users?role=user&sort=name&limit=20' },
    'graphql-users': graphql('{ users { id name } }'),
    'graphql-nested': graphql('{ users { id name posts { id title } } }'),
  }
  threadline(['migrate'], env)
  const results: Record<string, { requestsPerSecond: number; p99: number; errors: number } & Shares> = {}
  for (const [name, load] of Object.entries(scenarios)) {
    const dir = join(PROFILES, name)
    const server = await startServe(env, ['--cpu-prof', '--cpu-prof-dir', dir])
    const options = { connections: Number(args.connections), seconds: Number(args.seconds), pid: server.pid }
    await measure(server.url, load, { ...options, seconds: 2 })
    const round = await measure(server.url, load, options)
    await server.stop()
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
    if (file === undefined) throw new Error(`no profile written in ${dir}`)
    console.log(`\n${name}: ${Math.round(round.requestsPerSecond)} req/s, p99 ${round.p99} ms, errors ${round.errors} (${join(dir, file)})`)
    const shares = report(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile, Number(args.top))
    results[name] = { requestsPerSecond: Math.round(round.requestsPerSecond), p99: round.p99, errors: round.errors, ...shares }
  }
  const options = { seconds: Number(args.seconds), connections: Number(args.connections), store: args.store, cache: args.cache }
  writeFileSync(
    join('bench', 'results', 'profile.json'),
    `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), options, note: 'self time, % of samples', results }, null, 2)}\n`,
  )
  console.log('\nwritten to bench/results/profile.json')
  if (args.store === 'postgres') await postgres.drop()
}

/** A copy of the suite's seeded SQLite file: serving turns on WAL mode, and the suite copies the seeded file as it is. */
function sqliteCopy(): string {
  const seeded = join('bench', '.data', `suite-${args.users}-${args.posts}.db`)
  if (!existsSync(seeded)) throw new Error(`${seeded} is missing: run npm run bench first`)
  const copy = join('bench', '.data', 'profile-run.db')
  for (const part of ['', '-wal', '-shm']) rmSync(`${copy}${part}`, { force: true })
  copyFileSync(seeded, copy)
  return copy
}

const postgres = benchDatabase('threadline_profile')

/** The profile's own PostgreSQL database, seeded as the suite seeds its own. */
async function seededPostgres(): Promise<string> {
  console.log('Seeding PostgreSQL ...')
  await seedBenchDatabase(postgres, args.users, args.posts)
  return postgres.url
}

await main()
