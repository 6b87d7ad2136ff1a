// Secrets never reach the log: with everything logged (LOG_LEVEL=trace), a token and passwords sent
// every way the service takes them (REST and GraphQL bodies, the Authorization header, a failed
// sign-in, a body refused by validation, a WebSocket's connection_init) appear in no log line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'

const PASSWORDS = ['Rest-secret-password-1', 'Graphql-secret-password-2', 'Wrong-secret-password-3', 'Invalid-secret-password-4']

let t: TestApp
const lines: string[] = []
beforeAll(async () => {
  t = await buildTestApp({ LOG_LEVEL: 'trace' }, { logStream: { write: (line) => void lines.push(line) } })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(() => t.close())

describe('the log', () => {
  it('holds no token and no password, whatever the way they came in', async () => {
    const [restPassword, graphqlPassword, wrongPassword, invalidPassword] = PASSWORDS
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/users',
      token: t.tokens.admin,
      json: { name: 'Secretive', email: 'secretive@example.com', password: restPassword },
    })
    expect(created.statusCode).toBe(201)
    const signedIn = await t.request({ method: 'POST', url: '/api/v1/tokens', json: { email: 'secretive@example.com', password: restPassword } })
    expect(signedIn.statusCode).toBe(201)
    const token = signedIn.json().data.token as string
    const secrets = [...PASSWORDS, token, t.tokens.admin]

    expect((await t.request({ method: 'GET', url: '/api/v1/users/1', token })).statusCode).toBe(200)
    expect((await t.request({ method: 'POST', url: '/api/v1/tokens', json: { email: 'secretive@example.com', password: wrongPassword } })).statusCode).toBe(401)
    const invalid = await t.request({ method: 'PATCH', url: `/api/v1/users/${created.json().data.id}`, token, json: { password: invalidPassword, age: 'old' } })
    expect(invalid.statusCode).toBe(422)
    const mutation = await t.request({
      method: 'POST',
      url: '/graphql',
      token: t.tokens.admin,
      json: { query: `mutation { createUser(input: { name: "Quiet", email: "quiet@example.com", password: "${graphqlPassword}" }) { id } }` },
    })
    expect(mutation.json().errors).toBeUndefined()
    // A bearer token that is not one, and a token in a WebSocket's connection_init.
    expect((await t.request({ method: 'GET', url: '/api/v1/users/1', headers: { authorization: `Bearer ${token}x` } })).statusCode).toBe(401)
    const { port } = t.app.server.address() as { port: number }
    const ws = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws')
    await new Promise<void>((resolve, reject) => {
      ws.once('error', reject)
      ws.once('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })))
      ws.on('message', (data: Buffer) => {
        if ((JSON.parse(data.toString()) as { type: string }).type === 'connection_ack') resolve()
      })
    })
    ws.close()
    // A cookie (the service sets none, but a browser or proxy may send one), and the metrics token.
    const cookie = 'session=cookie-secret-4711'
    expect((await t.request({ method: 'GET', url: '/api/v1/users/1', headers: { cookie } })).statusCode).toBe(200)
    expect((await t.request({ method: 'GET', url: '/metrics', headers: { cookie, authorization: 'Bearer metrics-secret-4711' } })).statusCode).toBe(200)
    secrets.push('cookie-secret-4711', 'metrics-secret-4711')

    const log = lines.join('')
    expect(log).toContain('"route":"/api/v1/tokens"') // the requests were logged, at trace level
    expect(log).toContain('"status":401')
    for (const secret of secrets) expect(log).not.toContain(secret)
  })
})
