// Checks a running deployment through its load balancer (nginx), as deploy/README.md describes:
// reads, a write, a conditional GET, a comment made through the proxy heard by graphql-ws
// subscribers (spread over the instances by nginx) and by an SSE stream, and X-Forwarded-For.
// Plain JavaScript, so it runs with node alone (graphql-ws and ws from the repository's node_modules).
//
//   TOKEN=$(DATABASE_URL=postgres://... npx threadline tokens create --user 1) node deploy/smoke-test.js [http://127.0.0.1:8080]
//
// The token must be an admin's (user 1 in the demo data) or the owner's of post 1's author.
import console from 'node:console'
import { performance } from 'node:perf_hooks'
import process from 'node:process'
import { clearTimeout, setTimeout } from 'node:timers'
import { setTimeout as sleep } from 'node:timers/promises'
import { TextDecoder } from 'node:util'
import { createClient } from 'graphql-ws'
import WebSocket from 'ws'

const { fetch } = globalThis

const base = process.argv[2] ?? 'http://127.0.0.1:8080'
const token = process.env.TOKEN
if (!token) {
  console.error('Set TOKEN to a bearer token (threadline tokens create --user 1)')
  process.exit(2)
}
const auth = { authorization: `Bearer ${token}` }
let failures = 0

/** Prints one check's outcome; a failed one makes the exit status 1. */
function check(ok, what, detail = '') {
  if (!ok) failures++
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? `: ${detail}` : ''}`)
}

async function main() {
  const list = await fetch(`${base}/api/v1/users?limit=2`)
  check(list.status === 200, 'GET /api/v1/users', `${list.status}, ${(await list.json()).data?.length} users`)

  const created = await fetch(`${base}/api/v1/users/1/posts`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Smoke test', content: 'Written through the proxy.' }),
  })
  const post = (await created.json()).data
  check(created.status === 201, 'POST a post', `${created.status}, Location ${created.headers.get('location')}`)
  const postPath = `/api/v1/users/1/posts/${post?.id}`

  const first = await fetch(`${base}${postPath}`, { headers: auth })
  const etag = first.headers.get('etag')
  const again = await fetch(`${base}${postPath}`, { headers: { ...auth, 'if-none-match': etag ?? '' } })
  check(first.status === 200 && again.status === 304, 'conditional GET', `${first.status} with ETag ${etag}, then ${again.status}`)

  // Subscribers through the proxy (four WebSockets: nginx spreads them over the instances), and
  // one SSE stream; then one comment through the proxy, which lands on whichever instance.
  const subscribers = 4
  const heard = []
  const clients = []
  const query = `subscription { commentAdded(postId: "${post?.id}") { id content } }`
  await Promise.all(
    Array.from({ length: subscribers }, (_, i) => {
      const client = createClient({
        url: `${base.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: auth,
        lazy: false,
        retryAttempts: 0,
      })
      clients.push(client)
      client.subscribe(
        { query },
        { next: (result) => heard.push({ i, at: performance.now(), result }), error: (e) => console.error(`subscriber ${i}:`, e), complete: () => {} },
      )
      return new Promise((resolve) => client.on('connected', resolve))
    }),
  )
  const sse = await fetch(`${base}/graphql/stream`, {
    method: 'POST',
    headers: { ...auth, accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  })
  const sseText = readUntil(sse, 'event: next', 5000)
  await sleep(300) // the subscribe messages reach their instances

  const sent = performance.now()
  const comment = await fetch(`${base}${postPath}/comments`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ content: 'Heard on every instance?' }),
  })
  check(comment.status === 201, 'POST a comment', String(comment.status))
  const deadline = Date.now() + 5000
  while (heard.length < subscribers && Date.now() < deadline) await sleep(10)
  const slowest = Math.max(...heard.map((h) => h.at - sent))
  check(
    heard.length === subscribers,
    `graphql-ws: ${subscribers} subscribers heard the comment`,
    `${heard.length} did, the last ${slowest.toFixed(1)} ms after sending`,
  )
  const streamed = await sseText
  check(streamed.includes('Heard on every instance?'), 'SSE (/graphql/stream) heard the comment', `${(performance.now() - sent).toFixed(0)} ms`)
  await Promise.all(clients.map((client) => client.dispose()))

  // X-Forwarded-For: each forwarded address has an allowance of its own. This holds when this
  // client connects from an address the instances trust (TRUST_PROXY), e.g. on the proxy's machine.
  const client = `198.51.100.${Math.floor(Math.random() * 250) + 1}`
  const remaining = async (forwardedFor) => {
    const response = await fetch(`${base}/api/v1/users/1`, { headers: { 'x-forwarded-for': forwardedFor } })
    await response.arrayBuffer()
    return Number(response.headers.get('x-ratelimit-remaining'))
  }
  const [a, b] = [await remaining(client), await remaining(client)]
  const limit = Number((await fetch(`${base}/api/v1/users/1`)).headers.get('x-ratelimit-limit'))
  check(a === limit - 1 && b === limit - 2, 'X-Forwarded-For counted per client', `a fresh ${client}: remaining ${a}, then ${b}, of ${limit}`)

  console.log(failures === 0 ? 'all checks passed' : `${failures} check(s) failed`)
  process.exitCode = failures === 0 ? 0 : 1
}

/** The response's text until it contains `marker` (or the time runs out), then the stream is dropped. */
async function readUntil(response, marker, timeoutMs) {
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const timer = setTimeout(() => void reader.cancel(), timeoutMs)
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
      if (text.includes(marker) && text.endsWith('\n\n')) break
    }
  } finally {
    clearTimeout(timer)
    void reader.cancel().catch(() => {})
  }
  return text
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
