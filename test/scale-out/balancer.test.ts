// Runs once, on SQLite: deploy/balancer.js forwards bytes and never reads the store.
// The load balancer in node (deploy/balancer.js) that deploy/run-local.sh puts in front of the
// instances when nginx is not installed: run as a newcomer runs it, a node process, in front of
// two instances of the app. Each instance has a database of its own here, so an answer says which
// instance gave it.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { createClient } from 'graphql-ws'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { type Listening, listening } from '../helpers/subscription-clients.js'

const BALANCER = fileURLToPath(new URL('../../deploy/balancer.js', import.meta.url))

interface Balancer {
  url: string
  /** What it printed: one line per answer, naming the instance. */
  output: () => string
  stop: () => Promise<void>
}

const started: Balancer[] = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((balancer) => balancer.stop()))
})

/** `node deploy/balancer.js 0 <instances>`; resolves once it says where it listens. */
async function startBalancer(instances: readonly string[]): Promise<Balancer> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [BALANCER, '0', ...instances.map((url) => new URL(url).host)])
  let output = ''
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = /balancer listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match?.[1]) resolve(match[1])
    })
    void exited.then(() => reject(new Error(`the balancer exited: ${output}`)))
  })
  const balancer = {
    url,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM')
      await exited
    },
  }
  started.push(balancer)
  return balancer
}

/** An address where nothing listens (a port just let go). */
async function closedAddress(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return `http://127.0.0.1:${port}`
}

describe('the balancer in node', () => {
  let a: Listening
  let b: Listening
  beforeAll(async () => {
    ;[a, b] = await Promise.all([listening(), listening()])
    await a.t.createUser({ name: 'Only On A', email: 'only-on-a@example.com' })
  })
  afterAll(async () => {
    await Promise.all([a?.t.close(), b?.t.close()])
  })

  const countOnlyOnA = async (base: string) => {
    const res = await fetch(`${base}/api/v1/users?name=Only%20On%20A`)
    expect(res.status).toBe(200)
    return ((await res.json()) as { data: unknown[] }).data.length
  }

  it('answers from both instances in turn, a write with its body too', async () => {
    const balancer = await startBalancer([a.http, b.http])
    const counts = [await countOnlyOnA(balancer.url), await countOnlyOnA(balancer.url), await countOnlyOnA(balancer.url), await countOnlyOnA(balancer.url)]
    expect(counts.toSorted()).toEqual([0, 0, 1, 1])
    expect(counts[0]).not.toBe(counts[1])
    const lines = balancer
      .output()
      .split('\n')
      .filter((line) => line.startsWith('GET '))
    expect(new Set(lines.map((line) => / upstream=(\S+)$/.exec(line)?.[1]))).toEqual(new Set([new URL(a.http).host, new URL(b.http).host]))
    // A write with its body: two in a row reach one instance each, and only A knows the token.
    const patch = () =>
      fetch(`${balancer.url}/api/v1/users/${a.t.bob.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${a.t.tokens.bob}`, 'content-type': 'application/json' },
        body: JSON.stringify({ age: 41 }),
      })
    const writes = [await patch(), await patch()]
    expect(writes.map((res) => res.status).toSorted()).toEqual([200, 401])
    const written = writes.find((res) => res.status === 200)
    expect(((await written?.json()) as { data: { age: number } }).data.age).toBe(41)
  })

  it('carries a WebSocket through to an instance: a graphql-ws client subscribes and is answered', async () => {
    const balancer = await startBalancer([a.http, b.http])
    const client = createClient({ url: `${balancer.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 })
    try {
      const result = await new Promise<unknown>((resolve, reject) => {
        client.subscribe({ query: '{ users(limit: 1) { id } }' }, { next: resolve, error: reject, complete: () => undefined })
      })
      expect(result).toEqual({ data: { users: [{ id: expect.any(String) }] } })
    } finally {
      await client.dispose()
    }
    expect(balancer.output()).toMatch(/^GET \/graphql upgrade upstream=127\.0\.0\.1:\d+$/m)
  })

  it('sends every request to the instance that answers when the other refuses connections', async () => {
    const balancer = await startBalancer([await closedAddress(), a.http])
    const counts = [await countOnlyOnA(balancer.url), await countOnlyOnA(balancer.url), await countOnlyOnA(balancer.url)]
    expect(counts).toEqual([1, 1, 1])
  })

  it("answers 503 with Retry-After in the service's error shape when no instance is reachable", async () => {
    const balancer = await startBalancer([await closedAddress()])
    const rest = await fetch(`${balancer.url}/api/v1/users`)
    expect(rest.status).toBe(503)
    expect(rest.headers.get('retry-after')).toBe('1')
    expect(await rest.json()).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message: 'No instance of the service is reachable; try again shortly' } })
    const graphql = await fetch(`${balancer.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query": "{ users { id } }"}',
    })
    expect(graphql.status).toBe(503)
    expect(await graphql.json()).toEqual({
      errors: [{ message: 'No instance of the service is reachable; try again shortly', extensions: { code: 'SERVICE_UNAVAILABLE' } }],
    })
  })
})
