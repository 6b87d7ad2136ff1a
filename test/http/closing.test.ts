// Closing the app (what SIGTERM does, src/server.ts) while clients have connected and sent their
// requests but the server, busy, has not accepted or read them yet: each is answered, none reset.
import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

let test: TestApp | undefined
afterEach(async () => {
  await test?.close()
  test = undefined
})

/**
 * A client in a process of its own (so that it runs while this one's loop is held): on a line on
 * stdin it opens `count` connections and sends a request on each; once every request is with the
 * kernel it makes the file `sent`; at the end it prints one JSON line: each connection's status,
 * or the error that ended it.
 */
const CLIENT = `
const net = require('node:net')
const { writeFileSync } = require('node:fs')
const [port, count, sent] = process.argv.slice(1)
console.log('ready')
process.stdin.once('data', () => {
  const results = []
  let written = 0
  for (let i = 0; i < count; i++) {
    const socket = net.connect(Number(port), '127.0.0.1')
    let text = ''
    let error
    socket.on('connect', () => {
      socket.write('GET /api/v1/users?limit=5 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n', () => {
        if (++written === Number(count)) writeFileSync(sent, '')
      })
    })
    socket.on('data', (chunk) => (text += chunk))
    socket.on('error', (e) => (error = e.code))
    socket.on('close', () => {
      results.push(error ?? (/^HTTP\\/1\\.1 (\\d{3})/.exec(text)?.[1] ?? 'no answer'))
      if (results.length === Number(count)) {
        console.log(JSON.stringify(results))
        process.exit(0)
      }
    })
  }
})
`

/**
 * Holds this process's event loop until `done()` or for at most `ms`, as a server busy with its
 * handlers would: it accepts and reads nothing meanwhile. Says whether `done()` came true.
 */
function holdLoopUntil(done: () => boolean, ms: number): boolean {
  const until = performance.now() + ms
  while (performance.now() < until) if (done()) return true
  return false
}

describe('closing', () => {
  it('answers every request sent before the close, those still in the backlog or unread included: 200 or 503, never a reset', async () => {
    test = await buildTestApp()
    const { app } = test
    await app.listen({ port: 0, host: '127.0.0.1' })
    const port = (app.server.address() as { port: number }).port
    const count = 20
    const sent = join(mkdtempSync(join(tmpdir(), 'threadline-closing-')), 'sent')
    const client = spawn(process.execPath, ['-e', CLIENT, String(port), String(count), sent])
    let output = ''
    client.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const results = new Promise<string[]>((resolve) => client.on('exit', () => resolve(JSON.parse(output.trim().split('\n').at(-1)!) as string[])))

    await new Promise<void>((resolve) => client.stdout.once('data', () => resolve()))
    // The client connects and sends while this loop is held: every connection waits in the
    // listening socket's backlog, its request in the kernel's buffers, when the close begins.
    // (Waiting for the client's word, not for a fixed time: on a busy machine it may take long to
    // connect, and a connection made after the close began is not what this test is about.)
    client.stdin.write('go\n')
    expect(
      holdLoopUntil(() => existsSync(sent), 10_000),
      'the client sent every request within 10 s',
    ).toBe(true)
    const closing = app.close()
    // And the loop is held again once the close has begun (a slow handler, the process
    // descheduled on a busy machine): the close's first look comes due while the backlog is
    // still unaccepted, and must not take the empty list it sees for "every request read".
    setImmediate(() => holdLoopUntil(() => false, 30))
    await closing
    rmSync(dirname(sent), { recursive: true, force: true })
    const statuses = await results
    expect(statuses).toHaveLength(count)
    expect(statuses.filter((status) => status !== '200' && status !== '503')).toEqual([])
  })

  it('closes a connection that says nothing, rather than wait for its client to give up', async () => {
    // Headers and requests may take ten minutes: only the close itself can end this connection.
    test = await buildTestApp({ HTTP_HEADERS_TIMEOUT_MS: '600000', HTTP_REQUEST_TIMEOUT_MS: '600000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '600000' })
    const { app } = test
    await app.listen({ port: 0, host: '127.0.0.1' })
    const accepted = new Promise<void>((resolve) => app.server.once('connection', () => resolve()))
    const silent = connect({ port: (app.server.address() as { port: number }).port, host: '127.0.0.1' })
    const closedByServer = new Promise<void>((resolve) => silent.once('end', () => resolve()))
    silent.on('error', () => undefined)
    await accepted
    await app.close()
    await closedByServer
    expect(silent.bytesRead).toBe(0)
    silent.destroy()
  })
})
