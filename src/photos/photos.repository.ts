// SQL for photos. Every function takes the executor first: the database or a transaction.
import type { AggregatePayment, AggregateQuery } from '../collections/aggregation.js'
import { aggregatePage } from '../db/aggregate-page.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { rowById, rowInsert, rowUpdate } from '../db/compiled-statements.js'
import type { RowPage } from '../collections/collection-page.js'
import { countPerParent, listPage, listWindowPerParent } from '../db/list-page.js'
import type { NewPhotoRow, PhotoRow, PhotoRowChanges } from './photos.table.js'
import type { ListWindow } from '../collections/pagination.js'

export const findPhotoById: (db: Db, id: number) => Promise<PhotoRow | undefined> = rowById((db) => db.selectFrom('photos').selectAll())

export function listPhotosOfAlbum(db: Db, albumId: number, query: CollectionQuery): Promise<RowPage<PhotoRow>> {
  return listPage<PhotoRow>(db, { from: photosOfAlbum, parentId: albumId, select: (q) => q.selectAll(), query, shape: 'photos of an album' })
}

/** The rows listPhotosOfAlbum lists, aggregated; or, without an album, listPhotos's. */
export function aggregatePhotos(db: Db, albumId: number | undefined, request: AggregateQuery, pay?: AggregatePayment) {
  return aggregatePage(db, { from: albumId === undefined ? everyPhoto : (executor) => photosOfAlbum(executor, albumId), request, pay })
}

const photosOfAlbum = (executor: Db, albumId: number) => executor.selectFrom('photos').where('album_id', '=', albumId)
const everyPhoto = (executor: Db) => executor.selectFrom('photos')

/** Every photo, across albums, in the query's order; the query's filters narrow it (`albumId` to one album's, by the (album_id, id) index). */
export function listPhotos(db: Db, query: CollectionQuery): Promise<RowPage<PhotoRow>> {
  return listPage<PhotoRow>(db, {
    from: (executor) => executor.selectFrom('photos'),
    select: (q) => q.selectAll(),
    query,
    shape: 'photos',
  })
}

/** How many photos each album has, by album id, each counted up to `atMost` (by the (album_id, id) index), in one statement. */
export function countPhotosOfAlbums(db: Db, albumIds: readonly number[], atMost: number): Promise<Map<number, number>> {
  if (albumIds.length === 0) return Promise.resolve(new Map<number, number>())
  return countPerParent(
    db.selectFrom('albums as parent').where('parent.id', 'in', albumIds),
    (eb) => eb.selectFrom('photos as p').whereRef('p.album_id', '=', 'parent.id'),
    atMost,
  )
}

/** The same window of each album's photos, in the window's id order, in one statement (see listPostsOfUsers). */
export function listPhotosOfAlbums(db: Db, albumIds: readonly number[], window: ListWindow): Promise<PhotoRow[]> {
  if (albumIds.length === 0) return Promise.resolve([])
  return listWindowPerParent(db, db.selectFrom('albums as parent'), { table: 'photos', parentColumn: 'album_id', ...window })
    .selectAll('photos')
    .where('parent.id', 'in', albumIds)
    .execute() as Promise<PhotoRow[]>
}

export const insertPhoto: (db: Db, row: NewPhotoRow) => Promise<PhotoRow> = rowInsert('photos')

/** Many photos in one statement, as their rows (RETURNING's order is the store's: see inInsertOrder). */
export function insertPhotos(db: Db, rows: readonly NewPhotoRow[]): Promise<PhotoRow[]> {
  return db.insertInto('photos').values(rows).returningAll().execute()
}

export const updatePhoto: (db: Db, id: number, changes: PhotoRowChanges) => Promise<PhotoRow> = rowUpdate('photos')

export async function deletePhoto(db: Db, id: number): Promise<void> {
  await db.deleteFrom('photos').where('id', '=', id).execute()
}
