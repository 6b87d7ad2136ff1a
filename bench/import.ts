// npm run bench:import: writes a ~1,000,000-row Threadline file (10,000 users, 400,000 posts,
// 500,000 comments, 90,000 todos), imports it with the real `threadline import` in a child process
// on a fresh SQLite file (and on PostgreSQL when it answers), and prints rows, seconds and the
// child's peak RSS (VmHWM from /proc). The goal: under 300 MB. Runs dist/main.js: npm run build first.
import { spawn } from 'node:child_process'
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import pg from 'pg'

const COUNTS = { users: 10_000, posts: 400_000, comments: 500_000, todos: 90_000 }
const POSTGRES = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const dir = mkdtempSync(join(tmpdir(), 'threadline-bench-import-'))
const file = join(dir, 'data.json')

async function writeFile(): Promise<void> {
  const out = createWriteStream(file)
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain')
  }
  const at = '2026-01-01T00:00:00.000Z'
  await write(`{"threadline":{"version":1,"exportedAt":"${at}"}`)
  const section = async (name: string, count: number, row: (id: number) => object) => {
    await write(`,\n"${name}":[`)
    for (let id = 1; id <= count; id++) await write(`${id === 1 ? '' : ',\n'}${JSON.stringify(row(id))}`)
    await write(']')
  }
  await section('users', COUNTS.users, (id) => ({
    id,
    name: `User ${id}`,
    email: `user${id}@example.com`,
    age: 20 + (id % 50),
    avatar: null,
    role: id === 1 ? 'admin' : 'user',
    passwordHash: null,
    createdAt: at,
    updatedAt: at,
  }))
  await section('posts', COUNTS.posts, (id) => ({
    id,
    userId: 1 + (id % COUNTS.users),
    title: `Post number ${id}`,
    content: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.',
    status: 'published',
    publishedAt: at,
    createdAt: at,
    updatedAt: at,
  }))
  await section('comments', COUNTS.comments, (id) => ({
    id,
    postId: 1 + (id % COUNTS.posts),
    authorId: 1 + ((id * 7) % COUNTS.users),
    content: 'A comment on the post, short.',
    createdAt: at,
    updatedAt: at,
  }))
  await section('todos', COUNTS.todos, (id) => ({
    id,
    userId: 1 + (id % COUNTS.users),
    text: `Todo ${id}`,
    completed: id % 2 === 0,
    createdAt: at,
    updatedAt: at,
  }))
  await write('}\n')
  out.end()
  await once(out, 'finish')
}

/** VmHWM (the kernel's peak RSS) of a process, in kB; undefined once it is gone. */
function peakRssKb(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) : undefined
  } catch {
    return undefined
  }
}

/** The process and its descendants. */
function processTree(pid: number): number[] {
  let children: number[] = []
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number)
  } catch {
    // Gone already.
  }
  return [pid, ...children.flatMap(processTree)]
}

/** Runs the import; samples VmHWM (the kernel's peak RSS) while it runs, the last sample near its end. */
async function runImport(databaseUrl: string): Promise<{ seconds: number; peakMb: number; treeMb: number; output: string }> {
  const started = performance.now()
  const child = spawn(process.execPath, ['dist/main.js', 'import', file], {
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  // The command starts itself again with a bounded heap (cli/bounded-heap.ts) and waits for it:
  // each process of the tree is sampled, the importer's peak and the tree's (the sum of peaks).
  const peaks = new Map<number, number>()
  const sample = setInterval(() => {
    for (const pid of processTree(child.pid as number)) {
      const kb = peakRssKb(pid)
      if (kb !== undefined) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, kb))
    }
  }, 50)
  const [code] = (await once(child, 'exit')) as [number]
  clearInterval(sample)
  if (code !== 0) throw new Error(`threadline import exited with ${code}:\n${output}`)
  const kb = [...peaks.values()]
  return { seconds: (performance.now() - started) / 1000, peakMb: Math.max(0, ...kb) / 1024, treeMb: kb.reduce((a, b) => a + b, 0) / 1024, output }
}

async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('drop database if exists threadline_bench_import')
    await client.query('create database threadline_bench_import')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

const rows = COUNTS.users + COUNTS.posts + COUNTS.comments + COUNTS.todos
try {
  await writeFile()
  console.log(`file: ${rows.toLocaleString('en')} rows, ${(statSync(file).size / 1e6).toFixed(0)} MB`)
  const targets: [string, string][] = [['sqlite', `sqlite:${join(dir, 'bench.db')}`]]
  if (await postgresAnswers()) {
    const url = new URL(POSTGRES)
    url.pathname = '/threadline_bench_import'
    targets.push(['postgres', url.toString()])
  } else console.log('postgres: not answering, skipped')
  for (const [name, url] of targets) {
    const { seconds, peakMb, treeMb, output } = await runImport(url)
    console.log(
      `${name}: ${rows.toLocaleString('en')} rows in ${seconds.toFixed(1)} s, peak RSS of the importing Node ${peakMb.toFixed(0)} MB (goal < 300 MB), of the command with the parent that waits for it ${treeMb.toFixed(0)} MB`,
    )
    console.log(`  ${output.trim().split('\n').at(-1)}`)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
