// The rules for photos: everyone reads them; only the owner of their album or an admin adds,
// changes or deletes them (a photo has no owner of its own: its album's is the one that counts).
import { type Caller, requireOwnerOrAdmin } from '../core/caller.js'
import { type CollectionPage, groupByParent, toCollectionPage } from '../collections/collection-page.js'
import type { AggregatePayment, AggregateQuery, AggregateResult } from '../collections/aggregation.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { toIsoTimestamp } from '../db/tables.js'
import type { PhotoRow, PhotoRowChanges } from './photos.table.js'
import { notFound } from '../errors.js'
import { type IdInput, parseId } from '../core/ids.js'
import type { ListWindow } from '../collections/pagination.js'
import { checkPrecondition, type WriteOptions } from '../core/preconditions.js'
import { type AlbumRow, loadAlbum } from '../albums/albums.public.js'
import * as repo from './photos.repository.js'
import type { CreatePhotoInput, Photo, UpdatePhotoInput } from './photos.schemas.js'
import { writeTransaction } from '../db/write-transaction.js'
import { inInsertOrder, insertInChunks } from '../db/bulk-insert.js'
import { parentsOfItems } from '../core/bulk.js'

export type PhotosService = ReturnType<typeof createPhotosService>

/** Where a photo lives: /users/{userId}/albums/{albumId}/photos; without userId, the album is found by its id. */
export interface AlbumPath {
  userId?: IdInput
  albumId: IdInput
}

export function createPhotosService({ db }: { db: Db }) {
  return {
    async list(_caller: Caller | null, path: AlbumPath, query: CollectionQuery): Promise<CollectionPage<Photo>> {
      const album = await loadAlbum(db, path.userId, path.albumId)
      return toCollectionPage(query, await repo.listPhotosOfAlbum(db, album.id, query), toPhoto)
    },

    /** Every photo, across albums (anyone reads photos). The query's filters narrow it (`albumId` to one album's). */
    async listAll(_caller: Caller | null, query: CollectionQuery): Promise<CollectionPage<Photo>> {
      return toCollectionPage(query, await repo.listPhotos(db, query), toPhoto)
    },

    /** The photos `list` (with `path`) or `listAll` would list, aggregated as asked; `pay` is charged for the rows read. */
    async aggregate(_caller: Caller | null, path: AlbumPath | undefined, request: AggregateQuery, pay?: AggregatePayment): Promise<AggregateResult> {
      return repo.aggregatePhotos(db, path === undefined ? undefined : (await loadAlbum(db, path.userId, path.albumId)).id, request, pay)
    },

    /** `path` undefined: the photo is found by its id alone. */
    async get(_caller: Caller | null, path: AlbumPath | undefined, photoId: IdInput): Promise<Photo> {
      return toPhoto((await loadPhoto(db, path, photoId)).photo)
    },

    /** The same window of each album's photos, by album id, in one read. */
    async listOfAlbums(_caller: Caller | null, albumIds: readonly number[], window: ListWindow): Promise<Map<number, Photo[]>> {
      return groupByParent(await repo.listPhotosOfAlbums(db, albumIds, window), (row) => row.album_id, toPhoto)
    },

    /** How many photos each album has, by album id, each counted up to `atMost`, in one read. */
    async countOfAlbums(_caller: Caller | null, albumIds: readonly number[], atMost: number): Promise<Map<number, number>> {
      return repo.countPhotosOfAlbums(db, albumIds, atMost)
    },

    async create(caller: Caller | null, path: AlbumPath, input: CreatePhotoInput): Promise<Photo> {
      return writeTransaction(db, async (trx) => {
        const album = await loadWritableAlbum(trx, caller, path)
        return toPhoto(await repo.insertPhoto(trx, newPhotoRow(album.id, input, new Date().toISOString())))
      })
    },

    /** A bulk write: every photo, each in its own album, checked as create checks one, in one transaction, all or nothing, in the order given. */
    async createMany(caller: Caller | null, items: readonly NewPhoto[]): Promise<Photo[]> {
      return writeTransaction(db, async (trx) => {
        const albums = await parentsOfItems(
          items.map((item) => item.path),
          (path) => loadWritableAlbum(trx, caller, path),
        )
        const now = new Date().toISOString()
        const rows = items.map((item, i) => newPhotoRow(albums[i]!.id, item.input, now))
        return (await insertInChunks(rows, async (chunk) => inInsertOrder(await repo.insertPhotos(trx, chunk)))).map(toPhoto)
      })
    },

    /** `path` undefined: the photo is found by its id alone. */
    async update(caller: Caller | null, path: AlbumPath | undefined, photoId: IdInput, input: UpdatePhotoInput, options?: WriteOptions<Photo>): Promise<Photo> {
      return writeTransaction(db, async (trx) => {
        const { album, photo } = await loadPhoto(trx, path, photoId)
        requireOwnerOrAdmin(caller, album.user_id, 'change the photos of this album')
        checkPrecondition(options, () => toPhoto(photo))
        const changes: PhotoRowChanges = {}
        if (input.title !== undefined && input.title !== photo.title) changes.title = input.title
        if (input.url !== undefined && input.url !== photo.url) changes.url = input.url
        if (input.thumbnailUrl !== undefined && input.thumbnailUrl !== photo.thumbnail_url) changes.thumbnail_url = input.thumbnailUrl
        if (Object.keys(changes).length === 0) return toPhoto(photo)
        changes.updated_at = new Date().toISOString()
        return toPhoto(await repo.updatePhoto(trx, photo.id, changes))
      })
    },

    /** `path` undefined: the photo is found by its id alone. */
    async remove(caller: Caller | null, path: AlbumPath | undefined, photoId: IdInput, options?: WriteOptions<Photo>): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const { album, photo } = await loadPhoto(trx, path, photoId)
        requireOwnerOrAdmin(caller, album.user_id, 'delete the photos of this album')
        checkPrecondition(options, () => toPhoto(photo))
        await repo.deletePhoto(trx, photo.id)
      })
    },
  }
}

