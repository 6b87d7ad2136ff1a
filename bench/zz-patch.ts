import { request } from 'undici'
import { readFileSync } from 'node:fs'
const [port, tokenFile] = process.argv.slice(2)
const token = readFileSync(tokenFile, 'utf8').trim()
const base = `http://127.0.0.1:${port}`
async function patches(n: number) {
  const t = performance.now()
  for (let i = 0; i < n; i++) {
    const r = await request(`${base}/api/v1/users/${1 + (i * 37) % 10000}`, { method: 'PATCH', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ age: 20 + (i % 50) }) })
    await r.body.text(); if (r.statusCode !== 200) throw new Error(String(r.statusCode))
  }
  return (performance.now() - t) / n
}
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system }
console.log('PATCH ms, cache empty', (await patches(300)).toFixed(3))
// fill the cache with 10,000 users
for (let i = 1; i <= 10000; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => request(`${base}/api/v1/users/${i + j}`).then((r) => r.body.text())))
console.log('PATCH ms, 10,000 users cached', (await patches(300)).toFixed(3))
