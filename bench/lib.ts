// Shared by the benchmark scripts: build the service, start a real `threadline serve`, summarize.
import { execFileSync, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import pg from 'pg'
import type { MeasurableConvention } from '../src/app.js'
import { freePort } from '../test/helpers/private-redis.js'

/** Compiles src/ to dist/, so the benchmark runs what `npm start` runs. */
export function build(): void {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
}

/** Stops with the apt-get line to run when `command` (from Debian package `debianPackage`) is missing. */
export function requireCommand(command: string, debianPackage = command): void {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' })
  } catch {
    throw new Error(`${command} is missing: apt-get install -y ${debianPackage}`)
  }
}

/** The core the servers run on, once pinServersApart() has been called; undefined: unpinned. */
let serverCore: number | undefined

/**
 * Runs the servers started from here on core 0 and this process (autocannon, the clients) on the
 * others, when the machine has two cores or more and taskset (util-linux) is there. Unpinned, on
 * the 2-core machine the load generator and the server took each other's time at random: the same
 * build swung ±40% from run to run; pinned, ±3% (GET one user, 3 runs each, by hand). Every server
 * gets the same single core, so the ratios between them stay fair. Returns whether it pinned.
 */
export function pinServersApart(): boolean {
  const cores = cpus().length
  if (cores < 2) return false
  try {
    execFileSync('taskset', ['-a', '-p', '-c', `1-${cores - 1}`, String(process.pid)], { stdio: 'ignore' })
  } catch {
    return false
  }
  serverCore = 0
  return true
}

/** The Redis the benches on PostgreSQL + Redis use (each with a key prefix of its own). */
export const BENCH_REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
/** A connection to the PostgreSQL server with the right to make and drop databases. */
const POSTGRES_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** A PostgreSQL database of a bench's own: `create()` makes it anew (dropping one left over), `drop()` removes it. */
export function benchDatabase(name: string): { url: string; create(): Promise<void>; drop(): Promise<void> } {
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
    await client.connect()
    try {
      await client.query(text)
    } finally {
      await client.end()
    }
  }
  const drop = () => admin(`drop database if exists ${name} with (force)`)
  return {
    url: POSTGRES_ADMIN_URL.replace(/\/[^/?]*(\?|$)/, `/${name}$1`),
    create: async () => {
      await drop()
      await admin(`create database ${name}`)
    },
    drop,
  }
}

/** Makes `database` anew and seeds it with the benches' data set (users and posts only), as the SQLite file is seeded. */
export async function seedBenchDatabase(database: ReturnType<typeof benchDatabase>, users: string, posts: string): Promise<void> {
  await database.create()
  const env = { DATABASE_URL: database.url }
  threadline(['migrate'], env)
  threadline(['seed', '--users', users, '--posts', posts, '--comments', '0', '--todos', '0', '--batch-size', '4000'], env)
}

