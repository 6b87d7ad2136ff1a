// The `threadline` subcommands without a file of their own: migrate, seed, users create, tokens
// create and revoke (serve is server.ts; import, reset and export are import-data.ts, reset.ts and
// export-data.ts). All of them use DATABASE_URL exactly like the server, and bring the schema up
// to date before touching data.
import { OPERATOR, type Scope } from '../core/caller.js'
import type { Config } from '../config.js'
import { type Database, openDatabase } from '../db/create-database.js'
import { migrateToLatest } from '../db/migrate.js'
import { createMemoryEvents } from '../events/memory-events.js'
import { type AppTopics, createServices } from '../features.js'
import { createProgressBar } from './progress.js'
import { type SeedCounts, seedDatabase } from '../seed/seed-database.js'
import { listed } from './words.js'
import { CreateUserBody, type CreateUserInput } from '../users/users.schemas.js'
import { assertValid } from '../core/validation.js'

/**
 * The CLI's events: nobody listens in this process. A server's open connections learn of a token
 * revoked here through their periodic check of the tokens they hold (ConnectionRights).
 */
const events = createMemoryEvents<AppTopics>()

/** The services as the operator uses them: no password or sign-in allowance (provisioning belongs here, not over HTTP). */
const operatorServices = (config: Config, db: Database['db']) =>
  createServices({ db, events, passwordChanges: 'unlimited', scryptN: config.passwords.scryptN, tokenTtlMs: config.tokenTtlMs, signInAllowance: 'unlimited' })

async function withDatabase<T>(config: Config, run: (database: Database) => Promise<T>): Promise<T> {
  const database = openDatabase(config.database)
  try {
    await migrateToLatest(database)
    return await run(database)
  } finally {
    await database.close()
  }
}

export async function migrateCommand(config: Config): Promise<void> {
  const database = openDatabase(config.database)
  try {
    const { applied } = await migrateToLatest(database)
    console.log(applied.length === 0 ? 'The database is up to date.' : `Applied: ${applied.join(', ')}`)
  } finally {
    await database.close()
  }
}

/** The seed command's flags: the rows of each feature (`users`, …), the batch size and the PRNG's seed. */
export type SeedCommandOptions = SeedCounts & { batchSize: number; seed: number }

export async function seedCommand(config: Config, { batchSize, seed, ...counts }: SeedCommandOptions) {
  await withDatabase(config, async ({ db }) => {
    const started = performance.now()
    const bar = createProgressBar(process.stdout, 'seeding')
    const seeded = await seedDatabase(db, counts, { batchSize, seed, onProgress: (done, total) => bar.update(done, total) })
    bar.done()
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    console.log(`Seeded ${listed(Object.entries(seeded).map(([name, n]) => `${n} ${name}`))} in ${seconds} s.`)
  })
}

export async function createUserCommand(config: Config, input: Record<string, unknown>): Promise<void> {
  assertValid<CreateUserInput>(CreateUserBody, input)
  // The operator has no password allowance: provisioning many accounts belongs here, not over HTTP.
  const user = await withDatabase(config, ({ db }) => operatorServices(config, db).users.create(OPERATOR, input))
  console.log(JSON.stringify(user, null, 2))
}

export async function createTokenCommand(config: Config, user: string, ttlMs: number, scope: Scope = 'write'): Promise<void> {
  const issued = await withDatabase(config, ({ db }) => operatorServices(config, db).tokens.issueFor(user, ttlMs, scope))
  console.log(issued.token)
}

export async function revokeTokenCommand(config: Config, token: string): Promise<void> {
  await withDatabase(config, ({ db }) => operatorServices(config, db).tokens.revoke(token))
  console.error('Token revoked.')
}
