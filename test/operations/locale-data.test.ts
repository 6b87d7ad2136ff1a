// Runs once, on SQLite: the subject is what the process reads of ICU, which no store changes.
// The server formats nothing with Intl: the first use of a locale's formatting or collation reads
// ICU's data out of the node binary into the process (some 5 MB for a number or a date, 2 MB for a
// comparison of strings), where it stays resident (docs/performance.md, what loads lazily). Checked
// in a fresh process on the built app: every Intl constructor and locale method records its caller
// while the server starts twice on one database (the first migrates and seeds it, the second reads
// back the migrations applied) and answers the landing page, the API, its description and docs.
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { DIST } from '../helpers/dist.js'
import { freshSqliteFile } from '../helpers/test-store.js'

const SCRIPT = `
const uses = []
const record = (name) => uses.push(name + ' ' + (new Error().stack.split('\\n')[3] ?? '').trim())
for (const name of ['DateTimeFormat', 'NumberFormat', 'Collator', 'PluralRules', 'RelativeTimeFormat', 'ListFormat', 'Segmenter', 'DisplayNames']) {
  const Original = Intl[name]
  Intl[name] = new Proxy(Original, { construct: (target, args) => (record('Intl.' + name), new target(...args)), apply: (target, self, args) => (record('Intl.' + name), target(...args)) })
}
for (const [owner, methods] of [[Number.prototype, ['toLocaleString']], [Date.prototype, ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']], [String.prototype, ['localeCompare']], [Array.prototype, ['toLocaleString']]]) {
  for (const method of methods) {
    const original = owner[method]
    owner[method] = function (...args) { record(method); return original.apply(this, args) }
  }
}
const { startServer } = await import('./${DIST}/server.js')
const { loadConfig } = await import('./${DIST}/config.js')
const config = loadConfig({ ...JSON.parse(process.argv[1]), HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' })
// The first start migrates and seeds the new database; the second reads back what was applied.
for (const start of [1, 2]) {
  const app = await startServer(config)
  for (const url of ['/', '/api/v1/users?limit=2', '/openapi.json', '/docs']) {
    const answer = await app.inject({ url, headers: { accept: url === '/' ? 'text/html' : '*/*' } })
    if (answer.statusCode !== 200) uses.push('GET ' + url + ' answered ' + answer.statusCode + ' ' + answer.body.slice(0, 300))
  }
  await app.close()
}
console.log(JSON.stringify(uses))
`

describe('locale data', () => {
  it('is never read: the server starts, migrates, seeds and answers its pages without Intl', async () => {
    const file = freshSqliteFile()
    try {
      const output = execFileSync(process.execPath, ['--input-type=module', '-e', SCRIPT, JSON.stringify({ DATABASE_URL: file.url })], { encoding: 'utf8' })
      expect(JSON.parse(output.trim().split('\n').at(-1) ?? 'null')).toEqual([])
    } finally {
      await file.drop()
    }
  })
})