/** Runs a `threadline` command to completion; returns its stdout. */
export function threadline(args: string[], env: Record<string, string>): string {
  return execFileSync(process.execPath, ['dist/main.js', ...args], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' })
}

export interface RunningServer {
  url: string
  pid: number
  stop(): Promise<void>
}

/** The Node flags `npm start` gives the server (package.json), so that a benchmark runs what it runs. */
const START_FLAGS: readonly string[] = (() => {
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts
  const flags = /\bnode ((?:--[\w-]+(?:=\S+)? )*)dist\/main\.js serve/.exec(scripts['start'] ?? '')?.[1]
  if (flags === undefined) throw new Error('package.json: the start script no longer runs `node [flags] dist/main.js serve`')
  return flags.split(' ').filter((flag) => flag !== '')
})()

/**
 * Starts `threadline serve` on a free port with `env` (logging at `info`, the default, unless env
 * says otherwise); resolves once it answers (it says nothing on stdout below `info`). Everything
 * else is the shipped default, the fair scheduler included: a benchmark's load comes from one
 * address, as one backend's calls for many people do, and the scheduler lets a caller alone have
 * the whole server. Only the rate limit's allowance is for the caller to raise (RATE_LIMIT_MAX,
 * RATE_LIMIT_AUTHENTICATED_MAX: the load-test knob), since one address sends more than a minute's
 * allowance in a second.
 */
export async function startServe(env: Record<string, string>, nodeOptions: readonly string[] = [], checkout = '.'): Promise<RunningServer> {
  return startListening([...START_FLAGS, ...nodeOptions, join(checkout, 'dist/main.js'), 'serve'], env)
}

/**
 * Starts the server as startServe does, with `conventions` left out (bench/serve-without.mjs): the
 * same sources, flags and settings, as tsc builds them into dist/ rather than as esbuild bundles
 * them into dist/main.js.
 */
export async function startServeWithout(conventions: readonly MeasurableConvention[], env: Record<string, string>): Promise<RunningServer> {
  return startListening([...START_FLAGS, 'bench/serve-without.mjs', ...conventions], env)
}

/** Runs node with `args` on a free port of 127.0.0.1, a new database left empty unless env says otherwise. */
async function startListening(args: readonly string[], env: Record<string, string>): Promise<RunningServer> {
  const port = await freePort()
  return startServer(args, { SEED_DEMO_DATA: 'false', ...env, PORT: String(port), HOST: '127.0.0.1' }, `http://127.0.0.1:${port}/`)
}

/**
 * An OpenTelemetry collector that takes every OTLP/HTTP export and keeps nothing: where a server
 * with tracing on sends its spans in a benchmark. Counts the exports and their bytes.
 */
export async function discardingOtlpReceiver() {
  let bytes = 0
  let exports = 0
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length))
    request.on('end', () => {
      exports++
      response.writeHead(200, { 'content-type': 'application/x-protobuf' })
      response.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    received: () => ({ exports, bytes }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** How long a server may take to answer after it is started. */
const START_TIMEOUT_MS = 60_000

/**
 * Runs `node args` with `env` and resolves once it prints "listening on http://host:port", or,
 * when `url` is given (a server that prints no such line), once `url` answers at all.
 */
export async function startServer(args: readonly string[], env: Record<string, string>, url?: string): Promise<RunningServer> {
  const spawnEnv = { env: { PATH: process.env.PATH, ...env } }
  // taskset execs node in its place: the pid is the server's.
  const child =
    serverCore === undefined ? spawn(process.execPath, args, spawnEnv) : spawn('taskset', ['-c', String(serverCore), process.execPath, ...args], spawnEnv)
  const running = () => child.exitCode === null && child.signalCode === null
  const stop = () =>
    new Promise<void>((resolve) => {
      // Already gone: its 'exit' has been and will not come again.
      if (!running()) return resolve()
      const kill = setTimeout(() => child.kill('SIGKILL'), 5000)
      child.on('exit', () => {
        clearTimeout(kill)
        resolve()
      })
      child.kill('SIGTERM')
    })
  let output = ''
  child.stderr.on('data', (chunk: Buffer) => {
    if (output.length < 10_000) output += chunk.toString()
  })
  const exited = new Promise<never>((_resolve, reject) => {
    child.on('exit', (code, signal) => reject(new Error(`${args.join(' ')} exited with ${code ?? signal}: ${output}`)))
  })
  exited.catch(() => undefined) // an exit after start-up is stop()'s business
  const listening = new Promise<string>((resolve) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output)
      if (url === undefined && !match?.[1]) return
      // From here on the request log is only drained, not kept.
      child.stdout.off('data', onData)
      child.stdout.resume()
      if (match?.[1]) resolve(match[1])
    }
    child.stdout.on('data', onData)
    if (url !== undefined) void untilAnswers(url, running).then(() => resolve(new URL(url).origin))
  })
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not answer within ${START_TIMEOUT_MS / 1000} s: ${output}`)), START_TIMEOUT_MS)
  })
  try {
    return { url: await Promise.race([listening, exited, timeout]), pid: child.pid ?? 0, stop }
  } catch (error) {
    await stop()
    throw error
  } finally {
    clearTimeout(timer)
  }
}

async function untilAnswers(url: string, running: () => boolean): Promise<void> {
  while (running()) {
    try {
      await fetch(url)
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

export interface Stats {
  p50: number
  p99: number
  min: number
  max: number
  n: number
}

/** The value at `share` of `sorted` (ascending) by nearest rank: 0.5 the median, 0.25 the lower quartile. */
export const quantile = (sorted: readonly number[], share: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))] ?? Number.NaN

export function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), min: sorted[0] as number, max: sorted.at(-1) as number, n: sorted.length }
}

export const median = (values: readonly number[]): number => stats(values).p50

/** The lower and upper quartiles of `values`, by nearest rank: where the middle half of them lies. */
export function middleHalf(values: readonly number[]): [number, number] {
  const sorted = [...values].sort((a, b) => a - b)
  return [quantile(sorted, 0.25), quantile(sorted, 0.75)]
}

/**
 * `pairs` pairs of runs of `a` and `b`, one right after the other, the order swapped from pair to
 * pair (a b, b a, ...), so that the machine's drift touches both alike; each pair's results in the order a, b.
 */
export async function inPairs<R>(pairs: number, a: () => Promise<R>, b: () => Promise<R>): Promise<[R, R][]> {
  const results: [R, R][] = []
  for (let pair = 0; pair < pairs; pair++) {
    if (pair % 2 === 0) {
      const first = await a()
      results.push([first, await b()])
    } else {
      const first = await b()
      results.push([await a(), first])
    }
  }
  return results
}

/** A process's resident memory now (VmRSS) or its peak since it started (VmHWM), in bytes (Linux). */
export function rssOf(pid: number, which: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const match = new RegExp(`${which}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match?.[1] === undefined ? Number.NaN : Number(match[1]) * 1024
}

