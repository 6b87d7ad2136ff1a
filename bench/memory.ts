// Where a Threadline server's memory goes. The resident set by mapping is read from outside, from
// /proc/<pid>/smaps (the node binary, shared libraries and native addons, malloc's main heap,
// anonymous memory, files); V8's heap by space, process.memoryUsage() and the CommonJS modules
// loaded come from bench/memory-probe.mjs, which the benchmark loads into the server with
// `node --import` and asks by SIGUSR2. The service itself has no switch or route for any of it.
//
//   npm run bench:memory [-- --idle-seconds 30 --seconds 5 --data <sqlite file> --node-options="<flags>" --env NAME=value --idle-only]
//
// It starts `threadline serve` on the demo data (what `npm start` serves) and prints the breakdown
// 2 s after it listens and after --idle-seconds of idleness; then it starts one on the benchmark's
// data set (bench/.data/suite-10000-100000.db when `npm run bench` has made it, else the demo
// data), runs GET one user, a page of 20, GraphQL user(id) and users { posts }, and POST create for
// --seconds each after a warm-up second (autocannon, 50 connections) and prints the peak (VmHWM) and the breakdown after.
// Writes bench/results/memory.json. npm run bench prints the same breakdown for its own server.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { build, graphqlRequest, type Load, machine, measure, pinServersApart, rssOf, type RunningServer, startServe, threadline } from './lib.js'

const MB = 2 ** 20

/** Resident bytes by kind of mapping, from /proc/<pid>/smaps. */
export interface Mappings {
  rss: number
  /** The node executable: its code, V8's snapshot and built-in sources, ICU data (file-backed, clean). */
  binary: number
  /** Shared libraries and native addons (better-sqlite3's SQLite). */
  libraries: number
  /** malloc's main arena ([heap]): what the main thread mallocs (SQLite's page cache and statements among it). */
  mallocHeap: number
  /** Anonymous mappings: V8's heap, the malloc arenas of the other threads, thread stacks. */
  anonymous: number
  /** Everything else: the main stack, other files (SQLite's -shm), vdso. */
  other: number
}

/** Reads where the resident set of `pid` goes, by mapping (Linux). */
export function readMappings(pid: number): Mappings {
  const binary = readlinkSync(`/proc/${pid}/exe`)
  const totals: Mappings = { rss: 0, binary: 0, libraries: 0, mallocHeap: 0, anonymous: 0, other: 0 }
  let kind: Exclude<keyof Mappings, 'rss'> = 'other'
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    // A mapping's header: address perms offset device inode [path]
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line)
    if (header !== null) {
      const path = header[1] ?? ''
      kind =
        path === ''
          ? 'anonymous'
          : path === binary
            ? 'binary'
            : path === '[heap]'
              ? 'mallocHeap'
              : /\.so(\.[\d.]+)?$|\.node$/.test(path)
                ? 'libraries'
                : 'other'
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss?.[1] !== undefined) {
      totals[kind] += Number(rss[1]) * 1024
      totals.rss += Number(rss[1]) * 1024
    }
  }
  return totals
}

/** What bench/memory-probe.mjs writes. */
export interface ProbeReport {
  usage: NodeJS.MemoryUsage
  heap: { total_physical_size: number; used_heap_size: number; total_heap_size: number }
  spaces: { space_name: string; space_size: number; space_used_size: number; physical_space_size: number }[]
  code: { code_and_metadata_size: number; bytecode_and_metadata_size: number; external_script_source_size: number }
  commonJsModules: number
  /** The heap's used size after a full collection, when the server was started with --expose-gc. */
  liveAfterFullGc?: number
}

/** The Node options and environment that load the probe into a server. */
const PROBE_NODE_OPTIONS = ['--import', pathToFileURL(join(import.meta.dirname, 'memory-probe.mjs')).href]

/** Where each server started by startProbedServe has its probe write. */
const probeFiles = new WeakMap<RunningServer, string>()

