// SQL for users. Every function takes the executor first: the database or a transaction.
import { sql } from 'kysely'
import type { AggregatePayment, AggregateQuery } from '../collections/aggregation.js'
import { aggregatePage } from '../db/aggregate-page.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { lockForWrite } from '../db/write-transaction.js'
import type { RowPage } from '../collections/collection-page.js'
import { listPage } from '../db/list-page.js'
import type { NewUserRow, UserRow, UserRowChanges } from './users.table.js'
import { type Columns, selecting } from '../db/projection.js'
import { compiledStatement, rowById, rowInsert, rowUpdate, rowUpdateIfChanged, type RowChangeConditions } from '../db/compiled-statements.js'

/** The users table with the columns given (the whole row without them); a row read so holds only those. */
function users(db: Db, columns: Columns<UserRow> | undefined) {
  const from = db.selectFrom('users')
  return selecting(columns)(from) as ReturnType<typeof from.selectAll>
}

export const findUserById: (db: Db, id: number, columns?: Columns<UserRow>) => Promise<UserRow | undefined> = rowById(users)

const usersByIds = compiledStatement<UserRow, { ids: readonly number[]; columns: Columns<UserRow> | undefined }>(
  ({ ids, columns }) => `${columns?.key ?? '*'}:${ids.length}`,
  (db, { ids, columns }, slot) =>
    users(db, columns).where(
      'id',
      'in',
      ids.map((_, i) => slot((args) => args.ids[i] as number)),
    ),
)

export function findUsersByIds(db: Db, ids: readonly number[], columns?: Columns<UserRow>): Promise<UserRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return usersByIds.all(db, { ids, columns })
}

/** Case-insensitive, served by the unique index on lower(email). */
export function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst()
}

export function listUsers(db: Db, query: CollectionQuery, columns?: Columns<UserRow>): Promise<RowPage<UserRow>> {
  return listPage<UserRow>(db, { from: everyUser, select: selecting(columns), query, shape: `users:${columns?.key ?? '*'}` })
}

/** The rows listUsers lists, aggregated. */
export function aggregateUsers(db: Db, request: AggregateQuery, pay?: AggregatePayment) {
  return aggregatePage(db, { from: everyUser, request, pay })
}

const everyUser = (executor: Db) => executor.selectFrom('users')

/** The admins, counted; in a write transaction they stay admins until it ends (the last-admin rule). */
export async function countAdmins(db: Db): Promise<number> {
  return (await lockForWrite(db, db.selectFrom('users').select('id').where('role', '=', 'admin')).execute()).length
}

export const insertUser: (db: Db, row: NewUserRow) => Promise<UserRow> = rowInsert('users')

export const updateUser: (db: Db, id: number, changes: UserRowChanges) => Promise<UserRow> = rowUpdate('users')

/** The user's row with `changes` set, where one of them is new to it (rowUpdateIfChanged); undefined when nothing was written. */
export const updateUserIfChanged: (
  db: Db,
  id: number,
  changes: UserRowChanges,
  conditions: RowChangeConditions<UserRowChanges>,
) => Promise<UserRow | undefined> = rowUpdateIfChanged('users')

export async function deleteUser(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}
