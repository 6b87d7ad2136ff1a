// PostgreSQL as the store: what differs from SQLite and is not visible through the API alone — two
// processes migrating at once, instants and ids, the search index, an outage and the recovery, and
// database errors in the service's words. (The whole behavioural suite also runs on PostgreSQL:
// the `postgres` project of vitest.config.ts.)
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATA_SECTIONS } from '../../src/cli/data-sections.js'
import { parseCollectionQuery } from '../../src/collections/collection-query.js'
import { loadConfig } from '../../src/config.js'
import { type Database, openDatabase } from '../../src/db/create-database.js'
import type { Change } from '../../src/db/changes.js'
import { databaseAppError } from '../../src/db/database-errors.js'
import { readRows } from '../../src/db/direct-reads.js'
import { postgresFacts } from '../../src/db/dialect-facts.js'
import { MIGRATION_NAMES, migrateToLatest } from '../../src/db/migrate.js'
import { seedDatabase } from '../../src/seed/seed-database.js'
import { singleStatementWrite, writeTransaction } from '../../src/db/write-transaction.js'
import { findUserById, insertUser, listUsers, updateUser, updateUserIfChanged } from '../../src/users/users.repository.js'
import { UsersCollection } from '../../src/users/users.schemas.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { postgresUrl } from '../helpers/services.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'
import { until } from '../helpers/until.js'
import { freshDatabase, type TestDatabase } from '../helpers/test-store.js'

const server = await postgresUrl()

const open = (url: string, poolSize = 4): Database => openDatabase(loadConfig({ DATABASE_URL: url, DATABASE_POOL_SIZE: String(poolSize) }).database)