/** `threadline serve` (lib.ts's startServe) with the probe loaded. */
export async function startProbedServe(env: Record<string, string>, nodeOptions: readonly string[] = []): Promise<RunningServer> {
  const probeFile = join(mkdtempSync(join(tmpdir(), 'threadline-memory-')), 'probe.json')
  const server = await startServe({ ...env, THREADLINE_MEMORY_PROBE: probeFile }, [...PROBE_NODE_OPTIONS, ...nodeOptions])
  probeFiles.set(server, probeFile)
  return server
}

/** Asks the probe in `server` for its report; undefined without a probe, or when it does not answer within 2 s. */
async function readProbe(server: RunningServer): Promise<ProbeReport | undefined> {
  const file = probeFiles.get(server)
  if (file === undefined) return undefined
  rmSync(file, { force: true })
  process.kill(server.pid, 'SIGUSR2')
  for (let waited = 0; waited < 2000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as ProbeReport
  }
  return undefined
}

export interface MemoryBreakdown {
  /** VmRSS and VmHWM (the peak since the start), bytes. */
  rss: number
  peak: number
  mappings: Mappings
  probe?: ProbeReport
}

/** The breakdown of `server` now: by mapping always, V8's side when it was started by startProbedServe. */
export async function memoryBreakdown(server: RunningServer): Promise<MemoryBreakdown> {
  const probe = await readProbe(server)
  return { rss: rssOf(server.pid), peak: rssOf(server.pid, 'VmHWM'), mappings: readMappings(server.pid), ...(probe === undefined ? {} : { probe }) }
}

const mb = (bytes: number) => (bytes / MB).toFixed(1)

/** The breakdown in a few lines, in MB. */
export function formatBreakdown(title: string, b: MemoryBreakdown): string {
  const m = b.mappings
  const lines = [
    `${title}: RSS ${mb(b.rss)} MB (peak so far ${mb(b.peak)})`,
    `  by mapping: node binary ${mb(m.binary)}, libraries and addons ${mb(m.libraries)}, malloc heap ${mb(m.mallocHeap)}, anonymous ${mb(m.anonymous)}, other ${mb(m.other)}`,
  ]
  const p = b.probe
  if (p !== undefined) {
    const space = (name: string) => p.spaces.find((s) => s.space_name === name)
    const spaces = ['new_space', 'old_space', 'code_space', 'large_object_space', 'new_large_object_space']
      .map((name) => ({ name: name.replace('_space', '').replace(/_/g, ' '), s: space(name) }))
      .filter(({ s }) => s !== undefined && s.physical_space_size > 0)
      .map(({ name, s }) => `${name} ${mb(s?.space_used_size ?? 0)}/${mb(s?.physical_space_size ?? 0)}`)
    lines.push(
      `  V8 heap: used ${mb(p.heap.used_heap_size)} of ${mb(p.heap.total_physical_size)} resident (used/resident by space: ${spaces.join(', ')});` +
        ` anonymous besides V8's heap (other threads' malloc arenas, stacks) ${mb(m.anonymous - p.heap.total_physical_size)}`,
      `  external ${mb(p.usage.external)} (array buffers ${mb(p.usage.arrayBuffers)}); code ${mb(p.code.code_and_metadata_size)}, bytecode ${mb(p.code.bytecode_and_metadata_size)};` +
        ` CommonJS modules loaded ${p.commonJsModules}` +
        (p.liveAfterFullGc === undefined ? '' : `; live after a full GC ${mb(p.liveAfterFullGc)}`),
    )
  }
  return lines.join('\n')
}

// --- npm run bench:memory

const graphql = (query: string, variables?: Record<string, unknown>): Load => ({ path: '/graphql', ...graphqlRequest(query, variables) })

