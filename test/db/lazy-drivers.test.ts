// pg and ioredis are loaded only when the config names PostgreSQL or Redis: a server on SQLite
// without Redis never holds them in memory (docs/performance.md, what loads lazily); prom-client
// (and @opentelemetry/api, which it loads) only by the first scrape of /metrics. Checked in a
// fresh process on the built app, where nothing else has loaded them.
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { DIST } from '../helpers/dist.js'
import { postgresUrl, redisUrl } from '../helpers/services.js'
import { freshPostgresDatabase, freshSqliteFile } from '../helpers/test-store.js'

const SCRIPT = `
import { createRequire } from 'node:module'
import { buildApp } from './${DIST}/app.js'
import { loadConfig } from './${DIST}/config.js'
const app = await buildApp(loadConfig({ ...JSON.parse(process.argv[1]), SEED_DEMO_DATA: 'false', LOG_LEVEL: 'silent' }))
await app.ready()
const has = (name) => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes(\`/node_modules/\${name}/\`))
const beforeScrape = { pg: has('pg'), ioredis: has('ioredis'), promClient: has('prom-client'), openTelemetry: has('@opentelemetry/api') }
const scraped = await app.inject({ url: '/metrics' })
console.log(JSON.stringify({ ...beforeScrape, scraped: scraped.statusCode, promClientOnceScraped: has('prom-client') }))
await app.close()
`

interface Loaded {
  pg: boolean
  ioredis: boolean
  promClient: boolean
  openTelemetry: boolean
  scraped: number
  promClientOnceScraped: boolean
}

function driversLoaded(env: Record<string, string>): Loaded {
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', SCRIPT, JSON.stringify(env)], { encoding: 'utf8' })
  return JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as Loaded
}

describe('database and Redis drivers, and the metrics library', () => {
  it('are not loaded on SQLite without Redis', async () => {
    const file = freshSqliteFile()
    try {
      expect(driversLoaded({ DATABASE_URL: file.url })).toEqual({
        pg: false,
        ioredis: false,
        promClient: false,
        openTelemetry: false,
        scraped: 200,
        promClientOnceScraped: true,
      })
    } finally {
      await file.drop()
    }
  })

  it('are loaded when DATABASE_URL names PostgreSQL and REDIS_URL is set', async (context) => {
    const [database, redis] = [await postgresUrl(), await redisUrl()]
    if (database === undefined || redis === undefined) return context.skip()
    const store = await freshPostgresDatabase()
    try {
      expect(driversLoaded({ DATABASE_URL: store.url, REDIS_URL: redis })).toMatchObject({ pg: true, ioredis: true })
    } finally {
      await store.drop()
    }
  })
})
