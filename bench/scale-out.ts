// Scaling out, measured on real `threadline serve` processes:
//   a. one instance on SQLite against one on PostgreSQL, on the same seeded data (1,000 users,
//      10,000 posts): GET one user, a page of 20 users with a filter and a sort (v1 with its total,
//      v2 without), POST a post (writes), GraphQL `user(id) { id name email }`; autocannon in
//      interleaved rounds (sqlite, postgres, sqlite, postgres, ...). Both without Redis: the store
//      is the only difference.
//   b. PostgreSQL + Redis: one instance reached directly, the same one behind nginx, and two behind
//      nginx (deploy/nginx.conf, its upstream rewritten), GET one user and the v1 page; with the
//      CPU each process used during each round (from /proc), since everything shares the machine.
//   c. delivery of a subscription event: N graphql-ws subscribers of commentAdded on instance A,
//      comments created one at a time over REST on instance B (across Redis), on A itself (still
//      through Redis), and on an instance without Redis (in-process events), timed from just
//      before each POST is sent and from its 201.
// What cannot run is skipped with the reason: no PostgreSQL, everything; no Redis, b and c; no
// nginx, b. A database bench_scale_out_<pid> is created and dropped, Redis keys live under a
// prefix of their own (deleted at the end), and every process started is stopped, on error too.
//
//   npm run bench:scale-out [-- --rounds 3 --seconds 5 --connections 10 --subscribers 100 --comments 50]
//   BENCH_DATABASE_URL: the server to create the database on (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_REDIS_URL: default redis://127.0.0.1:6379
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import pg from 'pg'
import { freePort } from '../test/helpers/private-redis.js'
import { answers } from '../test/helpers/services.js'
import { withClient } from '../test/helpers/test-store.js'
import { createPost, type Delivery, timeDeliveries } from './deliveries.js'
import { build, formatSummary, type Load, machine, measure, median, type Round, type RunningServer, startServe, summarize, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    users: { type: 'string', default: '1000' },
    posts: { type: 'string', default: '10000' },
    subscribers: { type: 'string', default: '100' },
    comments: { type: 'string', default: '50' },
  },
})
const options = { rounds: Number(args.rounds), seconds: Number(args.seconds), connections: Number(args.connections) }
const ADMIN_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const DATABASE_NAME = `bench_scale_out_${process.pid}`
const REDIS_KEY_PREFIX = `bench-scale-out-${process.pid}:`
const HUGE = '1000000000'
/** Every instance: allowances too large to run out (the limiter still counts), logging at info as shipped. */
const BASE_ENV = {
  LOG_LEVEL: 'info',
  RATE_LIMIT_MAX: HUGE,
  RATE_LIMIT_AUTHENTICATED_MAX: HUGE,
  GRAPHQL_MAX_CONNECTIONS_PER_CALLER: '1000000',
}
const PAGE_QUERY = 'role=user&sort=name&limit=20'

// --- cleaning up: everything started registers how to stop it; run in reverse, on error and Ctrl-C too

const cleanups: (() => Promise<unknown>)[] = []
async function cleanUp(): Promise<void> {
  for (let task = cleanups.pop(); task !== undefined; task = cleanups.pop()) {
    try {
      await task()
    } catch (error) {
      console.error('cleanup failed:', error)
    }
  }
}
// `on`, not `once`: tsx relays a signal it received to this process too, and a second SIGINT with
// no listener left would end the process before the cleanup is done.
let interrupted = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return
    interrupted = true
    console.error(`\n${signal}: stopping what was started...`)
    void cleanUp().finally(() => process.exit(130))
  })
}

const stopping = new WeakMap<RunningServer, Promise<void>>()

/** Whether a process is still there (it may have gone already: Ctrl-C reaches the servers too). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Stops a server (once, however often asked), killing it when it has not exited 5 s after SIGTERM. */
function stopServer(server: RunningServer): Promise<void> {
  let stopped = stopping.get(server)
  if (stopped === undefined) {
    stopped = !isRunning(server.pid)
      ? Promise.resolve()
      : Promise.race([server.stop().then(() => true), sleep(5000, false)]).then((exited) => {
          if (!exited && isRunning(server.pid)) process.kill(server.pid, 'SIGKILL')
        })
    stopping.set(server, stopped)
  }
  return stopped
}

