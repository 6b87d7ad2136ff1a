import { readFileSync } from 'node:fs'
import { measure } from './lib.js'
const [port, tokenFile, seconds] = process.argv.slice(2)
const token = readFileSync(tokenFile, 'utf8').trim()
const round = await measure(`http://127.0.0.1:${port}`, { path: '/api/v1/users/{id}', mix: { ids: 10000, writeShare: 0.02, writeHeaders: { authorization: `Bearer ${token}` } } }, { connections: 50, seconds: Number(seconds ?? 5) })
console.log(port, Math.round(round.requestsPerSecond), 'p99', round.p99, 'errors', round.errors)
