// PostgreSQL's direct reads run pipelined on connections of their own (src/db/pipelined-reads.ts):
// many reads at once share two connections rather than taking one each from the pool, a read
// does not wait long behind slow ones (the pool takes it), a read that fails fails alone, and a
// connection that breaks is opened anew by the next read.
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { type Database, openDatabase } from '../../src/db/create-database.js'
import { readRows } from '../../src/db/direct-reads.js'
import { STALLED_MS } from '../../src/db/pipelined-reads.js'
import { isAppError } from '../../src/errors.js'
import { postgresUrl } from '../helpers/services.js'
import { freshDatabase, type TestDatabase } from '../helpers/test-store.js'
import { until } from '../helpers/until.js'

const server = await postgresUrl()

describe.runIf(server)('pipelined reads on PostgreSQL', () => {
  let store: TestDatabase
  let database: Database
  beforeAll(async () => {
    store = await freshDatabase('postgres')
    database = openDatabase(loadConfig({ DATABASE_URL: store.url, DATABASE_POOL_SIZE: '10' }).database)
  })
  afterAll(async () => {
    await database.close()
    await store.drop()
  })

  const backendOf = async () => (await readRows<{ pid: number }>(database.db, 'select pg_backend_pid() as pid', []))[0]!.pid

  it('runs forty reads at once on two connections of their own, not on the pool', async () => {
    const pids = await Promise.all(Array.from({ length: 40 }, backendOf))
    const connections = [...new Set(pids)]
    expect(connections.length).toBeGreaterThanOrEqual(1)
    expect(connections.length).toBeLessThanOrEqual(2)
    const named = await sql<{ pid: number; application_name: string }>`
      select pid, application_name from pg_stat_activity where pid in (${sql.join(connections)})`.execute(database.db)
    // None of them ran on the pool, whose connections are named 'threadline'.
    expect(named.rows.map((row) => row.application_name)).toEqual(connections.map(() => 'threadline reads'))
  })

  it('runs a read on the pool while both of its connections are held by slow statements', async () => {
    let slowDone = false
    const slow = Promise.all([0, 1].map(() => readRows(database.db, 'select pg_sleep(0.3) as slept', []))).finally(() => (slowDone = true))
    // Past STALLED_MS with nothing answered, each connection is taken to be held by its slow read.
    await new Promise((resolve) => setTimeout(resolve, STALLED_MS * 4))
    const pid = await backendOf()
    expect(slowDone).toBe(false)
    const named = await sql<{ application_name: string }>`select application_name from pg_stat_activity where pid = ${pid}`.execute(database.db)
    expect(named.rows).toEqual([{ application_name: 'threadline' }])
    await slow
    // Answered again, the connections take the reads once more.
    const again = await sql<{ application_name: string }>`select application_name from pg_stat_activity where pid = ${await backendOf()}`.execute(database.db)
    expect(again.rows).toEqual([{ application_name: 'threadline reads' }])
  })

  it('fails a read that fails alone, and answers the reads sent with it', async () => {
    const reads = await Promise.allSettled([
      readRows(database.db, 'select 1 as one', []),
      readRows(database.db, 'select 1 / 0 as never', []),
      readRows(database.db, 'select 2 as two', []),
      readRows(database.db, 'select 3 as three', []),
    ])
    expect(reads.map((read) => read.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled'])
    expect((reads[3] as PromiseFulfilledResult<unknown>).value).toEqual([{ three: 3 }])
    expect(String((reads[1] as PromiseRejectedResult).reason)).toMatch(/division by zero/)
  })

  it('opens a connection anew once its own broke; the reads on it meanwhile are SERVICE_UNAVAILABLE', async () => {
    const before = await backendOf()
    await sql`select pg_terminate_backend(${before})`.execute(database.db)
    const failures: unknown[] = []
    await until(async () => {
      try {
        return (await backendOf()) !== before
      } catch (error) {
        failures.push(error)
        return false
      }
    })
    for (const failure of failures) expect(isAppError(failure) && failure.code === 'SERVICE_UNAVAILABLE').toBe(true)
  })

  it('answers a read that comes once the handle is closing SERVICE_UNAVAILABLE', async () => {
    const closing = openDatabase(loadConfig({ DATABASE_URL: store.url }).database)
    expect(await readRows(closing.db, 'select 1 as one', [])).toEqual([{ one: 1 }])
    await closing.close()
    const late = await readRows(closing.db, 'select 1 as one', []).catch((error: unknown) => error)
    expect(isAppError(late) && late.code === 'SERVICE_UNAVAILABLE').toBe(true)
  })
})