async function startInstance(env: Record<string, string>): Promise<RunningServer> {
  const server = await startServe(env)
  cleanups.push(() => stopServer(server))
  return server
}

// --- what is there to run against

function findNginx(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':').filter((dir) => dir !== ''), '/usr/sbin', '/usr/local/sbin']
  return dirs.map((dir) => join(dir, 'nginx')).find((path) => existsSync(path))
}

// --- CPU accounting from /proc (Linux)

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100

/** CPU seconds (user + system) a process has used, or undefined when it is gone. */
function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return undefined
  }
}

function childrenOf(pid: number): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return children
}

/** Busy and total CPU seconds of the whole machine, all cores, from /proc/stat. */
function machineSeconds(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? ''
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number)
  const total = ticks.reduce((sum, t) => sum + t, 0)
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0)
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS }
}

/** The groups of processes whose CPU is counted; each group is a function listing its pids now. */
type ProcessGroups = Record<string, () => Promise<number[]>>
type CpuSample = { at: number; bench: number; machine: { busy: number; total: number }; groups: Record<string, Map<number, number>> }

async function sampleCpu(groups: ProcessGroups): Promise<CpuSample> {
  const sampled: Record<string, Map<number, number>> = {}
  for (const [name, list] of Object.entries(groups)) {
    const pids = await list()
    sampled[name] = new Map(
      pids.flatMap((pid) => {
        const seconds = cpuSecondsOf(pid)
        return seconds === undefined ? [] : [[pid, seconds] as const]
      }),
    )
  }
  const usage = process.cpuUsage()
  return { at: performance.now(), bench: (usage.user + usage.system) / 1e6, machine: machineSeconds(), groups: sampled }
}

/** Cores used by each group between two samples ("autocannon" is this process: the load generator). */
function coresBetween(before: CpuSample, after: CpuSample): Record<string, number> {
  const wall = (after.at - before.at) / 1000
  const cores: Record<string, number> = { 'autocannon (bench process)': (after.bench - before.bench) / wall }
  for (const [name, now] of Object.entries(after.groups)) {
    let seconds = 0
    // A process started during the round (a new PostgreSQL backend, when a pool reconnects) counts from 0.
    for (const [pid, value] of now) seconds += value - (before.groups[name]?.get(pid) ?? 0)
    cores[name] = seconds / wall
  }
  const machineCores = (after.machine.busy - before.machine.busy) / wall
  const counted = Object.values(cores).reduce((sum, c) => sum + c, 0)
  // The rest: other processes on the machine, and kernel time no process was charged for.
  cores['everything else'] = Math.max(0, machineCores - counted)
  cores['whole machine'] = machineCores
  return cores
}

// --- load: interleaved rounds, each target with its own load (the token differs per database)

interface Target {
  url: string
  load: Load
}

async function alternate(
  targets: Record<string, Target>,
  onRound?: { groups: ProcessGroups; cores: Record<string, Record<string, number>[]> },
): Promise<Record<string, Round[]>> {
  const rounds: Record<string, Round[]> = Object.fromEntries(Object.keys(targets).map((name) => [name, []]))
  for (const target of Object.values(targets)) await measure(target.url, target.load, { ...options, seconds: 1 })
  for (let round = 0; round < options.rounds; round++) {
    for (const [name, target] of Object.entries(targets)) {
      const before = onRound && (await sampleCpu(onRound.groups))
      rounds[name]?.push(await measure(target.url, target.load, options))
      if (onRound && before) {
        const cores = coresBetween(before, await sampleCpu(onRound.groups))
        ;(onRound.cores[name] ??= []).push(cores)
      }
    }
  }
  return rounds
}

const graphqlLoad = (query: string, variables?: Record<string, unknown>): Load => ({
  path: '/graphql',
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query, variables }),
})