/** The loads of npm run bench that Threadline's memory follows: one resource, a page, GraphQL flat and nested, a write (as user 1). */
const loads = (token: string): Record<string, Load> => ({
  'GET one user': { path: '/api/v1/users/1' },
  'GET page of 20, v1': { path: '/api/v1/users?role=user&sort=name&limit=20' },
  'GraphQL user(id)': graphql('query($id: ID!) { user(id: $id) { id name email } }', { id: '1' }),
  'GraphQL users { posts }': graphql('{ users { id name posts { id title } } }'),
  'POST create (a post)': {
    path: '/api/v1/users/1/posts',
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Benchmark', content: 'Written by bench/memory.ts, many times over.' }),
    status: 201,
  },
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      'idle-seconds': { type: 'string', default: '30' },
      seconds: { type: 'string', default: '5' },
      connections: { type: 'string', default: '50' },
      data: { type: 'string', default: join('bench', '.data', 'suite-10000-100000.db') },
      'node-options': { type: 'string', default: '' },
      env: { type: 'string', multiple: true, default: [] },
      'idle-only': { type: 'boolean', default: false },
    },
  })
  const nodeOptions = args['node-options'].split(' ').filter((option) => option !== '')
  const extraEnv = Object.fromEntries(args.env.map((pair) => pair.split('=', 2) as [string, string]))
  build()
  const pinned = pinServersApart()
  const dir = mkdtempSync(join(tmpdir(), 'threadline-memory-'))
  const demo = join(dir, 'demo.db')
  threadline(['migrate'], { DATABASE_URL: `sqlite:${demo}` })
  threadline(['seed'], { DATABASE_URL: `sqlite:${demo}` })
  const loaded = join(dir, 'loaded.db')
  copyFileSync(existsSync(args.data) ? args.data : demo, loaded)
  const servers: RunningServer[] = []
  try {
    const idle = await startProbedServe({ ...extraEnv, DATABASE_URL: `sqlite:${demo}` }, nodeOptions)
    servers.push(idle)
    await sleep(2000)
    const afterStart = await memoryBreakdown(idle)
    console.log(formatBreakdown('npm start on the demo data, 2 s after it listens', afterStart))
    await sleep(Number(args['idle-seconds']) * 1000 - 2000)
    const settled = await memoryBreakdown(idle)
    console.log(formatBreakdown(`the same, ${args['idle-seconds']} s after it listens`, settled))
    await idle.stop()
    if (args['idle-only']) return

    const token = threadline(['tokens', 'create', '--user', '1'], { DATABASE_URL: `sqlite:${loaded}` }).trim()
    const server = await startProbedServe(
      { ...extraEnv, DATABASE_URL: `sqlite:${loaded}`, RATE_LIMIT_MAX: '1000000000', RATE_LIMIT_AUTHENTICATED_MAX: '1000000000' },
      nodeOptions,
    )
    servers.push(server)
    const beforeLoad = await memoryBreakdown(server)
    const throughput: Record<string, number> = {}
    const peaks: Record<string, number> = {}
    for (const [name, load] of Object.entries(loads(token))) {
      // A warm-up second first, as npm run bench does: a server that has not yet run a load compiles
      // as it answers, and while its loop is that far behind it sheds a caller it has not measured (503).
      await measure(server.url, load, { connections: Number(args.connections), seconds: 1 })
      const round = await measure(server.url, load, { connections: Number(args.connections), seconds: Number(args.seconds), pid: server.pid })
      if (round.errors > 0) throw new Error(`${name}: ${round.errors} errors: ${round.failed}`)
      throughput[name] = Math.round(round.requestsPerSecond)
      peaks[name] = rssOf(server.pid, 'VmHWM')
      console.log(`${name}: ${throughput[name]} req/s (indicative), peak RSS so far ${mb(peaks[name])} MB`)
    }
    const afterLoad = await memoryBreakdown(server)
    console.log(formatBreakdown(`After the loads (${existsSync(args.data) ? args.data : 'the demo data'})`, afterLoad))
    mkdirSync(join('bench', 'results'), { recursive: true })
    writeFileSync(
      join('bench', 'results', 'memory.json'),
      `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), pinned, args, afterStart, settled, beforeLoad, throughput, peaks, afterLoad }, null, 2)}\n`,
    )
    console.log('written to bench/results/memory.json')
  } finally {
    await Promise.all(servers.map((s) => s.stop()))
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main()
