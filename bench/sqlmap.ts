// SQL injection, tried by sqlmap (Debian's package) against a real `threadline serve` on the demo
// data: every query parameter of the users, posts and comments collections (each filter, sort, q,
// fields, page, limit), and two JSON bodies (signing in, creating a post with a token). Level 3,
// risk 2 (level 1, risk 1 for signing in, whose every try costs an scrypt): boolean, error, stacked,
// time-based and UNION techniques, and the User-Agent and Referer headers too. Prints, per target, what sqlmap concluded and the HTTP statuses it met; fails on
// anything found injectable or any 5xx answer.
//
//   npm run bench:sqlmap [-- --level 3 --risk 2]
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { build, machine, requireCommand, startServe, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    level: { type: 'string', default: '3' },
    risk: { type: 'string', default: '2' },
  },
})

const DATA = join('bench', '.data')

interface Target {
  name: string
  url: string
  /** A JSON body: sqlmap tries each of its values. */
  data?: string
  /** Fewer payloads: a sign-in costs an scrypt (~0.1 s), so thousands of them would take many minutes. */
  light?: true
  headers?: string[]
}

interface Outcome {
  target: string
  injectable: string[]
  statuses: Record<string, number>
  tested: string[]
}

/** What sqlmap's console output says: the parameters it tested, what it found, the HTTP error codes it met. */
function readOutcome(target: string, output: string): Outcome {
  // "GET parameter 'q'", "(custom) POST parameter 'JSON title'", "parameter 'User-Agent'"
  const tested = [...output.matchAll(/testing for SQL injection on (?:\(custom\) )?(\S+ parameter '[^']+'|parameter '[^']+')/g)].map((m) => m[1] ?? '')
  const injectable = [
    ...output.matchAll(/((?:\(custom\) )?\S+ parameter '[^']+' is '[^']+' injectable|sqlmap identified the following injection point.*)/g),
  ].map((m) => m[1] ?? '')
  const statuses: Record<string, number> = {}
  const codes = /HTTP error codes detected during run:\n((?:\d{3} \([^)]*\) - \d+ times,? ?\n?)+)/.exec(output)?.[1] ?? ''
  for (const [, code = '', count = '0'] of codes.matchAll(/(\d{3}) \([^)]*\) - (\d+) times/g)) statuses[code] = Number(count)
  return { target, injectable, statuses, tested: [...new Set(tested)] }
}

async function main(): Promise<void> {
  requireCommand('sqlmap')
  build()
  mkdirSync(DATA, { recursive: true })
  const db = join(DATA, 'sqlmap.db')
  const output = join(DATA, 'sqlmap')
  for (const part of ['', '-wal', '-shm']) rmSync(`${db}${part}`, { force: true })
  rmSync(output, { recursive: true, force: true })
  const env = { DATABASE_URL: `sqlite:${db}` }
  // The demo data, and the limiter off: thousands of probes from one address would be 429s, not tests.
  const server = await startServe({ ...env, SEED_DEMO_DATA: 'true', RATE_LIMIT_MAX: '0' })
  const outcomes: Outcome[] = []
  try {
    const token = threadline(['tokens', 'create', '--user', '1'], env).trim()
    const base = `${server.url}/api/v1`
    const targets: Target[] = [
      {
        name: 'GET users',
        url: `${base}/users?id=2&name=Ervin%20Howell&email=ervin.howell@example.com&age=79&role=user&createdAt=2024-01-18T00:00:00.000Z&sort=-age,name&q=erv&fields=id,name&page=1&limit=5`,
      },
      { name: 'GET posts', url: `${base}/users/1/posts?id=1&title=x&status=published&sort=-publishedAt&q=lorem&fields=id,title&page=1&limit=5` },
      { name: 'GET comments', url: `${base}/users/1/posts/1/comments?authorId=2&sort=-createdAt&q=a&fields=id,content&page=1&limit=5` },
      { name: 'POST tokens (JSON)', url: `${base}/tokens`, data: JSON.stringify({ email: 'leanne.graham@example.com', password: 'guess' }), light: true },
      {
        name: 'POST posts (JSON, signed in)',
        url: `${base}/users/1/posts`,
        data: JSON.stringify({ title: 'Probe', content: 'Probing', status: 'draft' }),
        headers: [`Authorization: Bearer ${token}`],
      },
    ]
    for (const target of targets) {
      console.log(`sqlmap: ${target.name} ...`)
      const result = spawnSync(
        'sqlmap',
        [
          '-u',
          target.url,
          ...(target.data === undefined ? [] : ['--data', target.data, '--headers', ['Content-Type: application/json', ...(target.headers ?? [])].join('\n')]),
          ...(target.data === undefined && target.headers !== undefined ? ['--headers', target.headers.join('\n')] : []),
          '--batch',
          '--level',
          target.light ? '1' : args.level,
          '--risk',
          target.light ? '1' : args.risk,
          '--output-dir',
          output,
          '--flush-session',
          // A wrong password is a 401 and a body refused by validation a 422: answers to compare, not reasons to stop.
          '--ignore-code',
          '401,422',
          '--disable-coloring',
        ],
        { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
      )
      outcomes.push(readOutcome(target.name, `${result.stdout}\n${result.stderr}`))
    }
  } finally {
    await server.stop()
  }

  const problems: string[] = []
  for (const o of outcomes) {
    const fives = Object.entries(o.statuses).filter(([code]) => code.startsWith('5'))
    console.log(
      `${o.target.padEnd(30)} tested ${o.tested.length} parameters (${o.tested.map((p) => p.replace(/^.*'(.*)'$/, '$1')).join(', ')});` +
        ` injectable: ${o.injectable.length === 0 ? 'none' : o.injectable.join('; ')}; error statuses: ${JSON.stringify(o.statuses)}`,
    )
    if (o.tested.length === 0) problems.push(`${o.target}: sqlmap tested nothing`)
    if (o.injectable.length > 0) problems.push(`${o.target}: ${o.injectable.join('; ')}`)
    if (fives.length > 0) problems.push(`${o.target}: ${fives.map(([code, n]) => `${n} x ${code}`).join(', ')}`)
  }
  mkdirSync(join('bench', 'results'), { recursive: true })
  writeFileSync(join('bench', 'results', 'sqlmap.json'), `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), args, outcomes }, null, 2)}\n`)
  console.log('written to bench/results/sqlmap.json')
  if (problems.length > 0) {
    console.error(problems.join('\n'))
    process.exitCode = 1
  }
}

await main()