describe.runIf(server)('PostgreSQL', () => {
  let store: TestDatabase
  let database: Database
  beforeAll(async () => {
    store = await freshDatabase('postgres')
    database = open(store.url)
    await migrateToLatest(database)
  })
  afterAll(async () => {
    await database.close()
    await store.drop()
  })

  it('migrates once when two processes start at the same moment on an empty database', async () => {
    const fresh = await freshDatabase('postgres')
    const [a, b] = [open(fresh.url), open(fresh.url)]
    try {
      const reports = await Promise.all([migrateToLatest(a), migrateToLatest(b)])
      const applied = reports.map((r) => r.applied).sort((x, y) => y.length - x.length)
      expect(applied).toEqual([MIGRATION_NAMES, []])
      expect((await migrateToLatest(a)).applied).toEqual([])
    } finally {
      await a.close()
      await b.close()
      await fresh.drop()
    }
  })

  it("sees the tables of its own schema only, while another schema's are dropped", async () => {
    const other = await freshDatabase('postgres')
    const fresh = await freshDatabase('postgres')
    const [a, b] = [open(other.url), open(fresh.url)]
    try {
      await migrateToLatest(a)
      expect(await b.db.introspection.getTables({ withInternalKyselyTables: true })).toEqual([])
      const mine = await database.db.introspection.getTables()
      // Every data section's table, and those of the idempotency keys and the outside issuer's identities.
      expect(mine.map((table) => table.name).sort()).toEqual(
        [...DATA_SECTIONS.map(({ name }) => name), 'idempotency_callers', 'idempotency_keys', 'identities'].sort(),
      )
      expect(mine.find((table) => table.name === 'users')?.columns.find((column) => column.name === 'id')).toMatchObject({
        isAutoIncrementing: true,
        isNullable: false,
      })
      // The other schema's tables go while the fresh one migrates: its checks never read them.
      const dropping = (async () => {
        for (const { name } of [...DATA_SECTIONS].reverse()) await sql`drop table ${sql.table(name)} cascade`.execute(a.db)
      })()
      expect((await migrateToLatest(b)).applied).toEqual(MIGRATION_NAMES)
      await dropping
    } finally {
      await a.close()
      await b.close()
    }
  })

  it('reads instants back as ISO 8601 in UTC, exactly as written, and booleans as booleans', async () => {
    const at = '2026-03-04T05:06:07.089Z'
    const user = await database.db
      .insertInto('users')
      .values({ name: 'Instant', email: 'instant@example.com', role: 'user', created_at: at, updated_at: at })
      .returningAll()
      .executeTakeFirstOrThrow()
    expect(user.created_at).toBe(at)
    const todo = await database.db
      .insertInto('todos')
      .values({ user_id: user.id, text: 'x', completed: 1, created_at: at, updated_at: at })
      .returningAll()
      .executeTakeFirstOrThrow()
    expect(todo.completed).toBe(true)
  })

  it("reads instants the same whatever the URL asks of the session's date style and time zone", async () => {
    const url = new URL(store.url)
    url.searchParams.set('options', `${url.searchParams.get('options') ?? ''} -c DateStyle=SQL,DMY -c TimeZone=Asia/Kolkata`.trim())
    const odd = open(url.toString())
    let id = 0
    try {
      const at = '2026-07-08T23:45:01.234Z'
      const row = await odd.db
        .insertInto('users')
        .values({ name: 'Zone', email: 'zone@example.com', role: 'user', created_at: at, updated_at: at })
        .returning(['id', 'created_at'])
        .executeTakeFirstOrThrow()
      expect(row.created_at).toBe(at)
      id = row.id
      const read = await database.db.selectFrom('users').select('created_at').where('email', '=', 'zone@example.com').executeTakeFirstOrThrow()
      expect(read.created_at).toBe(at)
    } finally {
      await odd.close()
    }
    // A hot read runs past Kysely, on a connection straight from the pool: the first statement of a
    // new handle, it finds the session set all the same.
    const fresh = open(url.toString())
    try {
      expect((await findUserById(fresh.db, id))?.created_at).toBe('2026-07-08T23:45:01.234Z')
    } finally {
      await fresh.close()
    }
  })

  /**
   * What pg_prepared_statements lists on the connection a handle's reads run on: a read of its own,
   * run once (so not named itself), alone, on the reads' first connection as every read before it.
   */
  const preparedOnReadConnection = <Row>(handle: Database, text: string) => readRows<Row>(handle.db, text, [])

  /**
   * A handle with one connection to the pool, a user `email` of role `user`, and the v1 page of users `raw` asks for, with its total.
   */
  async function pageOnOneConnection(email: string, raw: Record<string, string>) {
    const single = open(store.url, 1)
    const at = new Date().toISOString()
    await single.db.insertInto('users').values({ name: email, email, role: 'user', created_at: at, updated_at: at }).execute()
    const options = { defaultMode: 'page' as const, withTotal: true, scope: '' }
    return { single, page: () => listUsers(single.db, parseCollectionQuery(UsersCollection, raw, options)) }
  }

  it("runs a collection's page as a statement prepared on its second run, planned once for every run after", async () => {
    const { single, page } = await pageOnOneConnection('paged@example.com', { role: 'user', sort: 'name', limit: '7' })
    try {
      const runs = 8
      for (let run = 0; run < runs; run++) expect((await page()).rows.length).toBeGreaterThan(0)
      const prepared = await preparedOnReadConnection<{ statement: string; generic_plans: string; custom_plans: string }>(
        single,
        `select statement, generic_plans, custom_plans from pg_prepared_statements where statement like '%threadline_page_total%'`,
      )
      expect(prepared).toHaveLength(1)
      const [statement] = prepared as [(typeof prepared)[number]]
      // Its size in the text (limit+1), the first page read as it is ordered, with no offset; the role bound as a value.
      expect(statement.statement).toMatch(/order by "name" asc, "id" asc limit 8$/)
      expect(statement.statement).not.toMatch(/offset/)
      // The first run is not named; PostgreSQL plans the next five for their values, then keeps one plan.
      expect(Number(statement.generic_plans) + Number(statement.custom_plans)).toBe(runs - 1)
      expect(Number(statement.generic_plans)).toBeGreaterThan(0)
    } finally {
      await single.close()
    }
  })

  it("reads a page prepared before its table gained a column (another instance's migration) as the table is now", async () => {
    // One connection: the one whose prepared statement goes stale.
    const { single, page } = await pageOnOneConnection('stale@example.com', { role: 'user', sort: 'email', limit: '5' })
    try {
      const before = await page()
      expect(before.rows.length).toBeGreaterThan(0)
      await page()
      const prepared = await preparedOnReadConnection<{ statement: string }>(single, 'select statement from pg_prepared_statements')
      expect(prepared.map((row) => row.statement)).toEqual([expect.stringMatching(/^select \*/)])
      await sql`alter table users add column nickname text`.execute(database.db)
      try {
        // PostgreSQL refuses the prepared statement now ("cached plan must not change result type").
        const after = await page()
        expect(after.rows.map((user) => user.id)).toEqual(before.rows.map((user) => user.id))
        expect(await page()).toEqual(after)
      } finally {
        await sql`alter table users drop column nickname`.execute(database.db)
      }
    } finally {
      await single.close()
    }
  })

  it("writes rows read, inserted and updated before their table gained a column (another instance's migration)", async () => {
    // One connection in the pool: the one whose statements would be prepared, and go stale.
    const single = open(store.url, 1)
    try {
      const at = new Date().toISOString()
      const insert = (email: string) =>
        writeTransaction(single.db, (trx) => insertUser(trx, { name: email, email, age: null, role: 'user', created_at: at, updated_at: at }))
      const setAge = (id: number, age: number) =>
        writeTransaction(single.db, async (trx) => {
          const row = await findUserById(trx, id)
          return updateUser(trx, row?.id ?? 0, { age, updated_at: at })
        })
      const { id } = await insert('migrated-under@example.com')
      await setAge(id, 1)
      await setAge(id, 2)
      await sql`alter table users add column nickname text`.execute(database.db)
      try {
        // A statement prepared before would fail now ("cached plan must not change result type"),
        // and a write's transaction cannot run it again: a write transaction's are not prepared by name.
        expect(await setAge(id, 3)).toMatchObject({ id, age: 3, nickname: null })
        expect(await insert('migrated-after@example.com')).toMatchObject({ email: 'migrated-after@example.com', nickname: null })
      } finally {
        await sql`alter table users drop column nickname`.execute(database.db)
      }
    } finally {
      await single.close()
    }
  })

  it('runs a write of one statement in a transaction, whose NOTIFY another instance hears at its commit', async () => {
    const other = open(store.url, 1)
    const heard: Change[] = []
    const stop = other.changes.listen((changes) => heard.push(...changes))
    try {
      await until(() => other.changes.heard(), 5000)
      const at = new Date().toISOString()
      const { id } = await writeTransaction(database.db, (trx) =>
        insertUser(trx, { name: 'One', email: 'one-statement@example.com', age: 1, role: 'user', created_at: at, updated_at: at }),
      )
      const steps: string[] = []
      database.observeStatements((text) => {
        steps.push(text.split(' ')[0]!.toLowerCase())
        return () => {}
      })
      heard.length = 0
      const row = await singleStatementWrite(database.db, (trx) => updateUserIfChanged(trx, id, { age: 2 }, { stamp: { updated_at: at } }))
      expect(row).toMatchObject({ id, age: 2 })
      expect(steps).toEqual(['begin', 'update', 'commit'])
      await until(() => heard.some((change) => change.kind === 'rows' && change.ids.includes(id)), 5000)
    } finally {
      stop()
      await other.close()
    }
  })

  it('never hands out an id twice, even after the newest row is deleted', async () => {
    const at = new Date().toISOString()
    const insert = (email: string) =>
      database.db.insertInto('users').values({ name: 'Id', email, role: 'user', created_at: at, updated_at: at }).returning('id').executeTakeFirstOrThrow()
    const first = await insert('id-1@example.com')
    await database.db.deleteFrom('users').where('id', '=', first.id).execute()
    const second = await insert('id-2@example.com')
    expect(second.id).toBeGreaterThan(first.id)
  })

  it('serves a search with a trigram index (pg_trgm), matching without regard to ASCII case', async () => {
    const at = new Date().toISOString()
    await database.db.insertInto('users').values({ name: 'Grace Hopper', email: 'grace@example.com', role: 'user', created_at: at, updated_at: at }).execute()
    const search = (db: Database['db']) =>
      db
        .selectFrom('users')
        .select('name')
        .where(postgresFacts.matches(sql.ref('name'), '%hOPP%'))
    expect(await search(database.db).execute()).toEqual([{ name: 'Grace Hopper' }])
    // On a table this small a scan is cheaper; forbid it for one transaction to see the index is usable.
    const plan = await database.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx)
      const rows = await search(trx).explain<{ 'QUERY PLAN': string }>()
      return rows.map((row) => row['QUERY PLAN']).join('\n')
    })
    expect(plan).toContain('users_name_trgm_idx')
  })

  it("gathers the planner's statistics of what a bulk load wrote, in the load's transaction", async () => {
    const fresh = await freshDatabase('postgres')
    const loaded = open(fresh.url)
    try {
      await migrateToLatest(loaded)
      const estimated = async () =>
        (await sql<{ rows: number }>`select reltuples::int as rows from pg_class where oid = 'users'::regclass`.execute(loaded.db)).rows[0]?.rows
      // Never analyzed: PostgreSQL knows no count (-1) and plans for an empty table.
      expect(await estimated()).toBe(-1)
      // A seed this large is a bulk load (seedDatabase's BULK_LOAD_ROWS).
      await seedDatabase(loaded.db, { users: 10_000 })
      expect(await estimated()).toBe(10_000)
      // What the statistics are for: a page of users by name is read from the index, not sorted.
      const plan = await sql<{ 'QUERY PLAN': string }>`explain select id from users where role = 'user' order by name, id limit 21`.execute(loaded.db)
      expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/Index (Only )?Scan using users_role_name_idx/)
    } finally {
      await loaded.close()
      await fresh.drop()
    }
  })

  it('names a foreign key that no longer holds as NOT_FOUND, and a lost connection as SERVICE_UNAVAILABLE', async () => {
    const at = new Date().toISOString()
    const failure = await database.db
      .insertInto('todos')
      .values({ user_id: 2_000_000_000, text: 'orphan', completed: 0, created_at: at, updated_at: at })
      .execute()
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    expect(databaseAppError(failure)).toMatchObject({ code: 'NOT_FOUND' })

    const unreachable = open('postgres://postgres@127.0.0.1:1/nowhere')
    const noServer = await unreachable.db
      .selectFrom('users')
      .select('id')
      .execute()
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    await unreachable.close()
    expect(databaseAppError(noServer)).toMatchObject({ code: 'SERVICE_UNAVAILABLE' })
  })
})