function scenarios(token: string): Record<string, Load> {
  return {
    'GET one user': { path: '/api/v1/users/1' },
    'GET page v1 (total)': { path: `/api/v1/users?${PAGE_QUERY}` },
    'GET page v2 (no total)': { path: `/api/v2/users?${PAGE_QUERY}` },
    'GraphQL user(id)': graphqlLoad('query($id: ID!) { user(id: $id) { id name email } }', { id: '1' }),
    'POST a post': {
      path: '/api/v1/users/1/posts',
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Benchmark', content: 'Written by bench/scale-out.ts, many times over.' }),
    },
  }
}

// --- nginx from deploy/nginx.conf

/** deploy/nginx.conf with its upstream listing `upstreams` and listening on `port`. */
function nginxConfig(upstreams: readonly string[], port: number): string {
  const lines = readFileSync(join('deploy', 'nginx.conf'), 'utf8').split('\n')
  const begin = lines.findIndex((line) => line.includes('# BEGIN threadline instances'))
  const end = lines.findIndex((line) => line.includes('# END threadline instances'))
  if (begin < 0 || end < begin) throw new Error('deploy/nginx.conf has lost its "# BEGIN/END threadline instances" markers')
  const servers = upstreams.map((address) => `        server ${address} max_fails=3 fail_timeout=5s;`)
  return [...lines.slice(0, begin + 1), ...servers, ...lines.slice(end)].join('\n').replace(/^(\s*listen\s+)8080;/m, `$1${port};`)
}

interface RunningNginx {
  url: string
  pids: () => number[]
}

async function startNginx(binary: string, instances: readonly RunningServer[]): Promise<RunningNginx> {
  const prefix = mkdtempSync(join(tmpdir(), 'threadline-bench-nginx-'))
  cleanups.push(async () => rmSync(prefix, { recursive: true, force: true }))
  // Run as root, nginx's workers are `nobody`: they must reach their temp directories.
  chmodSync(prefix, 0o755)
  mkdirSync(join(prefix, 'logs'))
  mkdirSync(join(prefix, 'tmp'))
  const port = await freePort()
  const conf = join(prefix, 'nginx.conf')
  writeFileSync(
    conf,
    nginxConfig(
      instances.map((instance) => new URL(instance.url).host),
      port,
    ),
  )
  const child: ChildProcess = spawn(binary, ['-p', prefix, '-c', conf, '-e', 'stderr', '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await Promise.race([exited, sleep(5000)])
  })
  const url = `http://127.0.0.1:${port}`
  for (let tries = 0; !(await answers(url, port)); tries++) {
    if (child.exitCode !== null || tries > 50) throw new Error(`nginx did not start: ${stderr}`)
    await sleep(100)
  }
  const pid = child.pid ?? 0
  return { url, pids: () => [pid, ...childrenOf(pid)] }
}

// --- printing

const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

function printComparison(title: string, summary: Record<string, Record<string, ReturnType<typeof summarize>>>, ratio?: [string, string]) {
  console.log(`\n${title}`)
  for (const [scenario, byTarget] of Object.entries(summary)) {
    console.log(`\n  ${scenario}`)
    for (const [name, s] of Object.entries(byTarget)) console.log(`  ${formatSummary(name, s)}`)
    if (ratio) {
      const [a, b] = ratio
      const ra = byTarget[a]?.requestsPerSecond ?? 0
      const rb = byTarget[b]?.requestsPerSecond ?? 1
      console.log(`  ${a} / ${b}: ${(ra / rb).toFixed(2)}x`)
    }
  }
}

// --- the run

interface Results {
  date: string
  machine: ReturnType<typeof machine>
  options: typeof options & { users: number; posts: number; subscribers: number; comments: number; pageQuery: string }
  skipped: Record<string, string>
  /** Cores other processes kept busy during 2 s before the run started. */
  busyBeforeStartCores?: number
  a?: { rounds: Record<string, Record<string, Round[]>>; summary: Record<string, Record<string, ReturnType<typeof summarize>>> }
  b?: {
    rounds: Record<string, Record<string, Round[]>>
    summary: Record<string, Record<string, ReturnType<typeof summarize>>>
    /** Cores used during the measured rounds (medians over rounds), per scenario and setup. */
    cores: Record<string, Record<string, Record<string, number>>>
  }
  c?: Record<string, Delivery>
}

