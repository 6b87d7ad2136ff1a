// A small round-robin load balancer in front of N instances, for trying the scale-out recipe where
// nginx is not installed (deploy/run-local.sh uses it then). Plain JavaScript on node:http and
// node:net only, so it runs with what `npm install` brings. It does what deploy/nginx.conf does that
// the service relies on, and no more:
//   - each request goes to the next instance in turn; an instance that refuses a connection is
//     skipped for 5 s, and the request goes to the next one (nothing reached the refusing one);
//   - WebSocket upgrades (/graphql) are passed through as a byte pipe, event streams unbuffered;
//   - X-Forwarded-For (appended) and X-Forwarded-Proto tell the instances who the client is
//     (they believe it only from a TRUST_PROXY address: 127.0.0.1 here);
//   - a request body is read whole first, up to 1 MiB as the service takes (413 past it), so a
//     request can go to another instance when the first refuses the connection;
//   - no instance reachable: 503 with Retry-After, in the service's error shape (GraphQL's under /graphql).
// It prints one line per answer (method, path, status, which instance): which instance served what.
// For production, use nginx (deploy/nginx.conf) or your platform's load balancer.
//
//   node deploy/balancer.js <port> <instance> [<instance>...]     e.g. node deploy/balancer.js 8080 127.0.0.1:3001 127.0.0.1:3002
//
// Port 0 takes a free port; the first line printed says which ("balancer listening on http://...").
import console from 'node:console'
import http from 'node:http'
import net from 'node:net'
import process from 'node:process'
import { URL } from 'node:url'

const MAX_BODY_BYTES = 1024 * 1024
/** How long an instance that refused a connection is left out. */
const DOWN_FOR_MS = 5000
/** Errors that mean the instance was not reached: the request may go to another. */
const NOT_REACHED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'])

const [portArgument, ...instanceArguments] = process.argv.slice(2)
const port = Number(portArgument)
if (!Number.isInteger(port) || port < 0 || port > 65535 || instanceArguments.length === 0) {
  console.error('usage: node deploy/balancer.js <port> <host:port> [<host:port>...]')
  process.exit(2)
}
const instances = instanceArguments.map((text) => {
  const url = new URL(text.includes('://') ? text : `http://${text}`)
  return { host: url.hostname, port: Number(url.port || 80), name: url.host, downUntil: 0 }
})
const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 32 })
let next = 0

/** The instances to try for one request, in order: round-robin, those that refused lately last. */
function candidates() {
  const start = next++ % instances.length
  const turn = instances.map((_, i) => instances[(start + i) % instances.length])
  const now = Date.now()
  return [...turn.filter((instance) => instance.downUntil <= now), ...turn.filter((instance) => instance.downUntil > now)]
}

/** Headers of one connection, not of the message: each hop sets its own (RFC 9110, section 7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade'])

/** The message's own headers: those of the hop dropped, except the ones `keep` names. */
function endToEnd(headers, keep = []) {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name) || keep.includes(name)))
}

/** The request's headers as an instance should see them, with who the client is. */
function forwardedHeaders(request, keep) {
  const headers = endToEnd(request.headers, keep)
  const client = request.socket.remoteAddress ?? ''
  headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']}, ${client}` : client
  headers['x-forwarded-proto'] = 'http'
  return headers
}

/** The service's own error shape: the REST envelope, or GraphQL's `errors` under /graphql. */
function errorBody(path, code, message) {
  const graphql = path === '/graphql' || path.startsWith('/graphql/') || path.startsWith('/graphql?')
  return JSON.stringify(graphql ? { errors: [{ message, extensions: { code } }] } : { error: { code, message } }) + '\n'
}

function answerError(request, response, status, code, message) {
  if (response.headersSent) return response.destroy()
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...(status === 503 ? { 'retry-after': '1' } : {}) })
  response.end(errorBody(request.url ?? '/', code, message))
  log(request, status, '-')
}

function log(request, status, instance) {
  console.log(`${request.method} ${request.url} ${status} upstream=${instance}`)
}

