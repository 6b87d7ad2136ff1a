// The rules for albums: everyone reads them; only their owner or an admin writes. Deleting an album
// deletes its photos.
import { type Caller, ownerToMatch, requireOwnerOrAdmin } from '../core/caller.js'
import { type CollectionPage, groupByParent, toCollectionPage } from '../collections/collection-page.js'
import type { AggregatePayment, AggregateQuery, AggregateResult } from '../collections/aggregation.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { toIsoTimestamp } from '../db/tables.js'
import type { AlbumRow, AlbumRowChanges } from './albums.table.js'
import { notFound } from '../errors.js'
import { type IdInput, parseId } from '../core/ids.js'
import type { ListWindow } from '../collections/pagination.js'
import { checkPrecondition, type WriteOptions } from '../core/preconditions.js'
import { loadUser, loadUserId, pageOfUser } from '../users/users.public.js'
import * as repo from './albums.repository.js'
import type { Album, CreateAlbumInput, UpdateAlbumInput } from './albums.schemas.js'
import { singleStatementWrite, writeTransaction } from '../db/write-transaction.js'
import { inInsertOrder, insertInChunks } from '../db/bulk-insert.js'
import { parentsOfItems } from '../core/bulk.js'

export type AlbumsService = ReturnType<typeof createAlbumsService>

export function createAlbumsService({ db }: { db: Db }) {
  return {
    async list(_caller: Caller | null, userId: IdInput, query: CollectionQuery): Promise<CollectionPage<Album>> {
      return toCollectionPage(query, await pageOfUser(db, userId, (ownerId) => repo.listAlbumsOfUser(db, ownerId, query)), toAlbum)
    },

    /** Every album, across users (anyone reads albums). The query's filters narrow it (`userId` to one user's). */
    async listAll(_caller: Caller | null, query: CollectionQuery): Promise<CollectionPage<Album>> {
      return toCollectionPage(query, await repo.listAlbums(db, query), toAlbum)
    },

    /** The albums `list` (with `userId`) or `listAll` would list, aggregated as asked; `pay` is charged for the rows read. */
    async aggregate(_caller: Caller | null, userId: IdInput | undefined, request: AggregateQuery, pay?: AggregatePayment): Promise<AggregateResult> {
      return repo.aggregateAlbums(db, userId === undefined ? undefined : await loadUserId(db, userId), request, pay)
    },

    /** `userId` undefined: the album is found by its id alone. */
    async get(_caller: Caller | null, userId: IdInput | undefined, albumId: IdInput): Promise<Album> {
      return toAlbum(await loadAlbum(db, userId, albumId))
    },

    /** The albums with these ids, by id; missing ones are absent (a photo's album, in one read for a page). */
    async getMany(_caller: Caller | null, ids: readonly number[]): Promise<Map<number, Album>> {
      return new Map((await repo.findAlbumsByIds(db, ids)).map((row) => [row.id, toAlbum(row)]))
    },

    /** The same window of each user's albums, by user id, in one read. */
    async listOfUsers(_caller: Caller | null, userIds: readonly number[], window: ListWindow): Promise<Map<number, Album[]>> {
      return groupByParent(await repo.listAlbumsOfUsers(db, userIds, window), (row) => row.user_id, toAlbum)
    },

    /** How many albums each user has, by user id, each counted up to `atMost`, in one read. */
    async countOfUsers(_caller: Caller | null, userIds: readonly number[], atMost: number): Promise<Map<number, number>> {
      return repo.countAlbumsOfUsers(db, userIds, atMost)
    },

    async create(caller: Caller | null, userId: IdInput, input: CreateAlbumInput): Promise<Album> {
      return writeTransaction(db, async (trx) => {
        const owner = await loadOwner(trx, caller, userId)
        return toAlbum(await repo.insertAlbum(trx, newAlbumRow(owner.id, input, new Date().toISOString())))
      })
    },

    /** A bulk write: every album, each for its own owner, checked as create checks one, in one transaction, all or nothing, in the order given. */
    async createMany(caller: Caller | null, items: readonly NewAlbum[]): Promise<Album[]> {
      return writeTransaction(db, async (trx) => {
        const owners = await parentsOfItems(
          items.map((item) => item.userId),
          (userId) => loadOwner(trx, caller, userId),
        )
        const now = new Date().toISOString()
        const rows = items.map((item, i) => newAlbumRow(owners[i]!.id, item.input, now))
        return (await insertInChunks(rows, async (chunk) => inInsertOrder(await repo.insertAlbums(trx, chunk)))).map(toAlbum)
      })
    },

    /** `userId` undefined: the album is found by its id alone. */
    async update(caller: Caller | null, userId: IdInput | undefined, albumId: IdInput, input: UpdateAlbumInput, options?: WriteOptions<Album>): Promise<Album> {
      // No If-Match to check: one statement, its owner a condition, made only if the title
      // changes; when it wrote nothing, the album is read below to tell why.
      const id = parseId(albumId)
      const matched = options?.ifMatch === undefined ? ownerToMatch(caller, userId) : undefined
      if (id !== undefined && matched !== undefined) {
        const stamp = { updated_at: new Date().toISOString() }
        const written = await singleStatementWrite(db, (trx) => repo.updateAlbumIfChanged(trx, id, { title: input.title }, { stamp, matched }))
        if (written !== undefined) return toAlbum(written)
      }
      return writeTransaction(db, async (trx) => {
        const album = await loadAlbum(trx, userId, albumId)
        requireOwnerOrAdmin(caller, album.user_id, 'change this album')
        checkPrecondition(options, () => toAlbum(album))
        const changes: AlbumRowChanges = {}
        if (input.title !== undefined && input.title !== album.title) changes.title = input.title
        if (Object.keys(changes).length === 0) return toAlbum(album)
        changes.updated_at = new Date().toISOString()
        return toAlbum(await repo.updateAlbum(trx, album.id, changes))
      })
    },

    /** `userId` undefined: the album is found by its id alone. Its photos go with it. */
    async remove(caller: Caller | null, userId: IdInput | undefined, albumId: IdInput, options?: WriteOptions<Album>): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const album = await loadAlbum(trx, userId, albumId)
        requireOwnerOrAdmin(caller, album.user_id, 'delete this album')
        checkPrecondition(options, () => toAlbum(album))
        await repo.deleteAlbum(trx, album.id)
      })
    },
  }
}