/** CPU time a process has used so far (user and system), in ms, from /proc. */
function cpuTimeMs(pid: number): number {
  // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

/**
 * The CPU time of each PostgreSQL process of the machine (the backends and PostgreSQL's own
 * workers), in ms, by pid: measured around a load that alone talks to it, what that load cost
 * PostgreSQL (postgresCpuSinceMs).
 */
function postgresCpuTimesMs(): Map<number, number> {
  const times = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8') === 'postgres\n') times.set(Number(entry), cpuTimeMs(Number(entry)))
    } catch {
      // Gone since the folder was read.
    }
  }
  return times
}

/** The CPU time PostgreSQL's processes used since `before`: a process gone since counts nothing, one started since all it used. */
function postgresCpuSinceMs(before: ReadonlyMap<number, number>): number {
  let total = 0
  for (const [pid, ms] of postgresCpuTimesMs()) total += ms - (before.get(pid) ?? 0)
  return total
}

/**
 * Resolves once the server has gone quiet after a load (under 10 ms of CPU in 250 ms), or after
 * `maxMs`: what it still does once autocannon stops (a tracing server exporting what it queued,
 * a collection) must not run on the core while the next server is measured.
 */
export async function quiet(server: RunningServer, maxMs = 15_000): Promise<void> {
  const until = Date.now() + maxMs
  let before = cpuTimeMs(server.pid)
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    const now = cpuTimeMs(server.pid)
    if (now - before < 10) return
    before = now
  }
}

export function machine() {
  return { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30) }
}

export interface Load {
  /** With `mix`, `{id}` stands for each request's random id. */
  path: string
  method?: 'GET' | 'POST'
  body?: string
  headers?: Record<string, string>
  /** The status every answer must have to count as a success: 200 unless said. */
  status?: 200 | 201 | 304
  /** A check of each answer's body (a GraphQL answer must carry no `errors`); a failure counts as an error. */
  verifyBody?: (body: string) => boolean
  /** Each request goes with an Idempotency-Key of its own (a new UUID), as the typed client sends its writes. */
  idempotencyKeys?: boolean
  /**
   * Each request a GET of `path` for a random id from 1 to `ids`, or, for a `writeShare` of them, a
   * PATCH there (a new `age`, with `writeHeaders`); both answered 200. Ids in `unwritten` are read,
   * never written (another scenario expects their representation not to change).
   */
  mix?: { ids: number; writeShare: number; writeHeaders: Record<string, string>; unwritten?: readonly number[] }
  /** How long each server is warmed up with this load before it is measured: 1 s unless said. */
  warmUpSeconds?: number
}

/** GETs of random users among `ids`, a `writeShare` of the requests a PATCH of one sent with `writeHeaders` (Load.mix). */
export const randomUsers = (ids: number, writeShare = 0, writeHeaders: Record<string, string> = {}): Load => ({
  path: '/api/v1/users/{id}',
  mix: { ids, writeShare, writeHeaders },
})

/** A GraphQL request as a load's method, headers and body; the path is the server's. A GraphQL error comes with a 200: only the body tells. */
export const graphqlRequest = (query: string, variables?: Record<string, unknown>): Omit<Load, 'path'> => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query, variables }),
  verifyBody: (body) => !body.includes('"errors"'),
})

/** The request of a mixed load: a GET, or now and then a PATCH, of a random id. */
function mixedRequest(load: Load, mix: NonNullable<Load['mix']>) {
  return (request: autocannon.Request): autocannon.Request => {
    const id = 1 + Math.floor(Math.random() * mix.ids)
    const path = load.path.replace('{id}', String(id))
    if (Math.random() >= mix.writeShare || mix.unwritten?.includes(id) === true) return { ...request, method: 'GET', path }
    return {
      ...request,
      method: 'PATCH',
      path,
      headers: { ...request.headers, ...mix.writeHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ age: Math.floor(Math.random() * 100) }),
    }
  }
}

export interface Round {
  requestsPerSecond: number
  p50: number
  p99: number
  /** Connection errors, timeouts, answers with another status than the load's, and bodies that fail its check. */
  errors: number
  /** The server's largest resident memory seen during the run (sampled every 100 ms), in bytes, when its pid was given. */
  peakRss?: number
  /** When there were errors, what they were: the statuses answered, and the first body that failed the load's check. */
  failed?: string
  /** The server's CPU time (user and system, all its threads) over the run, per request answered, in µs, when its pid was given. */
  cpuUsPerRequest?: number
  /** PostgreSQL's CPU time over the run, per request answered, in µs, when asked (`postgres`). */
  postgresCpuUsPerRequest?: number
}

