// Import reads its file twice, and writes only what it checked: a FIFO or a pipe, which give their
// bytes once, are read once (copied aside); a file that changes between the passes writes nothing.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { importFile } from '../../src/cli/import-data.js'
import { openDatabase } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { BIN } from '../helpers/serve-process.js'
import { freshDatabase, SECOND_STORE_RUN, type TestDatabase } from '../helpers/test-store.js'
import { dataFiles, readers, threadline } from './import-fixture.js'

const fileOf = dataFiles('threadline-import-streams-')
const good = { users: [{ id: 1, name: 'Good', email: 'good@example.com' }] }
/** What the attacker served the second time: an empty name, a bad e-mail, a NUL and U+202E, a post. */
const bad = {
  users: [
    { id: 1, name: '', email: 'not-an-email' },
    { id: 2, name: 'x\u0000\u202E', email: 'two@example.com' },
  ],
  posts: [{ id: 1, userId: 2, title: 'T', body: 'B' }],
}

/** A command started as a child process, its output gathered. */
function start(command: string, args: string[], url: string) {
  const child = spawn(command, args, { env: { PATH: process.env.PATH, DATABASE_URL: url }, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }))
  return { child, exited, stdout: () => stdout }
}

/** A process that opens `fifo` for writing (waiting for a reader) and writes `file` to it. */
const serve = (file: string, fifo: string): ChildProcess => spawn('sh', ['-c', 'cat "$0" > "$1"', file, fifo], { stdio: 'ignore' })

let db: TestDatabase
let dir: string
beforeAll(async () => {
  db = await freshDatabase()
  dir = mkdtempSync(join(tmpdir(), 'threadline-fifo-'))
})
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  await db.drop()
})
// Registered after the drop, so closed before it (after-hooks run in reverse order).
const { get } = readers()

const users = async () => (await get(db.url, '/api/v1/users?limit=100')).data.map((u: { id: number; name: string; email: string }) => [u.id, u.name, u.email])

describe('threadline import of what can be read only once', { timeout: 120_000 }, () => {
  it.skipIf(SECOND_STORE_RUN)('reads a FIFO once: served a good file and then a bad one, it writes the good one and nothing of the bad', async () => {
    const fifo = join(dir, 'db.fifo')
    execFileSync('mkfifo', [fifo])
    const goodFile = fileOf('good.json', good)
    const badFile = fileOf('bad.json', bad)
    const first = serve(goodFile, fifo)
    const running = start(process.execPath, [BIN, 'import', fifo], db.url)
    let second: ChildProcess | undefined
    // The bad file is served once the first read is over (its check has ended), to a second reader.
    running.child.stdout.on('data', () => {
      if (second === undefined && /^checking 100%/m.test(running.stdout())) second = serve(badFile, fifo)
    })
    try {
      const { code, stdout, stderr } = await running.exited
      expect(stderr).toBe('')
      expect(code).toBe(0)
      expect(stdout).toMatch(/Imported 1 user, 0 posts, 0 comments and 0 todos/)
      expect(await users()).toEqual([[1, 'Good', 'good@example.com']])
      expect((await get(db.url, '/api/v1/users/2')).error.code).toBe('NOT_FOUND')
    } finally {
      // Never read, the second writer waits for a reader; it is this test's to end.
      first.kill()
      second?.kill()
    }
  })

  // Both are given the file on their standard input; the shell's `cat` hands it on through a pipe.
  it.skipIf(SECOND_STORE_RUN).each([
    ['a pipe from the shell', 'sh', ['-c', 'cat | "$0" "$1" import --replace /dev/stdin', process.execPath, BIN]],
    ["a Node parent's pipe (a socket)", process.execPath, [BIN, 'import', '--replace', '/dev/stdin']],
  ])('reads %s: cat export.json | threadline import --replace /dev/stdin', async (how, program, args) => {
    const exported = fileOf('export.json', '')
    await threadline(db.url, ['export', '--output', exported])
    const text = readFileSync(exported, 'utf8').replace(/"name":"[^"]*"/, `"name":"Read from ${how}"`)
    const running = start(program, args, db.url)
    running.child.stdin.end(text)
    const { code, stdout, stderr } = await running.exited
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toMatch(/Imported 1 user, 0 posts, 0 comments and 0 todos/)
    expect(await users()).toEqual([[1, `Read from ${how}`, 'good@example.com']])
  })
})

describe('importFile', { timeout: 60_000 }, () => {
  it('checks every row again as it writes it: a file changed after its check writes nothing and says what changed', async () => {
    const database = openDatabase(loadConfig({ DATABASE_URL: db.url }).database)
    try {
      await migrateToLatest(database)
      const before = await users()
      const file = fileOf('changing.json', { users: [{ id: 5, name: 'Five', email: 'five@example.com' }] })
      // The seam: the check's progress reaching the end of the file is when it is rewritten.
      const progress = {
        update(phase: string, read: number, total: number) {
          if (phase === 'checking' && read === total) writeFileSync(file, JSON.stringify({ users: [{ id: 5, name: '', email: 'five@example.com' }] }))
        },
        done() {},
      }
      await expect(importFile(database.db, file, { replace: false, progress })).rejects.toThrow(
        /changing\.json changed while it was read \(users\[0\]\.name: must not be empty\); nothing was imported/,
      )
      expect(await users()).toEqual(before)
    } finally {
      await database.close()
    }
  })
})
