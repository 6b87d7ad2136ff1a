// Starting the service: migrate, fill a new database with demo data, listen, and close cleanly
// on SIGINT/SIGTERM.
import type { FastifyInstance } from 'fastify'
import { type AppDependencies, buildApp } from './app.js'
import type { Config } from './config.js'
import { type Database, openDatabase, SERVING_PAGE_CACHE_KIB } from './db/create-database.js'
import { migrateToLatest } from './db/migrate.js'
import { DEMO_COUNTS, seedDatabase } from './seed/seed-database.js'

export interface PreparedDatabase {
  applied: string[]
  seeded: boolean
}

/** Migrates; when this created the schema (a new database), fills it with the demo data unless told not to. */
export async function prepareDatabase(database: Database, config: Config): Promise<PreparedDatabase> {
  const { applied } = await migrateToLatest(database)
  const isNew = applied.includes('0001-initial')
  const seeded = isNew && config.seedDemoData
  if (seeded) await seedDatabase(database.db, DEMO_COUNTS)
  return { applied, seeded }
}

/**
 * SIGTERM or SIGINT: stop accepting connections, let requests in flight finish for up to
 * `graceMs` (new requests on open connections are answered 503 with Connection: close, WebSockets
 * closed with 1001), close the database and Redis, and exit 0. Past the grace period the
 * connections left are cut and the exit code is 1; a second signal stops at once, also with 1.
 */
function stopOnSignals(app: FastifyInstance, graceMs: number, listening: Promise<unknown>): void {
  let stopping = false
  const onSignal = async (signal: NodeJS.Signals) => {
    if (stopping) {
      app.log.warn({ signal }, 'second signal: stopping now')
      process.exit(1)
    }
    stopping = true
    // A signal during the start is acted on once the server listens (or failed to).
    await listening.catch(() => undefined)
    app.log.info({ signal, graceMs }, 'shutting down: finishing the requests in flight')
    let cut = false
    const grace = setTimeout(() => {
      cut = true
      app.log.warn({ graceMs }, 'grace period over: cutting the connections left')
      app.server.closeAllConnections()
    }, graceMs)
    // Should closing still hang (a hook that never returns), the process goes anyway.
    setTimeout(() => {
      app.log.error('shutdown did not finish after the grace period: exiting')
      process.exit(1)
    }, graceMs + HARD_STOP_AFTER_GRACE_MS).unref()
    app.close().then(
      () => {
        clearTimeout(grace)
        app.log.info('stopped')
        process.exit(cut ? 1 : 0)
      },
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', (signal) => void onSignal(signal))
  process.on('SIGTERM', (signal) => void onSignal(signal))
}

/** How long closing may go on after the connections were cut, before the process exits regardless. */
const HARD_STOP_AFTER_GRACE_MS = 5000

/** `dependencies`: what buildApp is given besides the database (a benchmark's conventions to leave out). */
export async function startServer(config: Config, dependencies: Omit<AppDependencies, 'database'> = {}): Promise<FastifyInstance> {
  // One handle for preparing and serving: with sqlite::memory: a second one would be another, empty database.
  // Its checkpoints move to a thread of their own for the serving, not the start's migrations and demo data.
  let served = (): void => {}
  const serving = new Promise<void>((resolve) => (served = resolve))
  const database = openDatabase(config.database, { pageCacheKib: SERVING_PAGE_CACHE_KIB, checkpointInBackground: serving })
  let prepared: PreparedDatabase
  try {
    prepared = await prepareDatabase(database, config)
  } catch (error) {
    await database.close()
    throw error
  }
  const app = await buildApp(config, { ...dependencies, database })
  if (prepared.applied.length > 0) app.log.info({ migrations: prepared.applied }, 'database migrated')
  if (prepared.seeded) app.log.info('new database filled with demo data')
  if (config.http.retiredVariables.length > 0) {
    app.log.warn({ variables: config.http.retiredVariables }, 'retired settings ignored: requests are scheduled fairly across callers (HTTP_MAX_IN_FLIGHT)')
  }
  const listening = app.listen({
    host: config.host,
    port: config.port,
    listenTextResolver: (address) => `Threadline is listening on ${address} (open ${address}/ in a browser, or curl ${address}/api/v1/users)`,
  })
  // Before listen resolves: with HOST=localhost the second address is bound after "listening".
  stopOnSignals(app, config.operations.shutdownGraceMs, listening)
  await listening
  served()
  return app
}
