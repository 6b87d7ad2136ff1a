// A hot read is built once per shape and run with each call's values: every value reaches its own
// place among the parameters, a new shape (another count of ids) is built anew, and a transaction's
// read is built each time. On the run's store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { compiledStatement } from '../../src/db/compiled-statements.js'
import { type Database, openDatabase } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { freshDatabase, type TestDatabase } from '../helpers/test-store.js'

const AT = '2025-01-01T00:00:00.000Z'

let temp: TestDatabase
let database: Database
const statements: string[] = []

beforeAll(async () => {
  temp = await freshDatabase()
  database = openDatabase(loadConfig({ DATABASE_URL: temp.url }).database, { onQuery: (sql) => statements.push(sql) })
  await migrateToLatest(database)
  for (const [name, age] of [
    ['Ann', 30],
    ['Ben', 41],
    ['Cy', 52],
    ['Dee', 63],
  ] as const) {
    await database.db
      .insertInto('users')
      .values({ name, email: `${name}@example.com`, age, role: 'user', created_at: AT, updated_at: AT })
      .execute()
  }
})
afterAll(async () => {
  await database.close()
  await temp.drop()
})

describe('compiledStatement', () => {
  let builds = 0
  const olderThan = compiledStatement<{ name: string }, { ids: readonly number[]; age: number }>(
    ({ ids }) => String(ids.length),
    (db, { ids }, slot) => {
      builds++
      return db
        .selectFrom('users')
        .select('name')
        .where(
          'id',
          'in',
          ids.map((_, i) => slot((args) => args.ids[i] as number)),
        )
        .where(
          'age',
          '>',
          slot((args) => args.age),
        )
        .orderBy('id')
    },
  )
  const names = (rows: { name: string }[]) => rows.map((row) => row.name)

  it('runs each call with its own values, built once per shape', async () => {
    builds = 0
    expect(names(await olderThan.all(database.db, { ids: [1, 2, 3], age: 35 }))).toEqual(['Ben', 'Cy'])
    expect(names(await olderThan.all(database.db, { ids: [2, 3, 4], age: 50 }))).toEqual(['Cy', 'Dee'])
    expect(names(await olderThan.all(database.db, { ids: [4, 1, 2], age: 0 }))).toEqual(['Ann', 'Ben', 'Dee'])
    expect(builds).toBe(1)
    expect(names(await olderThan.all(database.db, { ids: [1, 4], age: 40 }))).toEqual(['Dee'])
    expect(builds).toBe(2)
    expect((await olderThan.first(database.db, { ids: [1], age: 99 }))?.name).toBeUndefined()
  })

  it('builds a transaction’s read each time, with its values in place', async () => {
    builds = 0
    const read = await database.db
      .transaction()
      .execute(async (trx) => [names(await olderThan.all(trx, { ids: [1, 2, 3], age: 35 })), names(await olderThan.all(trx, { ids: [1, 2, 3], age: 45 }))])
    expect(read).toEqual([['Ben', 'Cy'], ['Cy']])
    expect(builds).toBe(2)
  })

  it('never reads what a transaction still open on the store has written, and rolls back', async () => {
    let updated!: () => void
    const written = new Promise<void>((resolve) => (updated = resolve))
    let finish!: () => void
    const finished = new Promise<void>((resolve) => (finish = resolve))
    const transaction = database.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ name: 'Ann, not committed' }).where('name', '=', 'Ann').execute()
      updated()
      await finished
      throw new Error('rolled back')
    })
    await written
    // On SQLite the one connection is inside the transaction: the read waits for it to end.
    const read = olderThan.all(database.db, { ids: [1], age: 0 })
    finish()
    await expect(transaction).rejects.toThrow('rolled back')
    expect(names(await read)).toEqual(['Ann'])
  })

  it('tells the statement observer of each read, its end included', async () => {
    const seen: string[] = []
    database.observeStatements((sql) => {
      seen.push(`start ${sql}`)
      return (error) => seen.push(error === undefined ? 'end' : 'failed')
    })
    await olderThan.all(database.db, { ids: [1, 2], age: 1 })
    expect(seen).toEqual([`start ${statements.at(-1) ?? ''}`, 'end'])
  })

  it('sends the same SQL text for one shape, whatever the values', async () => {
    statements.length = 0
    await olderThan.all(database.db, { ids: [1, 2], age: 1 })
    await olderThan.all(database.db, { ids: [3, 4], age: 2 })
    expect(statements).toHaveLength(2)
    expect(statements[0]).toBe(statements[1])
  })
})
