// The `threadline` command, run as a child process exactly as a user runs it (dist/main.js, brought
// up to date by the dist helper), on a temporary database.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import WebSocket from 'ws'
import { BIN, type ServeProcess, startServe } from '../helpers/serve-process.js'
import { freshDatabase, SECOND_STORE_RUN, type TestDatabase } from '../helpers/test-store.js'
import { until } from '../helpers/until.js'
import { listed } from '../../src/cli/words.js'
import { DEMO_COUNTS } from '../../src/seed/seed-database.js'
import { MIGRATION_NAMES } from '../../src/db/migrate.js'

const run = promisify(execFile)

let url: string
let store: TestDatabase
beforeAll(async () => {
  store = await freshDatabase()
  url = store.url
})
afterAll(() => store.drop())

function threadline(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, DATABASE_URL: url, ...env } })
}

/** Runs and expects failure; returns what it printed and its exit code. */
async function threadlineFails(args: string[], env: Record<string, string> = {}) {
  try {
    await threadline(args, env)
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string }
    return { code, stdout, stderr }
  }
  throw new Error(`threadline ${args.join(' ')} succeeded`)
}

describe('threadline', () => {
  it.skipIf(SECOND_STORE_RUN)('lists its commands in --help', async () => {
    const { stdout } = await threadline(['--help'])
    for (const command of ['serve', 'migrate', 'seed', 'users', 'tokens']) expect(stdout).toContain(command)
  })

  it.skipIf(SECOND_STORE_RUN).each(['serve', 'migrate', 'seed', 'users create', 'tokens create', 'tokens revoke'])('has --help for %s', async (command) => {
    const { stdout } = await threadline([...command.split(' '), '--help'])
    expect(stdout).toMatch(new RegExp(`^Usage: threadline ${command}`))
  })

  it('migrate applies the schema once, then says it is up to date', async () => {
    expect((await threadline(['migrate'])).stdout).toBe(`Applied: ${MIGRATION_NAMES.join(', ')}\n`)
    expect((await threadline(['migrate'])).stdout).toBe('The database is up to date.\n')
  })

  it.skipIf(SECOND_STORE_RUN)('users create prints the new user as JSON', async () => {
    const { stdout } = await threadline([
      'users',
      'create',
      '--name',
      'Root',
      '--email',
      'root@example.com',
      '--role',
      'admin',
      '--password',
      'a long password',
    ])
    const user = JSON.parse(stdout)
    expect(user).toMatchObject({ id: 1, name: 'Root', email: 'root@example.com', role: 'admin', age: null })
    expect(stdout).not.toMatch(/password/)
  })

  it.skipIf(SECOND_STORE_RUN)('users create refuses bad input with the reasons, and a taken e-mail', async () => {
    const bad = await threadlineFails(['users', 'create', '--name', 'X', '--email', 'nope', '--role', 'god'])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('email: must be a valid e-mail address')
    expect(bad.stderr).toContain('role: must be one of: user, admin')
    const taken = await threadlineFails(['users', 'create', '--name', 'Again', '--email', 'ROOT@example.com'])
    expect(taken.stderr).toMatch(/already exists/)
  })

  it.skipIf(SECOND_STORE_RUN)('tokens create prints the token alone, and the API accepts it', async () => {
    const { stdout } = await threadline(['tokens', 'create', '--user', 'root@example.com', '--ttl', '1h'])
    expect(stdout).toMatch(/^tl_[A-Za-z0-9_-]{43}\n$/)
    const token = stdout.trim()
    const app = await buildApp(loadConfig({ HTTP_SHED_LOOP_DELAY_MS: '0', DATABASE_URL: url, LOG_LEVEL: 'silent' }))
    try {
      const res = await app.inject({
        method: 'POST',
        url: '/users',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: { name: 'Made With CLI Token', email: 'cli@example.com' },
      })
      expect(res.statusCode).toBe(201)
    } finally {
      await app.close()
    }
  })

  it.skipIf(SECOND_STORE_RUN)('tokens create --scope read makes a token that reads and is refused writes', async () => {
    const token = (await threadline(['tokens', 'create', '--user', 'root@example.com', '--scope', 'read'])).stdout.trim()
    const app = await buildApp(loadConfig({ HTTP_SHED_LOOP_DELAY_MS: '0', DATABASE_URL: url, LOG_LEVEL: 'silent' }))
    try {
      const read = await app.inject({ method: 'GET', url: '/users', headers: { authorization: `Bearer ${token}` } })
      expect(read.statusCode).toBe(200)
      expect(read.headers['x-oauth-scopes']).toBe('read')
      const write = await app.inject({
        method: 'POST',
        url: '/users',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: { name: 'Not Made', email: 'not-made@example.com' },
      })
      expect(write.statusCode).toBe(403)
    } finally {
      await app.close()
    }
    expect((await threadlineFails(['tokens', 'create', '--user', '1', '--scope', 'admin'])).stderr).toMatch(/read, write/)
  })

  it.skipIf(SECOND_STORE_RUN)('tokens create takes a user id too, and refuses an unknown user or a bad --ttl', async () => {
    expect((await threadline(['tokens', 'create', '--user', '1'])).stdout).toMatch(/^tl_/)
    expect((await threadlineFails(['tokens', 'create', '--user', 'ghost@example.com'])).stderr).toMatch(/not found/)
    expect((await threadlineFails(['tokens', 'create', '--user', '1', '--ttl', 'forever'])).stderr).toMatch(/duration/)
  })

  it.skipIf(SECOND_STORE_RUN)('tokens revoke makes a token useless, and says when there is nothing to revoke', async () => {
    const token = (await threadline(['tokens', 'create', '--user', '1'])).stdout.trim()
    await threadline(['tokens', 'revoke', token])
    const app = await buildApp(loadConfig({ HTTP_SHED_LOOP_DELAY_MS: '0', DATABASE_URL: url, LOG_LEVEL: 'silent' }))
    try {
      const res = await app.inject({ method: 'GET', url: '/users', headers: { authorization: `Bearer ${token}` } })
      expect(res.statusCode).toBe(401)
    } finally {
      await app.close()
    }
    expect((await threadlineFails(['tokens', 'revoke', token])).code).toBe(1)
  })

  it.skipIf(SECOND_STORE_RUN)('seed adds the numbers asked for and reports them', async () => {
    // Every resource the seed makes (DEMO_COUNTS names them), 30, 60, 90 … of each.
    const asked = Object.keys(DEMO_COUNTS).map((name, i) => [name, 30 * (i + 1)] as const)
    const { stdout } = await threadline(['seed', ...asked.flatMap(([name, n]) => [`--${name}`, String(n)]), '--batch-size', '7'])
    expect(stdout).toMatch(new RegExp(`^Seeded ${listed(asked.map(([name, n]) => `${n} ${name}`))} in [\\d.]+ s\\.\\n$`))
    expect((await threadlineFails(['seed', '--users', 'many'])).stderr).toMatch(/whole number/)
    expect((await threadlineFails(['seed', '--batch-size', '5000'])).stderr).toMatch(/from 1 to 4000/)
    // One user, five comments asked for, nothing else: no post to comment on.
    const onlyComments = Object.keys(DEMO_COUNTS).flatMap((name) => [`--${name}`, name === 'users' ? '1' : name === 'comments' ? '5' : '0'])
    const nothingToComment = await threadlineFails(['seed', ...onlyComments])
    expect(nothingToComment.stderr).toBe('threadline: There are no new posts to comment on\n')
  })

  it.skipIf(SECOND_STORE_RUN)('names the bad environment variable and exits 1', async () => {
    const { code, stderr } = await threadlineFails(['migrate'], { PORT: 'eighty' })
    expect(code).toBe(1)
    expect(stderr).toBe('threadline: Invalid environment variable PORT: expected an integer from 0 to 65535, got "eighty"\n')
  })
})

