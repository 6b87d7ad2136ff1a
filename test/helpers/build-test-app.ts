// Builds the real app (the same buildApp as production) on a fresh database of the run's store (a
// SQLite file in a temp folder, or a PostgreSQL schema: test-store.ts), with three users and their
// tokens: an admin, and two ordinary users, alice and bob.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse, RouteOptions } from 'fastify'
import { type AppDependencies, buildApp } from '../../src/app.js'
import type { PipelineObserver } from '../../src/http/pipeline-observer.js'
import type { Events } from '../../src/events/events.js'
import type { AppTopics } from '../../src/features.js'
import { OPERATOR, type Scope } from '../../src/core/caller.js'
import { type Config, loadConfig } from '../../src/config.js'
import { openDatabase, type Database } from '../../src/db/create-database.js'
import { createMemoryEvents } from '../../src/events/memory-events.js'
import type { FairScheduler } from '../../src/limits/fair-scheduler.js'
import { prepareDatabase } from '../../src/server.js'
import { createTokensService } from '../../src/tokens/tokens.service.js'
import type { CreateUserInput, User } from '../../src/users/users.schemas.js'
import { createUsersService } from '../../src/users/users.service.js'
import { createTestClock, type TestClock } from './test-clock.js'
import { freshDatabase, type TestStore } from './test-store.js'

export interface TestApp {
  app: FastifyInstance
  config: Config
  /** A second handle on the same database, for fixtures and for looking at what was stored. */
  database: Database
  /** The clock of the app's windows (rate limit, allowances, delivery budgets): `advance` moves it. */
  clock: TestClock
  /** The scheduler the app's requests acquire their slots from; undefined when HTTP_MAX_IN_FLIGHT=0. */
  scheduler: FairScheduler | undefined
  admin: User
  alice: User
  bob: User
  tokens: { admin: string; alice: string; bob: string }
  createUser(input: CreateUserInput): Promise<User>
  tokenFor(userId: number, ttlMs?: number, scope?: Scope): Promise<string>
  /** app.inject with a bearer token and a JSON body. */
  request(options: InjectOptions & { token?: string; json?: unknown }): Promise<LightMyRequestResponse>
  close(): Promise<void>
}

export interface TestAppOptions {
  /** Called with the SQL of every statement the app runs. */
  onQuery?: (sql: string) => void
  /** Receives the app's log lines (set LOG_LEVEL in env to see them). */
  logStream?: { write(line: string): void }
  /** The events adapter the app publishes to and subscribes on. */
  events?: Events<AppTopics>
  /** Told of every route as it is registered. */
  onRoute?: (route: RouteOptions & { prefix: string }) => void
  /** The store, when not the run's (a test comparing the two builds one of each). */
  store?: TestStore
  /** Changes the configuration read from `env` in what no variable sets (an issuer's key cooldown). */
  configure?: (config: Config) => Config
  /** Conventions the app leaves out, as `npm run bench` has it do to price each. */
  measureWithout?: AppDependencies['measureWithout']
  /** Told of each HTTP stage's hook as it runs (the pipeline's order). */
  observePipeline?: PipelineObserver
}

export async function buildTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const store = await freshDatabase(options.store)
  const loaded = loadConfig({
    DATABASE_URL: store.url,
    LOG_LEVEL: 'silent',
    SEED_DEMO_DATA: 'false',
    // Out of the way of tests that are not about rate limiting.
    RATE_LIMIT_MAX: '1000000',
    RATE_LIMIT_AUTHENTICATED_MAX: '1000000',
    // So are the password allowances: fuzzing signs in with wrong credentials hundreds of times
    // from one address, and sets passwords as one admin (test/users/password-allowances.test.ts
    // sets them low).
    SIGN_IN_MAX_PER_ADDRESS: '1000000',
    SIGN_IN_MAX_PER_ACCOUNT_AND_ADDRESS: '1000000',
    SIGN_IN_MAX_PER_ACCOUNT: '2000000',
    // So is shedding by the loop's delay: a test worker's loop is held by builds and by the other
    // worker's share of two cores, not by load (test/limits/load-shedding.test.ts sets it).
    HTTP_SHED_LOOP_DELAY_MS: '0',
    PASSWORD_CHANGES_MAX: '1000000',
    // The real algorithm at a low cost (about 1 ms a derivation instead of 250): every app gives
    // a fixture user a password. Tests of the hashing's own bounds set the shipped cost.
    PASSWORD_SCRYPT_N: '1024',
    ...env,
  })
  const config = options.configure?.(loaded) ?? loaded
  const served = openDatabase(config.database, { onQuery: options.onQuery })
  await prepareDatabase(served, config)
  const clock = createTestClock()
  let scheduler: FairScheduler | undefined
  const app = await buildApp(config, {
    database: served,
    logStream: options.logStream,
    events: options.events,
    onRoute: options.onRoute,
    now: clock.now,
    onScheduler: (created) => (scheduler = created),
    measureWithout: options.measureWithout,
    observePipeline: options.observePipeline,
  })
  // Fixtures are written on a connection of their own, their changes told to the app's handle at once.
  const database = openDatabase(config.database, { shareChangesOf: served })
  // Fixtures are written as another process would (the CLI): no open connection hears of them.
  const fixtureEvents = createMemoryEvents<AppTopics>()
  // Fixtures are set up as the operator would (no allowance): only the app's requests are counted.
  const users = createUsersService({ db: database.db, events: fixtureEvents, passwordChanges: 'unlimited', scryptN: config.passwords.scryptN })
  const tokens = createTokensService({ db: database.db, events: fixtureEvents, users, tokenTtlMs: config.tokenTtlMs, signInAllowance: 'unlimited' })

  const createUser = (input: CreateUserInput) => users.create(OPERATOR, input)
  const tokenFor = async (userId: number, ttlMs = 3_600_000, scope: Scope = 'write') => (await tokens.issueFor(String(userId), ttlMs, scope)).token

  const admin = await createUser({ name: 'Ada Admin', email: 'ada@example.com', role: 'admin' })
  const alice = await createUser({ name: 'Alice', email: 'alice@example.com', password: 'correct horse battery' })
  const bob = await createUser({ name: 'Bob', email: 'bob@example.com', age: 41 })

  return {
    app,
    config,
    database,
    clock,
    scheduler,
    admin,
    alice,
    bob,
    tokens: { admin: await tokenFor(admin.id), alice: await tokenFor(alice.id), bob: await tokenFor(bob.id) },
    createUser,
    tokenFor,
    request({ token, json, headers, ...options }) {
      return app.inject({
        ...options,
        headers: {
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          ...(json === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(json === undefined ? {} : { payload: JSON.stringify(json) }),
      })
    },
    async close() {
      await app.close()
      await database.close()
      await store.drop()
    },
  }
}
