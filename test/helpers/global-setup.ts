// Before the suite, once per run (vitest calls this once for the root and once per project; the
// first call does the work): when PostgreSQL answers, makes this run's own database for the tests'
// schemas, with pg_trgm installed once in its public schema. The teardown drops it. (dist/, which
// the CLI tests run, is compiled by the first test that needs it: dist.ts.)
import type pg from 'pg'
import { isAlive } from './process-alive.js'
import { answers, TEST_DATABASE_URL } from './services.js'
import { createTestDatabase, postgresUrlOf, withClient } from './test-store.js'

const DONE = 'THREADLINE_GLOBAL_SETUP_DONE'

export default async function setup(): Promise<() => Promise<void>> {
  if (process.env[DONE] !== undefined) return teardown
  process.env[DONE] = '1'
  if (!(await answers(TEST_DATABASE_URL, 5432))) return async () => {}

  const name = `threadline_test_${process.pid}`
  await withClient(TEST_DATABASE_URL, async (client) => {
    await dropStaleDatabases(client)
    await createTestDatabase(client, name)
  })
  await withClient(postgresUrlOf(name), async (client) => {
    const { rowCount } = await client.query(`select 1 from pg_available_extensions where name = 'pg_trgm'`)
    if (rowCount !== 0) await client.query('create extension if not exists pg_trgm schema public')
  })
  // Workers start after this and inherit the environment.
  process.env.THREADLINE_TEST_DATABASE = name
  return teardown
}

/** Drops this run's database; every call's teardown is this one (vitest may run any of them). */
async function teardown(): Promise<void> {
  const name = process.env.THREADLINE_TEST_DATABASE
  if (name === undefined) return
  delete process.env.THREADLINE_TEST_DATABASE
  await withClient(TEST_DATABASE_URL, (client) => client.query(`drop database if exists ${name} with (force)`))
}

/** Databases of earlier runs whose process is gone (a run that was killed never tore down). */
async function dropStaleDatabases(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ datname: string }>(`select datname from pg_database where datname ~ '^threadline_(test|t)_[0-9]+'`)
  for (const { datname } of rows) {
    const pid = Number(/^threadline_(?:test|t)_(\d+)/.exec(datname)?.[1])
    if (isAlive(pid)) continue
    await client.query(`drop database if exists ${datname} with (force)`)
  }
}
