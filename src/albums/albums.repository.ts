// SQL for albums. Every function takes the executor first: the database or a transaction.
import type { AggregatePayment, AggregateQuery } from '../collections/aggregation.js'
import { aggregatePage } from '../db/aggregate-page.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { rowById, rowInsert, rowUpdate, rowUpdateIfChanged, type RowChangeConditions } from '../db/compiled-statements.js'
import type { RowPage } from '../collections/collection-page.js'
import { countPerParent, listPage, listWindowPerParent } from '../db/list-page.js'
import type { AlbumRow, AlbumRowChanges, NewAlbumRow } from './albums.table.js'
import type { ListWindow } from '../collections/pagination.js'

export const findAlbumById: (db: Db, id: number) => Promise<AlbumRow | undefined> = rowById((db) => db.selectFrom('albums').selectAll())

export function findAlbumsByIds(db: Db, ids: readonly number[]): Promise<AlbumRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db.selectFrom('albums').selectAll().where('id', 'in', ids).execute()
}

export function listAlbumsOfUser(db: Db, userId: number, query: CollectionQuery): Promise<RowPage<AlbumRow>> {
  return listPage<AlbumRow>(db, { from: albumsOfUser, parentId: userId, select: (q) => q.selectAll(), query, shape: 'albums of a user' })
}

/** The rows listAlbumsOfUser lists, aggregated; or, without a user, listAlbums's. */
export function aggregateAlbums(db: Db, userId: number | undefined, request: AggregateQuery, pay?: AggregatePayment) {
  return aggregatePage(db, { from: userId === undefined ? everyAlbum : (executor) => albumsOfUser(executor, userId), request, pay })
}

const albumsOfUser = (executor: Db, userId: number) => executor.selectFrom('albums').where('user_id', '=', userId)
const everyAlbum = (executor: Db) => executor.selectFrom('albums')

/** Every album, across users, in the query's order; the query's filters narrow it (`userId` to one user's, by the (user_id, id) index). */
export function listAlbums(db: Db, query: CollectionQuery): Promise<RowPage<AlbumRow>> {
  return listPage<AlbumRow>(db, {
    from: (executor) => executor.selectFrom('albums'),
    select: (q) => q.selectAll(),
    query,
    shape: 'albums',
  })
}

/** How many albums each user has, by user id, each counted up to `atMost` (by the (user_id, id) index), in one statement. */
export function countAlbumsOfUsers(db: Db, userIds: readonly number[], atMost: number): Promise<Map<number, number>> {
  if (userIds.length === 0) return Promise.resolve(new Map<number, number>())
  return countPerParent(
    db.selectFrom('users as parent').where('parent.id', 'in', userIds),
    (eb) => eb.selectFrom('albums as a').whereRef('a.user_id', '=', 'parent.id'),
    atMost,
  )
}

/** The same window of each user's albums, in the window's id order, in one statement (see listPostsOfUsers). */
export function listAlbumsOfUsers(db: Db, userIds: readonly number[], window: ListWindow): Promise<AlbumRow[]> {
  if (userIds.length === 0) return Promise.resolve([])
  return listWindowPerParent(db, db.selectFrom('users as parent'), { table: 'albums', parentColumn: 'user_id', ...window })
    .selectAll('albums')
    .where('parent.id', 'in', userIds)
    .execute() as Promise<AlbumRow[]>
}

export const insertAlbum: (db: Db, row: NewAlbumRow) => Promise<AlbumRow> = rowInsert('albums')

/** Many albums in one statement, as their rows (RETURNING's order is the store's: see inInsertOrder). */
export function insertAlbums(db: Db, rows: readonly NewAlbumRow[]): Promise<AlbumRow[]> {
  return db.insertInto('albums').values(rows).returningAll().execute()
}

export const updateAlbum: (db: Db, id: number, changes: AlbumRowChanges) => Promise<AlbumRow> = rowUpdate('albums')

/** The album's row with `changes` set, where one of them is new to it and it holds `matched` (rowUpdateIfChanged); undefined when nothing was written. */
export const updateAlbumIfChanged: (
  db: Db,
  id: number,
  changes: AlbumRowChanges,
  conditions: RowChangeConditions<AlbumRowChanges>,
) => Promise<AlbumRow | undefined> = rowUpdateIfChanged('albums')

/** Its photos go with it (their foreign key cascades). */
export async function deleteAlbum(db: Db, id: number): Promise<void> {
  await db.deleteFrom('albums').where('id', '=', id).execute()
}
