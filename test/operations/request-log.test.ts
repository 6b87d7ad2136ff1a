// The one line per request (src/http/request-log.ts): written as pino writes its lines, with
// the route's template (never the URL), the status, the latency and the caller; machines' quiet
// routes at debug; nothing below the configured level.
// Runs once, on SQLite: the log line of a request is made of the request, not of the data.
import { afterEach, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

interface Line {
  level: number
  time: number
  pid: number
  hostname: string
  reqId: string
  method: string
  route?: string
  status: number
  ms: number
  userId?: number
  msg: string
}

describe('the request log', () => {
  let t: TestApp | undefined
  afterEach(() => t?.close())

  const appLogging = async (level: string) => {
    const lines: string[] = []
    t = await buildTestApp({ LOG_LEVEL: level }, { logStream: { write: (line) => void lines.push(line) } })
    const requests = () => lines.map((line) => JSON.parse(line) as Line).filter((line) => line.msg === 'request')
    return { t, requests }
  }

  it('writes one JSON line per request, as pino would, with the route template and the caller', async () => {
    const { t, requests } = await appLogging('info')
    const res = await t.request({ url: `/api/v1/users/${t.bob.id}?select=name,email`, token: t.tokens.alice, headers: { 'x-request-id': 'trace-42' } })
    expect(res.statusCode).toBe(200)
    const missing = await t.request({ url: '/nowhere' })
    expect(missing.statusCode).toBe(404)
    const [line, notFound] = requests()
    expect(line).toEqual({
      level: 30,
      time: expect.any(Number),
      pid: process.pid,
      hostname: expect.any(String),
      reqId: 'trace-42',
      method: 'GET',
      route: '/api/v1/users/:id',
      status: 200,
      ms: expect.any(Number),
      userId: t.alice.id,
      msg: 'request',
    })
    expect(Math.abs((line?.time ?? 0) - Date.now())).toBeLessThan(60_000)
    expect(notFound).toMatchObject({ level: 30, method: 'GET', status: 404, msg: 'request' })
    expect(notFound).not.toHaveProperty('route')
    expect(notFound).not.toHaveProperty('userId')
  })

  it('writes a line that parses whatever id, method and path the request brings', async () => {
    const { t, requests } = await appLogging('info')
    const hostile = ['quote"d', 'back\\slash', 'a'.repeat(129), 'ok:id@host.example-1']
    for (const id of hostile) await t.request({ url: '/api/v1/users?limit=1', headers: { 'x-request-id': id } })
    await t.app.inject({ method: 'PROPFIND' as 'GET', url: '/api/v1/users/%22%5C' })
    await t.app.inject({ method: 'OPTIONS', url: '/api/v1/users' })
    const lines = requests()
    expect(lines.map((line) => line.reqId)).toEqual([
      expect.stringMatching(/^[0-9a-f-]{36}$/),
      expect.stringMatching(/^[0-9a-f-]{36}$/),
      expect.stringMatching(/^[0-9a-f-]{36}$/),
      'ok:id@host.example-1',
      expect.stringMatching(/^[0-9a-f-]{36}$/),
      expect.stringMatching(/^[0-9a-f-]{36}$/),
    ])
    expect(lines.slice(-2)).toMatchObject([
      { method: 'PROPFIND', status: 405 },
      { method: 'OPTIONS', status: 204 },
    ])
  })

  it("logs machines' probes at debug only, and nothing under the level", async () => {
    const info = await appLogging('info')
    await info.t.request({ url: '/health' })
    expect(info.requests()).toEqual([])
    await info.t.close()
    const debug = await appLogging('debug')
    await debug.t.request({ url: '/health' })
    expect(debug.requests()).toMatchObject([{ level: 20, route: '/health', status: 200 }])
    await debug.t.close()
    const warn = await appLogging('warn')
    await warn.t.request({ url: `/api/v1/users/${warn.t.bob.id}` })
    expect(warn.requests()).toEqual([])
  })
})