export interface Summary extends Round {
  min: number
  max: number
}

/**
 * One autocannon run of `load` against `url`; with `pid`, the server's memory is sampled every 100
 * ms and its CPU time a request taken; with `postgres`, PostgreSQL's too.
 */
export async function measure(url: string, load: Load, options: { connections: number; seconds: number; pid?: number; postgres?: boolean }): Promise<Round> {
  let peakRss = 0
  const { pid } = options
  const cpuBefore = pid === undefined ? 0 : cpuTimeMs(pid)
  const postgresBefore = options.postgres === true ? postgresCpuTimesMs() : undefined
  const sampler = pid === undefined ? undefined : setInterval(() => (peakRss = Math.max(peakRss, rssOf(pid))), 100)
  let firstFailedBody: string | undefined
  const check = (body: string) => {
    const passed = load.verifyBody?.(body) === true
    if (!passed) firstFailedBody ??= body
    return passed
  }
  try {
    const result = await autocannon({
      url: `${url}${load.path}`,
      method: load.method ?? 'GET',
      body: load.body,
      headers: load.headers,
      connections: options.connections,
      duration: options.seconds,
      ...(load.idempotencyKeys === true
        ? { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, headers: { ...request.headers, 'idempotency-key': randomUUID() } }) }] }
        : load.mix !== undefined
          ? { requests: [{ setupRequest: mixedRequest(load, load.mix) }] }
          : {}),
      ...(load.verifyBody === undefined ? {} : { verifyBody: (body: string | Buffer | undefined) => check(String(body)) }),
    })
    // errors counts connection errors and timeouts; every answer with another status is one more.
    const answered = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx']
    const wanted = result.statusCodeStats?.[`${load.status ?? 200}`]?.count ?? 0
    const errors = result.errors + answered - wanted + result.mismatches
    const statuses = Object.entries(result.statusCodeStats ?? {}).map(([status, { count }]) => `${status}: ${count}`)
    const perRequest = (ms: number) => (ms * 1000) / Math.max(1, result.requests.total)
    return {
      requestsPerSecond: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors,
      ...(pid === undefined ? {} : { peakRss: Math.max(peakRss, rssOf(pid)), cpuUsPerRequest: perRequest(cpuTimeMs(pid) - cpuBefore) }),
      ...(postgresBefore === undefined ? {} : { postgresCpuUsPerRequest: perRequest(postgresCpuSinceMs(postgresBefore)) }),
      ...(errors === 0
        ? {}
        : {
            failed:
              `statuses ${statuses.join(', ') || 'none'}, ${result.errors} connection errors or timeouts` +
              (firstFailedBody === undefined ? '' : `; a body that failed the check: ${firstFailedBody.slice(0, 300)}`),
          }),
    }
  } finally {
    clearInterval(sampler)
  }
}

/**
 * Runs `load` against each server in turn, round after round (A B A B ...), after a warm-up
 * run each, so that drift of the machine touches every server alike; returns each one's rounds.
 */
export async function interleave(
  servers: Record<string, RunningServer>,
  load: Load,
  options: { rounds: number; connections: number; seconds: number },
): Promise<Record<string, Round[]>> {
  const rounds: Record<string, Round[]> = Object.fromEntries(Object.keys(servers).map((name) => [name, []]))
  for (const server of Object.values(servers)) await measure(server.url, load, { ...options, seconds: load.warmUpSeconds ?? 1 })
  for (let round = 0; round < options.rounds; round++) {
    for (const [name, server] of Object.entries(servers)) {
      rounds[name]?.push(await measure(server.url, load, options))
      await quiet(server)
    }
  }
  return rounds
}

/** Medians of the rounds, with the throughput's min and max; errors summed. */
export function summarize(rounds: readonly Round[]): Summary {
  const rps = rounds.map((r) => r.requestsPerSecond)
  return {
    requestsPerSecond: median(rps),
    min: Math.min(...rps),
    max: Math.max(...rps),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
    ...medianOf(rounds, 'cpuUsPerRequest'),
    ...medianOf(rounds, 'postgresCpuUsPerRequest'),
  }
}

/** `{ [key]: the rounds' median }` when every round has it; `{}` otherwise. */
function medianOf(rounds: readonly Round[], key: 'cpuUsPerRequest' | 'postgresCpuUsPerRequest'): Partial<Round> {
  const values = rounds.flatMap((r) => r[key] ?? [])
  return values.length > 0 && values.length === rounds.length ? { [key]: median(values) } : {}
}

export function formatSummary(name: string, s: Summary): string {
  return (
    `${name.padEnd(14)} ${Math.round(s.requestsPerSecond).toString().padStart(7)} req/s (${Math.round(s.min)}-${Math.round(s.max)})` +
    `  p50 ${s.p50} ms  p99 ${s.p99} ms  errors ${s.errors}`
  )
}
