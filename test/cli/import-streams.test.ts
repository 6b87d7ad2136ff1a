// Import reads its file twice, and writes only what it checked: a FIFO or a pipe, which give their
// bytes once, are read once (copied aside); a stream that starts as no data file does is refused at
// its first bytes, and one past the bound when it passes it; a file that changes between the passes
// writes nothing.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { importFile } from '../../src/cli/import-data.js'
import { openDatabase } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { BIN } from '../helpers/serve-process.js'
import { freshDatabase, SECOND_STORE_RUN, type TestDatabase } from '../helpers/test-store.js'
import { dataFiles, importedCounts, readers, threadline } from './import-fixture.js'

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
function start(command: string, args: string[], url: string, env: Record<string, string> = {}) {
  const child = spawn(command, args, { env: { PATH: process.env.PATH, DATABASE_URL: url, ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
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
      expect(stdout).toMatch(new RegExp(`Imported ${importedCounts('jsonplaceholder', { users: 1 })}`))
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
    expect(stdout).toMatch(new RegExp(`Imported ${importedCounts('threadline', { users: 1 })}`))
    expect(await users()).toEqual([[1, `Read from ${how}`, 'good@example.com']])
  })
})

/**
 * Writes `head`, then bytes of `fill` up to `total` in all, to the command's standard input as fast
 * as it takes them; resolves, once the command has stopped reading, with how many bytes it was given.
 */
function feed(child: ChildProcess, head: string, fill: number, total: number): Promise<number> {
  let given = 0
  async function* bytes() {
    given += head.length
    yield Buffer.from(head)
    const chunk = Buffer.alloc(64 * 1024, fill)
    while (given < total) {
      given += chunk.length
      yield chunk
    }
  }
  // The command closes its end when it refuses: the write that finds it closed ends the feed.
  return pipeline(Readable.from(bytes()), child.stdin!).then(
    () => given,
    () => given,
  )
}

describe('threadline import of a stream that is no data file, or too long', { timeout: 60_000 }, () => {
  /** The commands' temporary folder (TMPDIR), where a copy would be: empty again after each. */
  let spools: string
  beforeAll(() => {
    spools = join(dir, 'tmp')
    mkdirSync(spools)
  })
  const run = (args: string[]) => {
    const running = start(process.execPath, [BIN, 'import', ...args], db.url, { TMPDIR: spools })
    // Not a wait: a command that read on past the first bytes would fill the disk; it is stopped, and the test fails.
    const runaway = setTimeout(() => running.child.kill('SIGKILL'), 20_000)
    void running.exited.finally(() => clearTimeout(runaway))
    return running
  }
  const MB = 2 ** 20

  it.skipIf(SECOND_STORE_RUN)('refuses /dev/zero at its first byte, in the words a file of zeros gets, and leaves no copy', async () => {
    const { code, stderr } = await run(['/dev/zero']).exited
    expect(stderr).toBe('threadline: /dev/zero: not valid JSON at line 1, column 1 (byte 0): expected a value; nothing was imported\n')
    expect(code).toBe(1)
    expect(readdirSync(spools)).toEqual([])
  })

  it.skipIf(SECOND_STORE_RUN)('refuses a stream of zeros on its standard input at once, taking little of it', async () => {
    const running = run(['/dev/stdin'])
    const given = await feed(running.child, '', 0, 64 * MB)
    const { code, stderr } = await running.exited
    expect(stderr).toBe('threadline: /dev/stdin: not valid JSON at line 1, column 1 (byte 0): expected a value; nothing was imported\n')
    expect(code).toBe(1)
    // What it read, and what the pipe and the streams' buffers held when it stopped.
    expect(given).toBeLessThan(4 * MB)
    expect(readdirSync(spools)).toEqual([])
  })

  it.skipIf(SECOND_STORE_RUN)('refuses a stream whose first value is no object as it refuses such a file, without reading on', async () => {
    const running = run(['/dev/stdin'])
    const given = await feed(running.child, '[1, 2', 0x20, 64 * MB)
    const fromStream = await running.exited
    const fromFile = await run([fileOf('array.json', '[1, 2]')]).exited
    expect(fromStream.stderr).toBe(fromFile.stderr.replace(/[^ ]*array\.json/, '/dev/stdin'))
    expect(fromStream.stderr).toMatch(/^threadline: \/dev\/stdin: 1 problem; nothing was imported\n {2}\(top level\): must be an object with users, /)
    expect(fromStream.code).toBe(1)
    expect(given).toBeLessThan(4 * MB)
  })

  it.skipIf(SECOND_STORE_RUN)('refuses a stream that starts as a data file once it passes --max-pipe-mb, and says to save it to a file', async () => {
    const running = run(['--max-pipe-mb', '1', '/dev/stdin'])
    const given = await feed(running.child, '{"users": [', 0x20, 64 * MB)
    const { code, stderr } = await running.exited
    expect(stderr).toBe(
      'threadline: /dev/stdin: more than 1 MiB came through it, the most a pipe, FIFO or device may give (--max-pipe-mb); nothing was imported. Save it to a file and import that (a file is read in place, whatever its size)\n',
    )
    expect(code).toBe(1)
    expect(given).toBeLessThan(4 * MB)
    expect(readdirSync(spools)).toEqual([])
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
