// The flags that stand for environment variables (serve's --port and --host, every command's
// --db): they win over the variables, --help names the variable of each, and a bad value is
// refused as its variable would be, naming the flag. Real `threadline` processes (dist/main.js).
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, startServe } from '../helpers/serve-process.js'
import { freshDatabase, SECOND_STORE_RUN, type TestDatabase } from '../helpers/test-store.js'

const run = promisify(execFile)
/** Run from a folder of its own, where relative sqlite: paths land. */
const bin = resolve(BIN)

let store: TestDatabase
let folder: string
beforeAll(async () => {
  store = await freshDatabase()
  folder = await mkdtemp(join(tmpdir(), 'threadline-flags-'))
})
afterAll(async () => {
  await store.drop()
  await rm(folder, { recursive: true, force: true })
})

function threadline(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH, ...env }, cwd: folder })
}

async function refused(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  try {
    await threadline(args, env)
  } catch (error) {
    const { code, stderr } = error as { code: number; stderr: string }
    return { code, stderr }
  }
  throw new Error(`threadline ${args.join(' ')} succeeded`)
}

describe('threadline flags', () => {
  it('serve --port, --host and --db win over PORT, HOST and DATABASE_URL', async () => {
    // Each variable is one the server could not start with: only the flags can make it serve.
    const env = { PORT: '70000', HOST: '203.0.113.1', DATABASE_URL: `sqlite:${join(folder, 'missing', 'dir', 'never.db')}`, SEED_DEMO_DATA: 'false' }
    const server = await startServe(env, ['--port', '0', '--host', '127.0.0.1', '--db', store.url])
    try {
      const created = await fetch(`${server.address}/api/v1/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Flag', email: 'flag@example.com' }),
      })
      // Anonymous writes may be refused, but the answer comes from this server on the flags' database.
      expect([201, 401, 403]).toContain(created.status)
      const page = await fetch(`${server.address}/api/v1/users?limit=1`)
      expect(page.status).toBe(200)
    } finally {
      expect(await server.stop()).toBe(0)
    }
    expect(existsSync(join(folder, 'missing'))).toBe(false)
  })

  // The rest never touch the run's store (SQLite files of their own, refusals, --help).
  it.skipIf(SECOND_STORE_RUN)('--db works for the other commands, before or after the command', async () => {
    const env = { DATABASE_URL: 'sqlite:from-env.db' }
    expect((await threadline(['migrate', '--db', 'sqlite:after.db'], env)).stdout).toMatch(/^Applied: 0001-initial/)
    expect((await threadline(['--db', 'sqlite:before.db', 'migrate'], env)).stdout).toMatch(/^Applied: 0001-initial/)
    expect(existsSync(join(folder, 'after.db'))).toBe(true)
    expect(existsSync(join(folder, 'before.db'))).toBe(true)
    expect(existsSync(join(folder, 'from-env.db'))).toBe(false)
  })

  it.skipIf(SECOND_STORE_RUN)('--help lists each flag with the variable it stands for', async () => {
    const serve = (await threadline(['serve', '--help'])).stdout.replace(/\s+/g, ' ')
    expect(serve).toContain('--port <n> port to listen on, 0 for any free one (env PORT, default 3000)')
    expect(serve).toContain('--host <address> interface to listen on, 0.0.0.0 for all (env HOST, default 127.0.0.1)')
    expect(serve).toContain('(env DATABASE_URL, default sqlite:data/threadline.db)')
    for (const command of [[], ['migrate'], ['seed'], ['users', 'create'], ['tokens', 'create']]) {
      expect((await threadline([...command, '--help'])).stdout.replace(/\s+/g, ' ')).toMatch(/--db <url> .*\(env DATABASE_URL,/)
    }
  })

  it.skipIf(SECOND_STORE_RUN).each([
    [['serve', '--port', 'abc'], 'threadline: --port: expected an integer from 0 to 65535, got "abc"'],
    [['serve', '--port', '65536'], 'threadline: --port: expected an integer from 0 to 65535, got "65536"'],
    [['migrate', '--db', 'mysql://localhost/x'], 'threadline: --db: '],
    [['serve', '--db', 'mysql://localhost/x'], 'threadline: --db: '],
  ])('refuses %j with exit 1 and a message naming the flag', async (args, message) => {
    const { code, stderr } = await refused(args, { SEED_DEMO_DATA: 'false' })
    expect(code).toBe(1)
    expect(stderr).toContain(message)
    expect(stderr).not.toMatch(/at .*\.js:\d+/) // a message, not a stack
  })

  it.skipIf(SECOND_STORE_RUN)('still names the variable when the environment is at fault and no flag is given', async () => {
    const { code, stderr } = await refused(['serve'], { PORT: 'abc' })
    expect(code).toBe(1)
    expect(stderr).toContain('threadline: Invalid environment variable PORT: expected an integer from 0 to 65535, got "abc"')
  })
})
