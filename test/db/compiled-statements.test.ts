// A hot read is built once per shape and run with each call's values: every value reaches its own
// place among the parameters, a new shape (another count of ids) is built anew, a transaction's
// read is compiled with its handle's and a write transaction's apart. The insert of a row and its
// update by id are compiled once per set of columns, and what they changed is told; the update that
// writes only a change writes nothing when nothing differs. On the run's store.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { NoResultError, QueryCreator } from 'kysely'
import type { Change } from '../../src/db/changes.js'
import { compiledStatement, rowInsert, rowUpdate, rowUpdateIfChanged } from '../../src/db/compiled-statements.js'
import { type Database, openDatabase } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { writeTransaction } from '../../src/db/write-transaction.js'
import type { NewUserRow, UserRow, UserRowChanges } from '../../src/users/users.table.js'
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

  it('compiles a transaction’s read with its handle’s, and a write transaction’s apart, its values in place', async () => {
    builds = 0
    const all = [1, 2, 3, 4, 5]
    const read = await database.db
      .transaction()
      .execute(async (trx) => [names(await olderThan.all(trx, { ids: all, age: 35 })), names(await olderThan.all(trx, { ids: [...all].reverse(), age: 45 }))])
    expect(read).toEqual([
      ['Ben', 'Cy', 'Dee'],
      ['Cy', 'Dee'],
    ])
    expect(builds).toBe(1)
    expect(names(await olderThan.all(database.db, { ids: all, age: 0 }))).toEqual(['Ann', 'Ben', 'Cy', 'Dee'])
    expect(builds).toBe(1)
    // A write transaction's reads may lock their rows (lockForWrite, on PostgreSQL): compiled apart, once.
    const written = await writeTransaction(database.db, async (trx) => [
      names(await olderThan.all(trx, { ids: all, age: 50 })),
      names(await olderThan.all(trx, { ids: all, age: 60 })),
    ])
    expect(written).toEqual([['Cy', 'Dee'], ['Dee']])
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

describe('rowUpdate', () => {
  const updateUser = rowUpdate<UserRow, UserRowChanges>('users')
  const idOf = async (name: string) => (await database.db.selectFrom('users').select('id').where('name', '=', name).executeTakeFirstOrThrow()).id

  it('sets the columns given, returns the row, and tells the change as that row’s once committed', async () => {
    const ben = await idOf('Ben')
    const told: Change[] = []
    const stop = database.changes.listen((changes) => told.push(...changes))
    try {
      const row = await writeTransaction(database.db, async (trx) => {
        const updated = await updateUser(trx, ben, { age: 42, updated_at: '2025-02-01T00:00:00.000Z', avatar: undefined })
        expect(told).toEqual([])
        return updated
      })
      expect(row).toMatchObject({ id: ben, name: 'Ben', age: 42, avatar: null, updated_at: '2025-02-01T00:00:00.000Z' })
      expect(told).toEqual([{ kind: 'rows', table: 'users', ids: [ben] }])
    } finally {
      stop()
    }
  })

  it('is built once per set of columns and sends its one SQL text, whatever the values and the row', async () => {
    const [ann, cy] = [await idOf('Ann'), await idOf('Cy')]
    statements.length = 0
    const builds = vi.spyOn(QueryCreator.prototype, 'updateTable')
    try {
      await writeTransaction(database.db, (trx) => updateUser(trx, ann, { age: 31 }))
      await writeTransaction(database.db, (trx) => updateUser(trx, cy, { age: 53 }))
      expect(builds).toHaveBeenCalledTimes(1)
      await writeTransaction(database.db, (trx) => updateUser(trx, cy, { name: 'Cy', age: 52 }))
      expect(builds).toHaveBeenCalledTimes(2)
    } finally {
      builds.mockRestore()
    }
    const updates = statements.filter((text) => /^update/i.test(text))
    expect(updates).toHaveLength(3)
    expect(updates[0]).toBe(updates[1])
    expect(updates[2]).not.toBe(updates[0])
    const ages = await database.db.selectFrom('users').select(['name', 'age']).where('id', 'in', [ann, cy]).orderBy('id').execute()
    expect(ages).toEqual([
      { name: 'Ann', age: 31 },
      { name: 'Cy', age: 52 },
    ])
  })

  it('fails as Kysely would when there is no such row, writing nothing', async () => {
    const told: Change[] = []
    const stop = database.changes.listen((changes) => told.push(...changes))
    try {
      await expect(writeTransaction(database.db, (trx) => updateUser(trx, 999_999, { age: 1 }))).rejects.toBeInstanceOf(NoResultError)
      expect(told).toEqual([])
    } finally {
      stop()
    }
  })
})

describe('rowUpdateIfChanged', () => {
  const updateIfChanged = rowUpdateIfChanged<UserRow, UserRowChanges>('users')
  const rowOf = (name: string) => database.db.selectFrom('users').selectAll().where('name', '=', name).executeTakeFirstOrThrow()
  const STAMP = { updated_at: '2025-03-01T00:00:00.000Z' }

  it('writes the columns given and the stamp when one of them differs, in one statement, and tells that row’s change', async () => {
    const dee = await rowOf('Dee')
    const told: Change[] = []
    const stop = database.changes.listen((changes) => told.push(...changes))
    statements.length = 0
    try {
      // The name is the same, the age is not: both are written, with the stamp.
      const row = await updateIfChanged(database.db, dee.id, { name: 'Dee', age: 64, avatar: undefined }, { stamp: STAMP })
      expect(row).toMatchObject({ id: dee.id, name: 'Dee', age: 64, avatar: null, updated_at: STAMP.updated_at })
      expect(told).toEqual([{ kind: 'rows', table: 'users', ids: [dee.id] }])
      expect(statements.filter((text) => /^update/i.test(text))).toHaveLength(1)
      // A null written over a value differs from it too.
      expect(await updateIfChanged(database.db, dee.id, { age: null }, { stamp: { updated_at: '2025-03-02T00:00:00.000Z' } })).toMatchObject({ age: null })
      expect(await updateIfChanged(database.db, dee.id, { age: 63 }, { stamp: { updated_at: '2025-03-03T00:00:00.000Z' } })).toMatchObject({ age: 63 })
    } finally {
      stop()
    }
  })

  it('writes nothing, not even the stamp, when nothing differs or there is no such row; nothing to write sends nothing', async () => {
    const before = await rowOf('Dee')
    const told: Change[] = []
    const stop = database.changes.listen((changes) => told.push(...changes))
    statements.length = 0
    try {
      expect(
        await updateIfChanged(database.db, before.id, { name: before.name, age: before.age }, { stamp: { updated_at: '2099-01-01T00:00:00.000Z' } }),
      ).toBeUndefined()
      expect(await updateIfChanged(database.db, 999_999, { age: 1 }, { stamp: STAMP })).toBeUndefined()
      expect(statements).toHaveLength(2)
      expect(await updateIfChanged(database.db, before.id, { age: undefined }, { stamp: STAMP })).toBeUndefined()
      expect(statements).toHaveLength(2)
      expect(await rowOf('Dee')).toEqual(before)
      expect(told).toEqual([])
    } finally {
      stop()
    }
  })

  it('writes only a row that holds the values matched', async () => {
    const ann = await rowOf('Ann')
    const told: Change[] = []
    const stop = database.changes.listen((changes) => told.push(...changes))
    try {
      expect(await updateIfChanged(database.db, ann.id, { age: 70 }, { stamp: STAMP, matched: { name: 'Ben' } })).toBeUndefined()
      expect(await rowOf('Ann')).toEqual(ann)
      expect(told).toEqual([])
      expect(await updateIfChanged(database.db, ann.id, { age: 70 }, { stamp: STAMP, matched: { name: 'Ann' } })).toMatchObject({ id: ann.id, age: 70 })
      expect(told).toEqual([{ kind: 'rows', table: 'users', ids: [ann.id] }])
    } finally {
      stop()
    }
  })

  it('is built once per set of columns, whatever the values and the row', async () => {
    const [ann, cy] = [(await rowOf('Ann')).id, (await rowOf('Cy')).id]
    const updateIfChanged = rowUpdateIfChanged<UserRow, UserRowChanges>('users')
    const builds = vi.spyOn(QueryCreator.prototype, 'updateTable')
    try {
      await updateIfChanged(database.db, ann, { age: 32 }, { stamp: STAMP })
      await updateIfChanged(database.db, cy, { age: 54 }, { stamp: { updated_at: '2025-03-04T00:00:00.000Z' } })
      expect(builds).toHaveBeenCalledTimes(1)
      await updateIfChanged(database.db, cy, { name: 'Cy', age: 55 }, { stamp: STAMP })
      expect(builds).toHaveBeenCalledTimes(2)
    } finally {
      builds.mockRestore()
    }
    expect([(await rowOf('Ann')).age, (await rowOf('Cy')).age]).toEqual([32, 55])
  })
})

describe('rowInsert', () => {
  const insertUser = rowInsert<UserRow, NewUserRow>('users')
  const user = (name: string): NewUserRow => ({ name, email: `${name}@example.com`, age: null, role: 'user', created_at: AT, updated_at: AT })

  it('inserts the row, returns it as stored, and tells the rows added once committed, built once per set of columns', async () => {
    const told: Change[] = []
    const stop = database.changes.listen((changes) => told.push(...changes))
    statements.length = 0
    const builds = vi.spyOn(QueryCreator.prototype, 'insertInto')
    try {
      const [eve, fay] = await writeTransaction(database.db, async (trx) => {
        const rows = [await insertUser(trx, user('Eve')), await insertUser(trx, { ...user('Fay'), avatar: undefined })]
        expect(told).toEqual([])
        return rows
      })
      expect(eve).toMatchObject({ name: 'Eve', email: 'Eve@example.com', avatar: null, role: 'user', created_at: AT })
      expect(fay?.id).toBe((eve?.id ?? 0) + 1)
      expect(told).toEqual([{ kind: 'added', table: 'users' }])
      const gus = await writeTransaction(database.db, (trx) => insertUser(trx, { ...user('Gus'), age: 7 }))
      expect(gus).toMatchObject({ name: 'Gus', age: 7 })
      expect(builds).toHaveBeenCalledTimes(1)
      const inserts = statements.filter((text) => /^insert/i.test(text))
      expect(inserts).toHaveLength(3)
      expect(inserts[1]).toBe(inserts[0])
      expect(inserts[2]).toBe(inserts[0])
      const named = await database.db
        .selectFrom('users')
        .select('name')
        .where('id', 'in', [eve?.id ?? 0, fay?.id ?? 0, gus.id])
        .orderBy('id')
        .execute()
      expect(named.map((row) => row.name)).toEqual(['Eve', 'Fay', 'Gus'])
    } finally {
      builds.mockRestore()
      stop()
    }
  })
})