describe('threadline serve on a new database', () => {
  let fresh: TestDatabase
  beforeAll(async () => {
    fresh = await freshDatabase()
  })
  afterAll(() => fresh.drop())

  it('migrates, fills a new database with demo data, logs its URL, serves, and stops on SIGTERM', async () => {
    const { child, address, output } = await startServe({ DATABASE_URL: fresh.url })
    try {
      const res = await fetch(`${address}/api/v1/users?limit=100`)
      expect(res.status).toBe(200)
      const body = (await res.json()) as { data: { name: string }[]; meta: { pagination: { total: number } } }
      expect(body.meta.pagination.total).toBe(10)
      expect(body.data[0]?.name).toBe('Leanne Graham')
      expect(
        output()
          .split('\n')
          .filter((line) => line.includes('listening on')),
      ).toHaveLength(1)

      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
    }
  })

  // The database the first start filled and stopped.
  it('does not fill a database again on the next start', async () => {
    const second = await startServe({ DATABASE_URL: fresh.url })
    try {
      const body = (await (await fetch(`${second.address}/users`)).json()) as { meta: { pagination: { total: number } } }
      expect(body.meta.pagination.total).toBe(10)
    } finally {
      second.child.kill('SIGKILL')
    }
  })
})

describe('threadline serve', () => {
  it.skipIf(SECOND_STORE_RUN)("on SIGTERM, delivers what was acknowledged, closes subscribers' WebSockets with 1001 and exits 0", async () => {
    const fresh = await freshDatabase()
    const { child, address } = await startServe({ DATABASE_URL: fresh.url, GRAPHQL_MAX_CONNECTIONS_PER_CALLER: '100' })
    try {
      const token = (await threadline(['tokens', 'create', '--user', '2'], { DATABASE_URL: fresh.url })).stdout.trim()
      const subscribers = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const socket = new WebSocket(`${address.replace('http', 'ws')}/graphql`, 'graphql-transport-ws')
          const contents: string[] = []
          let acknowledged = false
          socket.on('message', (data: Buffer) => {
            const message = JSON.parse(data.toString()) as { type: string; payload?: { data: { commentAdded: { content: string } } } }
            if (message.type === 'connection_ack') acknowledged = true
            if (message.type === 'next' && message.payload) contents.push(message.payload.data.commentAdded.content)
          })
          const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)))
          await new Promise((resolve) => socket.on('open', resolve))
          socket.send(JSON.stringify({ type: 'connection_init' }))
          // The protocol closes a socket that subscribes before its connection_ack (4401).
          await until(() => acknowledged, 15_000)
          socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { commentAdded { content } }' } }))
          return { contents, closed }
        }),
      )
      const comment = (content: string) =>
        fetch(`${address}/api/v1/users/1/posts/1/comments`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ content }),
        })
      // A subscribe has no acknowledgement: comment until every subscriber has heard one.
      while (subscribers.some((s) => s.contents.length === 0)) {
        expect((await comment('warm-up')).status).toBe(201)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      // The signal follows the 201 at once, while the deliveries to 50 sockets may be on their way.
      expect((await comment('last words')).status).toBe(201)
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
      child.kill('SIGTERM')
      for (const subscriber of subscribers) {
        expect(await subscriber.closed).toBe(1001)
        expect(subscriber.contents.at(-1)).toBe('last words')
      }
      expect(await exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
      await fresh.drop()
    }
  })

  it.skipIf(SECOND_STORE_RUN)('keeps a new database empty with SEED_DEMO_DATA=false', async () => {
    const fresh = await freshDatabase()
    const { child, address } = await startServe({ DATABASE_URL: fresh.url, SEED_DEMO_DATA: 'false' })
    try {
      const body = (await (await fetch(`${address}/users`)).json()) as { meta: { pagination: { total: number } } }
      expect(body.meta.pagination.total).toBe(0)
    } finally {
      child.kill('SIGKILL')
      await fresh.drop()
    }
  })
})

