// Requests that ask to upgrade the connection, over real sockets: only a WebSocket handshake on
// /graphql becomes a session; every other one is answered, with Connection: close, and its socket
// ended, whatever the path, the protocol asked or the answer; a malformed handshake on /graphql is
// refused in the GraphQL error body, with the request id and the security headers.
// Runs once, on SQLite: handshakes over raw sockets; no upgrade reaches the store.
import { afterAll, describe, expect, it } from 'vitest'
import { openRaw } from '../helpers/raw-connection.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

const opened: TestApp[] = []
afterAll(async () => {
  await Promise.all(opened.map((test) => test.close()))
})

async function listening(env: Record<string, string> = {}) {
  const test = await buildTestApp(env)
  opened.push(test)
  await test.app.listen({ port: 0, host: '127.0.0.1' })
  return { app: test.app, port: (test.app.server.address() as { port: number }).port }
}

/** One app on the shipped defaults, for every test that needs no setting of its own. */
let onDefaults: ReturnType<typeof listening> | undefined
const defaults = () => (onDefaults ??= listening())

const KEY = 'dGhlIHNhbXBsZSBub25jZQ=='

/** Sends `request` on a new connection and resolves with what came back once the server has closed the connection. */
async function exchange(port: number, request: string): Promise<string> {
  const connection = await openRaw(port)
  connection.socket.write(request)
  await connection.closed
  return connection.received()
}

const head = (text: string) => text.slice(0, text.indexOf('\r\n\r\n') + 2).toLowerCase()
const body = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>

const openConnections = (app: TestApp['app']) =>
  new Promise<number>((resolve, reject) => app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))))

describe('upgrade requests', () => {
  it.each([
    ['GET /api/v1/users/1', 'websocket', 200],
    ['GET /health', 'h2c', 200],
    ['GET /nope', 'foo', 404],
    ['GET /', 'websocket', 200],
    ['GET /api/v1/users?limit=2', 'h2c', 200],
  ])('answers %s with Upgrade: %s as without it, with Connection: close, and closes the connection', async (line, protocol, status) => {
    const { port } = await defaults()
    const text = await exchange(port, `${line} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nConnection: Upgrade\r\nUpgrade: ${protocol}\r\n\r\n`)
    expect(text.startsWith(`HTTP/1.1 ${status} `)).toBe(true)
    expect(head(text)).toMatch(/\r\nconnection: close\r\n/)
    expect(head(text)).toMatch(/\r\nx-request-id: /)
  })

  it('keeps no socket of upgrade requests the clients gave up on, refused by the rate limit or not: the connections fall back to none', async () => {
    const { app, port } = await listening({ RATE_LIMIT_MAX: '5' })
    const paths = ['/api/v1/users/1', '/health', '/nope', '/', '/graphql']
    for (let i = 0; i < 30; i++) {
      const connection = await openRaw(port)
      connection.socket.write(
        `GET ${paths[i % paths.length]} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: ${i % 2 === 0 ? 'websocket' : 'h2c'}\r\n\r\n`,
      )
      // The client reads the status line, then goes away without waiting for the server to close.
      await expect.poll(() => connection.received().includes('\r\n\r\n')).toBe(true)
      connection.socket.destroy()
    }
    await expect.poll(() => openConnections(app), { timeout: 5000 }).toBe(0)
  })

  it('refuses an upgrade request that carries a body, with 400 in the envelope, and closes the connection', async () => {
    const { port } = await defaults()
    const json = JSON.stringify({ name: 'Upgrade', username: 'upgrade', email: 'upgrade@example.com' })
    const text = await exchange(
      port,
      `POST /api/v1/users HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`,
    )
    expect(text.startsWith('HTTP/1.1 400 ')).toBe(true)
    expect((body(text).error as { code: string }).code).toBe('BAD_REQUEST')
  })

  it.each([
    ['a version other than 13', { 'Sec-WebSocket-Version': '99' }, /Sec-WebSocket-Version/],
    ['no key', { 'Sec-WebSocket-Key': undefined }, /Sec-WebSocket-Key/],
    ['a key that is not 16 bytes', { 'Sec-WebSocket-Key': 'c2hvcnQ=' }, /Sec-WebSocket-Key/],
    ['another protocol than WebSocket', { Upgrade: 'h2c' }, /Only WebSocket upgrades/],
    ['a malformed protocol list', { 'Sec-WebSocket-Protocol': 'graphql-transport-ws,, x' }, /Sec-WebSocket-Protocol/],
    ['a protocol named twice', { 'Sec-WebSocket-Protocol': 'graphql-transport-ws, graphql-transport-ws' }, /Sec-WebSocket-Protocol/],
  ])('refuses a WebSocket handshake on /graphql with %s: 400, a GraphQL error body, the request id and security headers', async (_what, changes, message) => {
    const { port } = await defaults()
    const headers: Record<string, string | undefined> = {
      Host: 'x',
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': KEY,
      'Sec-WebSocket-Protocol': 'graphql-transport-ws',
      ...changes,
    }
    const lines = Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : [`${name}: ${value}\r\n`]))
    const text = await exchange(port, `GET /graphql HTTP/1.1\r\n${lines.join('')}\r\n`)
    expect(text.startsWith('HTTP/1.1 400 ')).toBe(true)
    expect(head(text)).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/)
    expect(head(text)).toMatch(/\r\nx-request-id: [\w-]+\r\n/)
    expect(head(text)).toMatch(/\r\ncontent-security-policy: /)
    expect(head(text)).toMatch(/\r\nconnection: close\r\n/)
    if ('Sec-WebSocket-Version' in changes) expect(head(text)).toMatch(/\r\nsec-websocket-version: 13\r\n/)
    const [error] = body(text).errors as { message: string; extensions: { code: string } }[]
    expect(error?.extensions.code).toBe('BAD_REQUEST')
    expect(error?.message).toMatch(message)
  })

  it('still switches protocols for a proper handshake on /graphql', async () => {
    const { port } = await defaults()
    const connection = await openRaw(port)
    connection.socket.write(
      `GET /graphql HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${KEY}\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
    )
    await expect.poll(() => connection.received()).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/)
    expect(head(connection.received())).toMatch(/\r\nsec-websocket-protocol: graphql-transport-ws\r\n/)
    connection.socket.destroy()
  })
})
