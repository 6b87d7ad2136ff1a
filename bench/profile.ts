// A CPU profile of the hot path: `threadline serve` under `node --cpu-prof`, loaded by autocannon
// with one scenario at a time (a fresh process each: GET one user, GraphQL user(id), a page of 20
// users in v2, GraphQL users (20), GraphQL users { posts }, GETs of random users, the mixed load (the
// same, one in 50 a PATCH) and PATCHes of random users; --scenarios names some of them), on the
// suite's data set. Prints, per scenario, the throughput and the functions that took the most of
// the server's CPU (self time, and time inside each of our own source files and each package), and
// keeps the .cpuprofile files in bench/results/profiles/ (open them in Chrome DevTools or
// speedscope); the summary goes to bench/results/profile.json.
//
// With --allocations true, no CPU profile: each server is loaded with bench/allocation-probe.mjs,
// and V8's sampling heap profiler counts what the scenario's requests allocate (the objects the
// collector took since included); it prints the bytes allocated a request, by place and by the
// function that allocated them, and keeps the profiles as .heapprofile files.
//
// With --store postgres, Threadline runs on PostgreSQL with Redis beside it (the scale-out
// deployment), on a database of the script's own, seeded alike and dropped at the end; with
// --cache false, without the representation cache (HTTP_REPRESENTATION_CACHE_MB=0: the path of
// every answer no kept one serves).
//
//   npm run bench:profile [-- --seconds 10 --connections 50 --top 25 --store sqlite|postgres --cache true|false --allocations false|true --scenarios get-one-user,graphql-nested]
//
// Run `npm run bench` once first: it seeds the SQLite data set this script reuses.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import {
  BENCH_REDIS_URL,
  benchDatabase,
  build,
  graphqlRequest,
  type Load,
  machine,
  measure,
  pinServersApart,
  randomUsers,
  seedBenchDatabase,
  startServe,
  threadline,
} from './lib.js'

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    top: { type: 'string', default: '25' },
    users: { type: 'string', default: '10000' },
    posts: { type: 'string', default: '100000' },
    store: { type: 'string', default: 'sqlite' },
    cache: { type: 'string', default: 'true' },
    allocations: { type: 'string', default: 'false' },
    scenarios: { type: 'string', default: '' },
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

/** The `n` largest entries of a tally, largest first. */
const largest = (tally: Map<string, number>, n: number): [string, number][] => [...tally].sort((a, b) => b[1] - a[1]).slice(0, n)

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
  for (const [place, hits] of largest(byPlace, 15)) console.log(`    ${percent(hits)}  ${place}`)
  console.log(`  self time by function (top ${top}):`)
  for (const [name, hits] of largest(byFunction, top)) console.log(`    ${percent(hits)}  ${name}`)
  const shares = (tally: Map<string, number>) => Object.fromEntries(largest(tally, top).map(([name, hits]) => [name, Math.round((hits / total) * 1000) / 10]))
  return { samples: total, byPlace: shares(byPlace), byFunction: shares(byFunction) }
}

/** A node of V8's sampling heap profile: the bytes its function allocated itself, and its callees. */
interface AllocationNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: AllocationNode[]
}

interface Allocations {
  bytesPerRequest: number
  byPlace: Record<string, number>
  byFunction: Record<string, number>
}

/** What about `requests` requests allocated, in bytes a request: in all, by place, by the function that allocated. */
function reportAllocations(head: AllocationNode, requests: number, top: number): Allocations {
  const byFunction = new Map<string, number>()
  const byPlace = new Map<string, number>()
  let total = 0
  const pending = [head]
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    pending.push(...node.children)
    if (node.selfSize === 0) continue
    const { functionName, url, lineNumber } = node.callFrame
    const place = placeOf(url)
    const name = `${functionName || '(anonymous)'}  ${place}${url === '' ? '' : `:${lineNumber + 1}`}`
    byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize)
    byPlace.set(place, (byPlace.get(place) ?? 0) + node.selfSize)
    total += node.selfSize
  }
  const perRequest = (bytes: number) => Math.round(bytes / requests)
  const shown = (bytes: number) => `${perRequest(bytes).toLocaleString('en-US').padStart(7)} B`
  console.log(
    `  ${perRequest(total).toLocaleString('en-US')} bytes allocated a request, over about ${requests.toLocaleString('en-US')} requests (the round's mean rate times its seconds)`,
  )
  console.log('  by place:')
  for (const [place, bytes] of largest(byPlace, 15)) console.log(`    ${shown(bytes)}  ${place}`)
  console.log(`  by the function that allocated (top ${top}):`)
  for (const [name, bytes] of largest(byFunction, top)) console.log(`    ${shown(bytes)}  ${name}`)
  const perRequestOf = (tally: Map<string, number>) => Object.fromEntries(largest(tally, top).map(([name, bytes]) => [name, perRequest(bytes)]))
  return { bytesPerRequest: perRequest(total), byPlace: perRequestOf(byPlace), byFunction: perRequestOf(byFunction) }
}

