// GraphQL subscription clients for tests: an app listening on a port, graphql-ws clients (disposed of
// after each test), a raw graphql-transport-ws socket for what the clients hide, and waits on what the
// server holds, so a test asserts on deliveries rather than on timing.
import { type Client, createClient } from 'graphql-ws'
import WebSocket from 'ws'
import { buildTestApp, type TestApp, type TestAppOptions } from './build-test-app.js'
import { until } from './until.js'

export interface Listening {
  t: TestApp
  http: string
  ws: string
}

/** The test app listening on a free port of 127.0.0.1, with its HTTP and WebSocket addresses. */
export async function listening(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<Listening> {
  const t = await buildTestApp(env, options)
  const http = await t.app.listen({ host: '127.0.0.1', port: 0 })
  return { t, http, ws: `${http.replace('http', 'ws')}/graphql` }
}

const wsClients: Client[] = []

/** Disposes of every client wsClient made: a test file runs it after each test. */
export async function disposeWsClients(): Promise<void> {
  await Promise.all(wsClients.splice(0).map(async (client) => client.dispose()))
}

/** A graphql-ws client, signed in when given a token, connecting at once and never retrying. */
export function wsClient(url: string, token?: string): Client {
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
    connectionParams: token === undefined ? undefined : { authorization: `Bearer ${token}` },
  })
  wsClients.push(client)
  return client
}

/** Subscribes and gathers what arrives; `ready` resolves once the server has the subscription. */
export function gather(client: Client, query: string, variables?: Record<string, unknown>) {
  const received: unknown[] = []
  const errors: unknown[] = []
  client.subscribe({ query, variables }, { next: (value) => received.push(value), error: (error) => errors.push(error), complete: () => undefined })
  return { received, errors }
}

/** A raw socket speaking graphql-transport-ws, for what the clients hide. */
export function rawSocket(url: string, headers: Record<string, string> = {}) {
  const socket = new WebSocket(url, 'graphql-transport-ws', { headers })
  const messages: { type: string; id?: string; payload?: unknown }[] = []
  socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString()) as (typeof messages)[number]))
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  const opened = new Promise<void>((resolve, reject) => {
    socket.on('open', () => resolve())
    socket.on('error', reject)
  })
  const send = (message: unknown) => socket.send(JSON.stringify(message))
  return { socket, messages, closed, opened, send }
}

/** Waits until the server holds exactly `count` subscriptions receiving events. */
export const subscribed = (t: TestApp, count: number) => until(() => t.app.subscriptionStats.subscriptions === count)

/** Settles: lets anything in flight arrive before asserting that nothing more did. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 150))