// One server for both: neither touches the run's store.
describe.skipIf(SECOND_STORE_RUN)('threadline serve on a throwaway in-memory database, given the retired per-caller settings', () => {
  let served: ServeProcess
  beforeAll(async () => {
    served = await startServe({ DATABASE_URL: 'sqlite::memory:', HTTP_MAX_IN_FLIGHT_PER_CALLER: '2', HTTP_MAX_BUSY_PERCENT_PER_CALLER: '50' })
  })
  afterAll(() => served?.child.kill('SIGKILL'))

  it('starts with the retired per-caller settings, naming them in a warning, and serves', async () => {
    expect((await fetch(`${served.address}/api/v1/users/1`)).status).toBe(200)
    const warning = served
      .output()
      .split('\n')
      .find((line) => line.includes('retired settings ignored'))
    expect(warning).toBeDefined()
    expect(JSON.parse(warning!)).toMatchObject({ level: 40, variables: ['HTTP_MAX_IN_FLIGHT_PER_CALLER', 'HTTP_MAX_BUSY_PERCENT_PER_CALLER'] })
  })

  it('serves a throwaway in-memory database, filled with the demo', async () => {
    const body = (await (await fetch(`${served.address}/users`)).json()) as { meta: { pagination: { total: number } } }
    expect(body.meta.pagination.total).toBe(10)
  })
})