describe.runIf(server)('PostgreSQL out of reach', () => {
  let proxy: TcpProxy
  let t: TestApp
  let store: TestDatabase
  beforeAll(async () => {
    store = await freshDatabase('postgres')
    const real = new URL(store.url)
    proxy = await startTcpProxy({ host: real.hostname, port: Number(real.port || 5432) })
    const relayed = new URL(store.url)
    relayed.hostname = '127.0.0.1'
    relayed.port = String(proxy.port)
    t = await buildTestApp({ DATABASE_URL: relayed.toString(), DATABASE_QUERY_TIMEOUT_MS: '1000' })
  })
  afterAll(async () => {
    await proxy.restore()
    await t.close()
    await proxy.close()
    await store.drop()
  })

  it('answers 503 with Retry-After while it is gone, loses no acknowledged write, and recovers by itself', async () => {
    const write = (text: string) => t.request({ method: 'POST', url: `/users/${t.bob.id}/todos`, token: t.tokens.bob, json: { text } })
    expect((await write('before')).statusCode).toBe(201)

    await proxy.cut()
    for (const res of [await t.request({ method: 'GET', url: '/users' }), await write('during')]) {
      expect(res.statusCode).toBe(503)
      expect(res.headers['retry-after']).toBe('1')
      expect(res.json()).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message: 'The database cannot be reached; retry in a moment' } })
    }
    const graphql = await t.request({ method: 'POST', url: '/graphql', json: { query: '{ users { id } }' } })
    expect(graphql.json().errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE')

    await proxy.restore()
    expect((await write('after')).statusCode).toBe(201)
    const texts = (await t.request({ method: 'GET', url: `/users/${t.bob.id}/todos` })).json().data.map((todo: { text: string }) => todo.text)
    expect(texts).toEqual(['before', 'after'])
  })

  it('answers 503 when the server stops answering with the connections up (a frozen network), and recovers', async () => {
    const write = (text: string) => t.request({ method: 'POST', url: `/users/${t.alice.id}/todos`, token: t.tokens.alice, json: { text } })
    expect((await write('before the freeze')).statusCode).toBe(201)
    proxy.freeze()
    try {
      // Each waits out the query timeout (1 s here) or the connection timeout (3 s), not forever.
      for (const res of [await t.request({ method: 'GET', url: '/users' }), await write('during the freeze')]) {
        expect(res.statusCode).toBe(503)
        expect(res.headers['retry-after']).toBe('1')
        expect(res.json().error.code).toBe('SERVICE_UNAVAILABLE')
      }
    } finally {
      await proxy.restore()
    }
    // The restore dropped every connection the freeze held, the pool's idle ones too, which the
    // pool learns of as their close is read (a request taking one first is answered 503); once
    // the server says it is ready again, writes succeed.
    await until(async () => (await t.request({ method: 'GET', url: '/ready' })).statusCode === 200)
    expect((await write('after the freeze')).statusCode).toBe(201)
    const texts = (await t.request({ method: 'GET', url: `/users/${t.alice.id}/todos` })).json().data.map((todo: { text: string }) => todo.text)
    expect(texts).toEqual(['before the freeze', 'after the freeze'])
  })
})