const ALLOCATION_PROBE = pathToFileURL(join(import.meta.dirname, 'allocation-probe.mjs')).href

/** Waits for the probe's file (written once the profiler has stopped). */
async function profileWritten(file: string): Promise<AllocationNode> {
  for (let waited = 0; waited < 30_000; waited += 100) {
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { head: AllocationNode }).head
    await sleep(100)
  }
  throw new Error(`the allocation probe wrote no ${file}`)
}

const graphql = (query: string, variables?: Record<string, unknown>): Load => ({ path: '/graphql', ...graphqlRequest(query, variables) })

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
  threadline(['migrate'], env)
  const admin = { authorization: `Bearer ${threadline(['tokens', 'create', '--user', '1'], env).trim()}` }
  const scenarios: Record<string, Load> = {
    'get-one-user': { path: '/api/v1/users/1' },
    'graphql-user': graphql('query($id: ID!) { user(id: $id) { id name email } }', { id: '1' }),
    'page-v2': { path: '/api/v2/users?role=user&sort=name&limit=20' },
    'graphql-users': graphql('{ users { id name } }'),
    'graphql-nested': graphql('{ users { id name posts { id title } } }'),
    // GETs of random users, none written.
    random: randomUsers(Number(args.users)),
    // GETs of random users, one in 50 a PATCH of one (as npm run bench's mixed load), written as user 1, an admin.
    mixed: randomUsers(Number(args.users), 0.02, admin),
    // Every request a PATCH of a random user.
    patch: randomUsers(Number(args.users), 1, admin),
  }
  const allocations = args.allocations === 'true'
  const results: Record<string, { requestsPerSecond: number; p99: number; errors: number } & (Shares | Allocations)> = {}
  const chosen = args.scenarios === '' ? Object.keys(scenarios) : args.scenarios.split(',')
  const unknown = chosen.filter((name) => !(name in scenarios))
  if (unknown.length > 0) throw new Error(`--scenarios: no scenario ${unknown.join(', ')} (there are ${Object.keys(scenarios).join(', ')})`)
  for (const [name, load] of Object.entries(scenarios).filter(([name]) => chosen.includes(name))) {
    const dir = join(PROFILES, name)
    const probed = join(dir, 'allocations.heapprofile')
    if (allocations) mkdirSync(dir, { recursive: true })
    const server = allocations
      ? await startServe({ ...env, THREADLINE_ALLOCATION_PROBE: probed }, ['--import', ALLOCATION_PROBE])
      : await startServe(env, ['--cpu-prof', '--cpu-prof-dir', dir])
    const options = { connections: Number(args.connections), seconds: Number(args.seconds), pid: server.pid }
    await measure(server.url, load, { ...options, seconds: 2 })
    if (allocations) process.kill(server.pid, 'SIGUSR2')
    const round = await measure(server.url, load, options)
    if (allocations) process.kill(server.pid, 'SIGUSR2')
    const head = allocations ? await profileWritten(probed) : undefined
    await server.stop()
    const file = allocations ? probed : join(dir, readdirSync(dir).find((f) => f.endsWith('.cpuprofile')) ?? '')
    if (!existsSync(file) || file === dir) throw new Error(`no profile written in ${dir}`)
    console.log(`\n${name}: ${Math.round(round.requestsPerSecond)} req/s, p99 ${round.p99} ms, errors ${round.errors} (${file})`)
    const requests = Math.round(round.requestsPerSecond * options.seconds)
    const shares =
      head === undefined ? report(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(args.top)) : reportAllocations(head, requests, Number(args.top))
    results[name] = { requestsPerSecond: Math.round(round.requestsPerSecond), p99: round.p99, errors: round.errors, ...shares }
  }
  const options = { seconds: Number(args.seconds), connections: Number(args.connections), store: args.store, cache: args.cache }
  const written = join('bench', 'results', allocations ? 'allocations.json' : 'profile.json')
  const note = allocations ? 'bytes allocated a request (sampled every 256 bytes)' : 'self time, % of samples'
  writeFileSync(written, `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), options, note, results }, null, 2)}\n`)
  console.log(`\nwritten to ${written}`)
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