/**
 * The album at /users/{userId}/albums/{albumId} (or with this id, when `userId` is undefined), or
 * NOT_FOUND; on PostgreSQL its row is locked inside a write transaction, so a photo added to it
 * and its deletion do not cross.
 */
export async function loadAlbum(db: Db, userId: IdInput | undefined, albumId: IdInput): Promise<AlbumRow> {
  const id = parseId(albumId)
  const album = id === undefined ? undefined : await repo.findAlbumById(db, id)
  if (album === undefined || (userId !== undefined && album.user_id !== parseId(userId))) throw notFound('Album')
  return album
}

export function toAlbum(row: AlbumRow): Album {
  return {
    id: row.id,
    userId: row.user_id,
    title: row.title,
    createdAt: toIsoTimestamp(row.created_at),
    updatedAt: toIsoTimestamp(row.updated_at),
  }
}

/** One album of a bulk write, and its owner. */
export interface NewAlbum {
  readonly userId: IdInput
  readonly input: CreateAlbumInput
}

/** The owner of albums to be written: the user, when the caller may write their albums (checked in the insert's transaction). */
async function loadOwner(trx: Db, caller: Caller | null, userId: IdInput) {
  const owner = await loadUser(trx, userId)
  requireOwnerOrAdmin(caller, owner.id, "write this user's albums")
  return owner
}

const newAlbumRow = (userId: number, input: CreateAlbumInput, now: string) => ({ user_id: userId, title: input.title, created_at: now, updated_at: now })
