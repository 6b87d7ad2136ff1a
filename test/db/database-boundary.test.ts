// Database errors are translated once, at the database boundary: the handle openDatabase returns
// throws the database busy or out of reach (a lock held elsewhere, a statement cut short, a server
// gone) as the AppError a client should see, the driver's error as its cause, so a service call
// fails in the service's words with no transport in between. Runs on SQLite, and on PostgreSQL when
// a server is at hand (as test/db/postgres.test.ts).
import SqliteDatabase from 'better-sqlite3'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { toAppError } from '../../src/http/to-app-error.js'
import { type Database, openDatabase } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { writeTransaction } from '../../src/db/write-transaction.js'
import { isAppError } from '../../src/errors.js'
import { createTodosService } from '../../src/todos/todos.service.js'
import { postgresUrl } from '../helpers/services.js'
import { freshDatabase, sqlitePath, type TestDatabase, type TestStore, withClient } from '../helpers/test-store.js'

const open = (url: string): Database => openDatabase(loadConfig({ DATABASE_URL: url }).database)

/** What a promise was rejected with (undefined when it was not). */
const failureOf = (work: Promise<unknown>): Promise<unknown> =>
  work.then(
    () => undefined,
    (error: unknown) => error,
  )

/** The same URL, with `-c setting=value` added to what the server applies to each session. */
function withSessionSetting(url: string, setting: string): string {
  const withSetting = new URL(url)
  withSetting.searchParams.set('options', `${withSetting.searchParams.get('options') ?? ''} -c ${setting}`.trim())
  return withSetting.toString()
}

const STORES: TestStore[] = (await postgresUrl()) === undefined ? ['sqlite'] : ['sqlite', 'postgres']

describe.each(STORES)('the database boundary (%s)', (kind) => {
  let store: TestDatabase
  let database: Database
  let userId: number
  const at = new Date().toISOString()
  const owner = () => ({ userId, role: 'user' as const, tokenId: 0, scope: 'write' as const })

  beforeAll(async () => {
    store = await freshDatabase(kind)
    database = open(store.url)
    await migrateToLatest(database)
    const user = await database.db
      .insertInto('users')
      .values({ name: 'Owner', email: 'owner@example.com', role: 'user', created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow()
    userId = user.id
  })
  afterAll(async () => {
    await database.close()
    await store.drop()
  })

  it("leaves a refused foreign key as the driver's error, which toAppError names NOT_FOUND", async () => {
    const failure = await failureOf(
      database.db.insertInto('todos').values({ user_id: 2_000_000_000, text: 'orphan', completed: 0, created_at: at, updated_at: at }).execute(),
    )
    expect(isAppError(failure)).toBe(false)
    expect(failure).toMatchObject({ code: kind === 'postgres' ? '23503' : 'SQLITE_CONSTRAINT_FOREIGNKEY' })
    const warnings: unknown[] = []
    const scope = { id: 'req-1', log: { warn: (fields: object) => void warnings.push(fields), error: () => undefined } }
    expect(toAppError(failure, scope)).toMatchObject({ code: 'NOT_FOUND', status: 404, message: 'What this write refers to no longer exists' })
    expect(warnings).toEqual([{ err: failure }])
  })

  it('lets an error it does not expect (a bug) pass as the driver threw it', async () => {
    const failure = await failureOf(sql`select * from no_such_table`.execute(database.db))
    expect(failure).toBeInstanceOf(Error)
    expect(isAppError(failure)).toBe(false)
  })

  it.runIf(kind === 'sqlite')('fails a service call with SERVICE_UNAVAILABLE while another process holds the write lock, writing nothing', async () => {
    const todos = createTodosService({ db: database.db })
    const other = new SqliteDatabase(sqlitePath(loadConfig({ DATABASE_URL: store.url }).database))
    other.exec('BEGIN IMMEDIATE')
    let failure: unknown
    try {
      failure = await failureOf(todos.create(owner(), userId, { text: 'while locked' }))
    } finally {
      other.exec('ROLLBACK')
      other.close()
    }
    expect(isAppError(failure)).toBe(true)
    expect(failure).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, message: 'The database is busy; retry in a moment' })
    expect((failure as Error).cause).toMatchObject({ code: 'SQLITE_BUSY' })
    const texts = await database.db.selectFrom('todos').select('text').where('user_id', '=', userId).execute()
    expect(texts).not.toContainEqual({ text: 'while locked' })
  })

  it.runIf(kind === 'postgres')('fails a service call with SERVICE_UNAVAILABLE when a lock keeps its statement past statement_timeout', async () => {
    const impatient = open(withSessionSetting(store.url, 'statement_timeout=200'))
    try {
      const todos = createTodosService({ db: impatient.db })
      const failure = await withClient(store.url, async (other) => {
        await other.query('begin')
        await other.query('lock table todos in exclusive mode')
        try {
          return await failureOf(todos.create(owner(), userId, { text: 'while locked' }))
        } finally {
          await other.query('rollback')
        }
      })
      expect(isAppError(failure)).toBe(true)
      expect(failure).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, message: 'The database is busy; retry in a moment' })
      expect((failure as Error).cause).toMatchObject({ code: '57014' })
    } finally {
      await impatient.close()
    }
  })

  it.runIf(kind === 'postgres')('fails a service call with SERVICE_UNAVAILABLE when the server cannot be reached', async () => {
    const nowhere = open('postgres://postgres@127.0.0.1:1/nowhere')
    try {
      const failure = await failureOf(createTodosService({ db: nowhere.db }).create(owner(), userId, { text: 'unreachable' }))
      expect(isAppError(failure)).toBe(true)
      expect(failure).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'The database cannot be reached; retry in a moment' })
    } finally {
      await nowhere.close()
    }
  })

  // The server ends one of two transactions that lock the same rows in opposite orders (40P01);
  // writeTransaction runs it again, recognizing the deadlock through its translation.
  it.runIf(kind === 'postgres')('still runs again a write that lost a deadlock, though the handle translated the error', async () => {
    const ids = await Promise.all(
      ['a', 'b'].map(async (name) => {
        const row = await database.db
          .insertInto('users')
          .values({ name, email: `deadlock-${name}@example.com`, role: 'user', created_at: at, updated_at: at })
          .returning('id')
          .executeTakeFirstOrThrow()
        return row.id
      }),
    )
    let arrived = 0
    let release!: () => void
    const bothHoldOne = new Promise<void>((resolve) => (release = resolve))
    let attempts = 0
    const write = (first: number, second: number) =>
      writeTransaction(database.db, async (trx) => {
        attempts++
        await trx.updateTable('users').set({ updated_at: new Date().toISOString() }).where('id', '=', first).execute()
        if (++arrived === 2) release()
        await bothHoldOne
        await trx.updateTable('users').set({ updated_at: new Date().toISOString() }).where('id', '=', second).execute()
        return 'written'
      })
    const [one, two] = ids as [number, number]
    expect(await Promise.all([write(one, two), write(two, one)])).toEqual(['written', 'written'])
    // At least the one run again; on a busy machine the retry may take the row back before the
    // survivor does and lose a second deadlock, and is run again once more.
    expect(attempts).toBeGreaterThanOrEqual(3)
  })
})