async function main(): Promise<void> {
  const started = performance.now()
  const results: Results = {
    date: new Date().toISOString(),
    machine: machine(),
    options: {
      ...options,
      users: Number(args.users),
      posts: Number(args.posts),
      subscribers: Number(args.subscribers),
      comments: Number(args.comments),
      pageQuery: PAGE_QUERY,
    },
    skipped: {},
  }

  // Everything shares the machine with whatever else runs on it: say how busy it was before.
  const idleBefore = machineSeconds()
  await sleep(2000)
  const idleAfter = machineSeconds()
  results.busyBeforeStartCores = Math.round(((idleAfter.busy - idleBefore.busy) / 2) * 100) / 100
  if (results.busyBeforeStartCores > 0.3) {
    console.log(`[warning] other processes kept ${results.busyBeforeStartCores} cores busy before the start: the figures will be low and noisy`)
  }

  const [hasPostgres, hasRedis] = await Promise.all([answers(ADMIN_DATABASE_URL, 5432), answers(REDIS_URL, 6379)])
  const nginx = findNginx()
  if (!hasPostgres) {
    const why = `PostgreSQL does not answer at ${new URL(ADMIN_DATABASE_URL).host} (set BENCH_DATABASE_URL or start it)`
    console.log(`[skip] every part: ${why}`)
    results.skipped.all = why
    return
  }
  if (!hasRedis) {
    results.skipped.b = results.skipped.c = `Redis does not answer at ${new URL(REDIS_URL).host} (set BENCH_REDIS_URL or start redis-server)`
    console.log(`[skip] parts b and c: ${results.skipped.b}`)
  } else if (nginx === undefined) {
    results.skipped.b = 'nginx is not installed (apt-get install -y nginx)'
    console.log(`[skip] part b: ${results.skipped.b}`)
  }

  build()
  const dataDir = join('bench', '.data')
  mkdirSync(dataDir, { recursive: true })
  const sqlitePath = join(dataDir, 'scale-out.db')
  rmSync(sqlitePath, { force: true })
  cleanups.push(async () => rmSync(sqlitePath, { force: true }))
  await withClient(ADMIN_DATABASE_URL, (client) => client.query(`create database ${DATABASE_NAME}`))
  cleanups.push(() => withClient(ADMIN_DATABASE_URL, (client) => client.query(`drop database if exists ${DATABASE_NAME} with (force)`)))
  const postgresUrl = new URL(ADMIN_DATABASE_URL)
  postgresUrl.pathname = `/${DATABASE_NAME}`

  const stores = { sqlite: `sqlite:${sqlitePath}`, postgres: postgresUrl.toString() }
  const tokens: Record<string, string> = {}
  for (const [store, url] of Object.entries(stores)) {
    const env = { DATABASE_URL: url }
    threadline(['migrate'], env)
    const seeding = performance.now()
    threadline(['seed', '--users', args.users, '--posts', args.posts, '--comments', '0', '--todos', '0'], env)
    console.log(`${store}: seeded ${args.users} users and ${args.posts} posts in ${((performance.now() - seeding) / 1000).toFixed(1)} s`)
    tokens[store] = threadline(['tokens', 'create', '--user', '1'], env).trim()
  }
  const postgresToken = tokens.postgres ?? ''

  // a. SQLite against PostgreSQL, one instance each, no Redis.
  const single = {
    sqlite: await startInstance({ ...BASE_ENV, DATABASE_URL: stores.sqlite }),
    postgres: await startInstance({ ...BASE_ENV, DATABASE_URL: stores.postgres }),
  }
  const a: NonNullable<Results['a']> = { rounds: {}, summary: {} }
  for (const scenario of Object.keys(scenarios(''))) {
    const targets = Object.fromEntries(
      Object.entries(single).map(([store, server]) => [store, { url: server.url, load: scenarios(tokens[store] ?? '')[scenario] as Load }]),
    )
    console.log(`a. ${scenario}...`)
    a.rounds[scenario] = await alternate(targets)
    a.summary[scenario] = Object.fromEntries(Object.entries(a.rounds[scenario]).map(([name, r]) => [name, summarize(r)]))
  }
  results.a = a

  // c, its last line first: the same instance with in-process events (no Redis), for reference.
  const deliveries: Record<string, Delivery> = {}
  const delivery = { subscribers: Number(args.subscribers), comments: Number(args.comments) }
  let postPath: string | undefined
  if (hasRedis) {
    postPath = await createPost(single.postgres, postgresToken)
    console.log('c. same instance, in-process events...')
    deliveries['same instance, no Redis (in-process)'] = await timeDeliveries(single.postgres, single.postgres, postgresToken, postPath, 'in-process', delivery)
  }
  await Promise.all(Object.values(single).map((server) => stopServer(server)))

  if (hasRedis && postPath !== undefined) {
    const scaled = { ...BASE_ENV, DATABASE_URL: stores.postgres, REDIS_URL, REDIS_KEY_PREFIX, TRUST_PROXY: '127.0.0.1' }
    const instanceA = await startInstance(scaled)
    const instanceB = await startInstance(scaled)
    cleanups.push(async () => {
      const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 })
      await redis.connect()
      const keys = await redis.keys(`${REDIS_KEY_PREFIX}*`)
      if (keys.length > 0) await redis.del(...keys)
      redis.disconnect()
    })

    // c. across instances, and on one instance, both through Redis.
    console.log('c. across instances (B to A through Redis)...')
    deliveries['across instances (B to A, Redis)'] = await timeDeliveries(instanceA, instanceB, postgresToken, postPath, 'across', delivery)
    console.log('c. same instance through Redis...')
    deliveries['same instance (A to A, Redis)'] = await timeDeliveries(instanceA, instanceA, postgresToken, postPath, 'same', delivery)
    results.c = deliveries

    // b. one instance against two behind nginx.
    if (nginx !== undefined) {
      const behindOne = await startNginx(nginx, [instanceA])
      const behindTwo = await startNginx(nginx, [instanceA, instanceB])
      const redisPid = await redisProcessId()
      const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL })
      await admin.connect()
      cleanups.push(() => admin.end())
      const groups: ProcessGroups = {
        'instance A': async () => [instanceA.pid],
        'instance B': async () => [instanceB.pid],
        nginx: async () => [...behindOne.pids(), ...behindTwo.pids()],
        'postgres (this database)': async () =>
          (await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [DATABASE_NAME])).rows.map((row) => row.pid),
        redis: async () => (redisPid === undefined ? [] : [redisPid]),
      }
      const loads: Record<string, Load> = { 'GET one user': { path: '/api/v1/users/1' }, 'GET page v1 (total)': { path: `/api/v1/users?${PAGE_QUERY}` } }
      const b: NonNullable<Results['b']> = { rounds: {}, summary: {}, cores: {} }
      for (const [scenario, load] of Object.entries(loads)) {
        console.log(`b. ${scenario}...`)
        const cores: Record<string, Record<string, number>[]> = {}
        b.rounds[scenario] = await alternate(
          { '1 instance': { url: instanceA.url, load }, '1 behind nginx': { url: behindOne.url, load }, '2 behind nginx': { url: behindTwo.url, load } },
          { groups, cores },
        )
        b.summary[scenario] = Object.fromEntries(Object.entries(b.rounds[scenario]).map(([name, r]) => [name, summarize(r)]))
        b.cores[scenario] = Object.fromEntries(
          Object.entries(cores).map(([setup, samples]) => {
            const names = Object.keys(samples[0] ?? {})
            return [setup, Object.fromEntries(names.map((name) => [name, Math.round(median(samples.map((s) => s[name] ?? 0)) * 100) / 100]))]
          }),
        )
      }
      results.b = b
    }
  }

  // The table.
  const dataset = `${fmt(Number(args.users))} users, ${fmt(Number(args.posts))} posts`
  const how = `${options.connections} connections, ${options.rounds} interleaved rounds of ${options.seconds} s, medians (min-max)`
  printComparison(`a. One instance, SQLite vs PostgreSQL (${dataset}; page: ?${PAGE_QUERY}; ${how})`, a.summary, ['postgres', 'sqlite'])
  if (results.b) {
    printComparison(`b. PostgreSQL + Redis: one instance vs two behind nginx (${how})`, results.b.summary, ['2 behind nginx', '1 instance'])
    for (const [scenario, bySetup] of Object.entries(results.b.cores)) {
      console.log(`\n  CPU used during "${scenario}" (cores, of ${results.machine.cpus}; medians of the rounds)`)
      const names = Object.keys(Object.values(bySetup)[0] ?? {})
      console.log(`  ${''.padEnd(16)}${names.map((n) => n.padStart(Math.max(9, n.length + 2))).join('')}`)
      for (const [setup, cores] of Object.entries(bySetup)) {
        console.log(`  ${setup.padEnd(16)}${names.map((n) => (cores[n] ?? 0).toFixed(2).padStart(Math.max(9, n.length + 2))).join('')}`)
      }
    }
    console.log(
      `\n  "everything else": other processes on the machine, and kernel work charged to no process (network softirq in ksoftirqd).` +
        `\n  The machine has ${results.machine.cpus} cores for everything above: when "whole machine" is near ${results.machine.cpus}, the run is ` +
        'CPU-bound, and a second instance can only take CPU from the first, from PostgreSQL and from the load generator.',
    )
  } else if (results.skipped.b) console.log(`\nb. skipped: ${results.skipped.b}`)
  if (results.c) {
    console.log(`\nc. commentAdded delivery, ${args.subscribers} graphql-ws subscribers on one instance, ${args.comments} comments one at a time (ms)`)
    console.log(`  ${''.padEnd(40)}  from send p50   p99   from 201 p50   p99   last subscriber p50   p99   lost`)
    for (const [name, d] of Object.entries(results.c)) {
      console.log(
        `  ${name.padEnd(40)}  ${String(d.fromSendMs.p50).padStart(12)} ${String(d.fromSendMs.p99).padStart(5)}` +
          `   ${String(d.from201Ms.p50).padStart(12)} ${String(d.from201Ms.p99).padStart(5)}` +
          `   ${String(d.lastSubscriberFromSendMs.p50).padStart(19)} ${String(d.lastSubscriberFromSendMs.p99).padStart(5)}   ${d.lost}`,
      )
    }
  } else if (results.skipped.c) console.log(`\nc. skipped: ${results.skipped.c}`)

  const errors = [...Object.values(a.summary), ...Object.values(results.b?.summary ?? {})]
    .flatMap((byTarget) => Object.values(byTarget))
    .reduce((sum, s) => sum + s.errors, 0)
  const lost = Object.values(results.c ?? {}).reduce((sum, d) => sum + d.lost, 0)
  if (errors > 0 || lost > 0) {
    console.log(`\nNOT CLEAN: ${errors} failed requests, ${lost} deliveries lost (both must be 0)`)
    process.exitCode = 1
  }
  mkdirSync(join('bench', 'results'), { recursive: true })
  writeFileSync(join('bench', 'results', 'scale-out.json'), `${JSON.stringify(results, null, 2)}\n`)
  console.log(`\nwritten to bench/results/scale-out.json (${((performance.now() - started) / 1000).toFixed(0)} s)`)
}

/** The local redis-server's pid (INFO server), when it runs on this machine. */
async function redisProcessId(): Promise<number | undefined> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 })
  try {
    await redis.connect()
    const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1])
    return Number.isInteger(pid) && existsSync(`/proc/${pid}`) ? pid : undefined
  } finally {
    redis.disconnect()
  }
}

try {
  await main()
} finally {
  await cleanUp()
}
