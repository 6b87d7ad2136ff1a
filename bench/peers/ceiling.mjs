// The ceiling: what Node.js itself serves on this machine. A bare node:http server answering every
// request with the same ~120-byte JSON body; nothing is parsed, read or computed.
//
//   node bench/peers/ceiling.mjs   (PORT, HOST; prints "listening on http://host:port")
import { createServer } from 'node:http'

const body = Buffer.from(JSON.stringify({ data: { id: 1, name: 'Leanne Graham', email: 'leanne.graham@example.com', role: 'admin' }, meta: { version: 1 } }))
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length }

const server = createServer((_request, response) => {
  response.writeHead(200, headers)
  response.end(body)
})
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address()
  console.log(`listening on http://${address}:${port}`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
