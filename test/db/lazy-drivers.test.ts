// pg and ioredis are loaded only when the config names PostgreSQL or Redis: a server on SQLite
// without Redis never holds them in memory (docs/performance.md, what loads lazily); prom-client
// (and @opentelemetry/api, which it loads) only by the first scrape of /metrics; jose (an ES
// module, seen by a resolve hook) only by the first token of an OpenID Connect issuer; Mercurius
// never (the benchmark's references run on it, the service does not). Checked in a fresh process
// on the built app, where nothing else has loaded them.
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { DIST } from '../helpers/dist.js'
import { postgresUrl, redisUrl } from '../helpers/services.js'
import { freshPostgresDatabase, freshSqliteFile } from '../helpers/test-store.js'

/** A resolve hook that tells the script every module URL resolved (ES modules are in no cache it can read). */
const RESOLVE_HOOK = `
let port
export function initialize(data) { port = data.port }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  port.postMessage(resolved.url)
  return resolved
}`

const SCRIPT = `
import { createRequire, register } from 'node:module'
import { setTimeout as sleep } from 'node:timers/promises'
import { MessageChannel } from 'node:worker_threads'
const { port1, port2 } = new MessageChannel()
const resolved = new Set()
port1.on('message', (url) => resolved.add(url))
port1.unref()
register(\`data:text/javascript,\${encodeURIComponent(process.argv[2])}\`, { data: { port: port2 }, transferList: [port2] })
const { buildApp } = await import('./${DIST}/app.js')
const { loadConfig } = await import('./${DIST}/config.js')
const app = await buildApp(loadConfig({ ...JSON.parse(process.argv[1]), SEED_DEMO_DATA: 'false', LOG_LEVEL: 'silent' }))
await app.ready()
const has = (name) => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes(\`/node_modules/\${name}/\`))
// The hook's messages arrive a little later: waited for up to waitMs.
const hasModule = async (name, waitMs) => {
  const found = () => [...resolved].some((url) => url.includes(\`/node_modules/\${name}/\`))
  for (let waited = 0; waited < waitMs && !found(); waited += 10) await sleep(10)
  return found()
}
const ownToken = await app.inject({ url: '/api/v1/users', headers: { authorization: 'Bearer not-a-jwt' } })
const beforeScrape = { pg: has('pg'), ioredis: has('ioredis'), promClient: has('prom-client'), openTelemetry: has('@opentelemetry/api'), mercurius: has('mercurius') }
const beforeJwt = { jose: await hasModule('jose', 100), graphql: (await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ users { id } }' } })).statusCode }
const scraped = await app.inject({ url: '/metrics' })
const jwt = await app.inject({ url: '/api/v1/users', headers: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln' } })
console.log(JSON.stringify({
  ...beforeScrape, ...beforeJwt, ownToken: ownToken.statusCode, scraped: scraped.statusCode, promClientOnceScraped: has('prom-client'),
  jwt: jwt.statusCode, joseOnceAJwtCame: await hasModule('jose', 2000), mercuriusAfterGraphQL: has('mercurius'),
}))
await app.close()
`

interface Loaded {
  pg: boolean
  ioredis: boolean
  promClient: boolean
  openTelemetry: boolean
  mercurius: boolean
  jose: boolean
  graphql: number
  ownToken: number
  scraped: number
  promClientOnceScraped: boolean
  jwt: number
  joseOnceAJwtCame: boolean
  mercuriusAfterGraphQL: boolean
}

function driversLoaded(env: Record<string, string>): Loaded {
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', SCRIPT, JSON.stringify(env), RESOLVE_HOOK], { encoding: 'utf8' })
  return JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as Loaded
}

describe('database and Redis drivers, the metrics library, jose and Mercurius', () => {
  it('are not loaded on SQLite without Redis until asked for, and Mercurius never', async () => {
    const file = freshSqliteFile()
    try {
      // Migrated: an issuer's token is looked up among the tokens before it is verified.
      execFileSync(process.execPath, [`${DIST}/main.js`, 'migrate'], { env: { ...process.env, DATABASE_URL: file.url, LOG_LEVEL: 'silent' } })
      // An issuer that is never reached: the JWT's algorithm (HS256) is refused before any key is fetched.
      expect(driversLoaded({ DATABASE_URL: file.url, OIDC_ISSUER: 'https://issuer.invalid', OIDC_AUDIENCE: 'threadline' })).toEqual({
        pg: false,
        ioredis: false,
        promClient: false,
        openTelemetry: false,
        mercurius: false,
        jose: false,
        graphql: 200,
        ownToken: 401,
        scraped: 200,
        promClientOnceScraped: true,
        jwt: 401,
        joseOnceAJwtCame: true,
        mercuriusAfterGraphQL: false,
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
