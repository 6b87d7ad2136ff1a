// Slow clients against a real `threadline serve` with its default limits: slowhttptest (Debian's
// package) holds --sockets slow-header sockets (slowloris) and as many slow-body ones (R-U-Dead-Yet,
// POSTs whose body trickles in) while an ordinary client sends one request after another. Prints, for
// each attack, the second by which the server had closed every socket (from slowhttptest's own CSV),
// and the ordinary client's p50/p99 during the attack; fails if a socket outlives --cut-within
// seconds or the p99 passes --p99-ms.
//
//   npm run bench:slow-clients [-- --sockets 200 --seconds 30 --cut-within 15 --p99-ms 100]
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { build, machine, requireCommand, startServe, stats } from './lib.js'

const { values: args } = parseArgs({
  options: {
    sockets: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '30' },
    'cut-within': { type: 'string', default: '15' },
    'p99-ms': { type: 'string', default: '100' },
  },
})

const DATA = join('bench', '.data')

interface Attack {
  mode: '-H' | '-B'
  name: string
  url: string
}

/** slowhttptest's CSV: per second, sockets closed, pending, connected. */
function readCsv(file: string): { second: number; closed: number; pending: number; connected: number }[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [second = 0, closed = 0, pending = 0, connected = 0] = line.split(',').map(Number)
      return { second, closed, pending, connected }
    })
}

function runAttack(attack: Attack, prefix: string): Promise<void> {
  const child = spawn(
    'slowhttptest',
    // -c sockets at -r per second, a follow-up every -i s, at most -l s; -s: a body's announced length.
    [
      attack.mode,
      '-c',
      args.sockets,
      '-r',
      args.sockets,
      '-i',
      '2',
      '-l',
      args.seconds,
      '-s',
      '100000',
      '-f',
      'application/json',
      '-u',
      attack.url,
      '-g',
      '-o',
      prefix,
      '-p',
      '3',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  )
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('exit', () => resolve())
  })
}

async function main(): Promise<void> {
  requireCommand('slowhttptest')
  build()
  mkdirSync(DATA, { recursive: true })
  const db = join(DATA, 'slow-clients.db')
  for (const part of ['', '-wal', '-shm']) rmSync(`${db}${part}`, { force: true })
  // Production defaults for every limit; the demo data to read; the limiter out of the way of the ordinary client.
  const server = await startServe({ DATABASE_URL: `sqlite:${db}`, SEED_DEMO_DATA: 'true', RATE_LIMIT_MAX: '1000000000' })
  const attacks: Attack[] = [
    { mode: '-H', name: 'slow headers', url: `${server.url}/api/v1/users` },
    // A route that reads its body before anything else can answer (a signed-in route would answer 401 first).
    { mode: '-B', name: 'slow bodies', url: `${server.url}/api/v1/tokens` },
  ]
  const pool = new Pool(server.url, { connections: 1 })
  const latencies: number[] = []
  let failures = 0
  let attacking = true
  const ordinary = (async () => {
    while (attacking) {
      const started = performance.now()
      try {
        const response = await pool.request({ method: 'GET', path: '/api/v1/users/1' })
        await response.body.arrayBuffer()
        if (response.statusCode !== 200) failures++
      } catch {
        failures++
      }
      latencies.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  const prefixes = attacks.map((attack) => join(DATA, `slow-clients-${attack.mode.slice(1)}`))
  try {
    console.log(`${args.sockets} slow-header and ${args.sockets} slow-body sockets for up to ${args.seconds} s, against ${server.url} ...`)
    await Promise.all(attacks.map((attack, i) => runAttack(attack, prefixes[i] ?? '')))
  } finally {
    attacking = false
    await ordinary
    await pool.close()
    await server.stop()
  }

  const cutWithin = Number(args['cut-within'])
  const results = attacks.map((attack, i) => {
    const rows = readCsv(`${prefixes[i]}.csv`)
    const peak = Math.max(...rows.map((r) => r.connected))
    // The first second at which no socket was connected any more, after the peak.
    const peakAt = rows.findIndex((r) => r.connected === peak)
    const allCut = rows.slice(peakAt).find((r) => r.connected === 0 && r.pending === 0)
    // slowhttptest stops when it has no socket left, before writing that second's row.
    const last = rows.at(-1)
    const endedEarly = last !== undefined && last.second < Number(args.seconds) - 1
    return { attack: attack.name, peakConnected: peak, allCutAtSecond: allCut?.second ?? (endedEarly && last ? last.second + 1 : null) }
  })
  const latency = stats(latencies)
  const round = (ms: number) => Math.round(ms * 10) / 10
  for (const r of results) {
    console.log(`${r.attack.padEnd(12)} ${r.peakConnected} sockets held at most; every one cut by second ${r.allCutAtSecond ?? 'never'}`)
  }
  console.log(
    `ordinary client meanwhile: ${latency.n} requests, p50 ${round(latency.p50)} ms, p99 ${round(latency.p99)} ms, max ${round(latency.max)} ms, failures ${failures}`,
  )
  mkdirSync(join('bench', 'results'), { recursive: true })
  writeFileSync(
    join('bench', 'results', 'slow-clients.json'),
    `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), args, results, ordinary: { requests: latency.n, p50: round(latency.p50), p99: round(latency.p99), max: round(latency.max), failures } }, null, 2)}\n`,
  )
  console.log('written to bench/results/slow-clients.json')
  const problems = [
    ...results.filter((r) => r.peakConnected < Number(args.sockets) * 0.9).map((r) => `${r.attack}: only ${r.peakConnected} sockets were ever held`),
    ...results
      .filter((r) => r.allCutAtSecond === null || r.allCutAtSecond > cutWithin)
      .map((r) => `${r.attack}: not every socket was cut within ${cutWithin} s`),
    ...(latency.p99 > Number(args['p99-ms']) ? [`the ordinary client's p99 ${round(latency.p99)} ms is over ${args['p99-ms']} ms`] : []),
    ...(failures > 0 ? [`${failures} ordinary requests failed`] : []),
  ]
  if (problems.length > 0) {
    console.error(problems.join('\n'))
    process.exitCode = 1
  }
}

await main()