/**
 * The photo with this id and its album (whose owner decides who writes it): in the album the path
 * names (NOT_FOUND for the album first, as the path reads), or in whichever album it is when there
 * is no path.
 */
async function loadPhoto(db: Db, path: AlbumPath | undefined, photoId: IdInput): Promise<{ album: AlbumRow; photo: PhotoRow }> {
  const album = path === undefined ? undefined : await loadAlbum(db, path.userId, path.albumId)
  const id = parseId(photoId)
  const photo = id === undefined ? undefined : await repo.findPhotoById(db, id)
  if (photo === undefined || (album !== undefined && photo.album_id !== album.id)) throw notFound('Photo')
  return { album: album ?? (await loadAlbum(db, undefined, photo.album_id)), photo }
}

export function toPhoto(row: PhotoRow): Photo {
  return {
    id: row.id,
    albumId: row.album_id,
    title: row.title,
    url: row.url,
    thumbnailUrl: row.thumbnail_url,
    createdAt: toIsoTimestamp(row.created_at),
    updatedAt: toIsoTimestamp(row.updated_at),
  }
}

/** One photo of a bulk write, and its album. */
export interface NewPhoto {
  readonly path: AlbumPath
  readonly input: CreatePhotoInput
}

/** The album photos are added to, when the caller may: read (and, on PostgreSQL, locked) before the insert refers to it. */
async function loadWritableAlbum(trx: Db, caller: Caller | null, path: AlbumPath) {
  const album = await loadAlbum(trx, path.userId, path.albumId)
  requireOwnerOrAdmin(caller, album.user_id, 'add photos to this album')
  return album
}

const newPhotoRow = (albumId: number, input: CreatePhotoInput, now: string) => ({
  album_id: albumId,
  title: input.title,
  url: input.url,
  thumbnail_url: input.thumbnailUrl,
  created_at: now,
  updated_at: now,
})