/** Reads the request body whole (it is resent as it is if an instance refuses the connection); undefined past the limit. */
async function bodyOf(request) {
  const chunks = []
  let size = 0
  for await (const chunk of request) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) return undefined
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

const server = http.createServer(async (request, response) => {
  let body
  try {
    body = await bodyOf(request)
  } catch {
    return request.destroy()
  }
  if (body === undefined) return answerError(request, response, 413, 'PAYLOAD_TOO_LARGE', 'The request body is larger than 1 MiB')
  const headers = forwardedHeaders(request)
  if (body.length > 0 || request.headers['content-length'] !== undefined) headers['content-length'] = String(body.length)
  // The client left (an event stream closed) before its answer ended: the instance's request ends too.
  let answered = false
  let clientGone = false
  response.on('close', () => {
    clientGone = !answered
  })
  const tried = candidates()
  const attempt = (index) => {
    const instance = tried[index]
    if (instance === undefined) return answerError(request, response, 503, 'SERVICE_UNAVAILABLE', 'No instance of the service is reachable; try again shortly')
    const upstream = http.request({ host: instance.host, port: instance.port, method: request.method, path: request.url, headers, agent }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers))
      // Each chunk as it comes: an event stream's events reach the client when the instance writes them.
      answer.pipe(response)
      answer.on('end', () => (answered = true))
      answer.on('error', () => response.destroy())
      log(request, answer.statusCode, instance.name)
    })
    response.on('close', () => {
      if (clientGone) upstream.destroy()
    })
    upstream.on('error', (error) => {
      if (clientGone) return
      if (response.headersSent) return response.destroy()
      if (NOT_REACHED.has(error.code)) instance.downUntil = Date.now() + DOWN_FOR_MS
      // A kept-alive connection the instance closed as it was reused did not carry the request either.
      if (NOT_REACHED.has(error.code) || (upstream.reusedSocket && error.code === 'ECONNRESET')) return attempt(index + 1)
      answerError(request, response, 502, 'SERVICE_UNAVAILABLE', 'The instance failed to answer')
    })
    upstream.end(body)
  }
  attempt(0)
})

// A WebSocket: the upgrade request is written to an instance as it came (with the forwarded
// headers), then bytes flow both ways until either side closes.
server.on('upgrade', (request, socket, head) => {
  const headers = forwardedHeaders(request, ['connection', 'upgrade'])
  const tried = candidates()
  socket.on('error', () => undefined)
  const attempt = (index) => {
    const instance = tried[index]
    if (instance === undefined) {
      const body = errorBody(request.url ?? '/', 'SERVICE_UNAVAILABLE', 'No instance of the service is reachable; try again shortly')
      socket.end(
        'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json; charset=utf-8\r\nretry-after: 1\r\n' +
          `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      )
      log(request, 503, '-')
      return
    }
    const upstream = net.connect({ host: instance.host, port: instance.port })
    const notReached = (error) => {
      if (NOT_REACHED.has(error.code)) instance.downUntil = Date.now() + DOWN_FOR_MS
      attempt(index + 1)
    }
    upstream.once('error', notReached)
    upstream.once('connect', () => {
      upstream.off('error', notReached)
      upstream.on('error', () => socket.destroy())
      const lines = [`${request.method} ${request.url} HTTP/1.1`]
      for (const [name, value] of Object.entries(headers)) for (const item of [value].flat()) lines.push(`${name}: ${item}`)
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`)
      if (head.length > 0) upstream.write(head)
      socket.pipe(upstream).pipe(socket)
      socket.on('close', () => upstream.destroy())
      upstream.on('close', () => socket.destroy())
      log(request, 'upgrade', instance.name)
    })
  }
  attempt(0)
})

server.listen(port, '127.0.0.1', () => {
  console.log(`balancer listening on http://127.0.0.1:${server.address().port}, round-robin over ${instances.map((instance) => instance.name).join(', ')}`)
})
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close()
    server.closeAllConnections()
    agent.destroy()
    process.exit(0)
  })
}
