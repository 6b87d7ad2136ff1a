// A page read by keyset takes several statements (one per tier, and the count in v1). They run in
// one read transaction: a write committed between them must not show a row twice or hide it.
import SqliteDatabase from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseCollectionQuery } from '../../src/collections/collection-query.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { Tables } from '../../src/db/tables.js'
import { listUsers } from '../../src/users/users.repository.js'
import { UsersCollection } from '../../src/users/users.schemas.js'
import { freshSqliteFile, sqlitePath, type TestDatabase } from '../helpers/test-store.js'

const T0 = '2025-01-01T00:00:00.000Z'
const T1 = '2025-02-01T00:00:00.000Z'
const T2 = '2025-03-01T00:00:00.000Z'

let temp: TestDatabase
let path: string
beforeAll(async () => {
  temp = freshSqliteFile()
  const config = loadConfig({ DATABASE_URL: temp.url })
  path = sqlitePath(config.database)
  const setup = openDatabase(config.database)
  await migrateToLatest(setup)
  for (let i = 1; i <= 8; i++) {
    const at = i <= 4 ? T0 : T1
    await setup.db
      .insertInto('users')
      .values({ name: `U${i}`, email: `u${i}@example.com`, role: 'user', created_at: at, updated_at: at })
      .execute()
  }
  await setup.close()
})
afterAll(() => temp.drop())

describe('listPage', () => {
  it('reads every tier of a cursor page from one snapshot', async () => {
    const other = new SqliteDatabase(path)
    let interfered = false
    const db = new Kysely<Tables>({
      dialect: new SqliteDialect({ database: new SqliteDatabase(path) }),
      log: (event) => {
        // Right after the first tier, another connection moves user 4 to the end of the order.
        if (!interfered && event.level === 'query' && event.query.sql.includes('"updated_at" =')) {
          interfered = true
          other.prepare('update users set updated_at = ? where name = ?').run(T2, 'U4')
        }
      },
    })
    try {
      const options = { defaultMode: 'cursor' as const, withTotal: false, scope: '' }
      const first = await listUsers(db, parseCollectionQuery(UsersCollection, { sort: 'updatedAt', limit: '3' }, options))
      expect(first.rows.map((u) => u.name)).toEqual(['U1', 'U2', 'U3'])
      const raw = { sort: 'updatedAt', limit: '10', cursor: first.nextCursor as string }
      const second = await listUsers(db, parseCollectionQuery(UsersCollection, raw, options))
      expect(interfered).toBe(true)
      expect(second.rows.map((u) => u.name)).toEqual(['U4', 'U5', 'U6', 'U7', 'U8'])
    } finally {
      other.close()
      await db.destroy()
    }
  })
})
