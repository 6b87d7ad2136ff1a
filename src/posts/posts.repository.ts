// SQL for posts. Every function takes the executor first: the database or a transaction.
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { factsOf, type WindowBuilder } from '../db/dialect-facts.js'
import { forWrite } from '../db/write-transaction.js'
import { countPerParent, listPage, type RowPage } from '../db/list-page.js'
import type { NewPostRow, PostRow, PostRowChanges } from '../db/tables.js'
import type { ListWindow } from '../collections/pagination.js'
import { type DraftVisibility, visible } from './post-visibility.js'

export function findPostById(db: Db, id: number): Promise<PostRow | undefined> {
  return forWrite(db, db.selectFrom('posts').selectAll().where('id', '=', id)).executeTakeFirst()
}

export function findPostsByIds(db: Db, ids: readonly number[], visibility: DraftVisibility): Promise<PostRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db.selectFrom('posts').selectAll().where('id', 'in', ids).where(visible('posts', visibility)).execute()
}

/**
 * The same window of each user's posts, in the window's id order, in one statement: for each user, the ids of
 * the window by the (user_id, id) index, then those posts by key. The cost follows the window,
 * never the size of a user's whole list.
 */
export function listPostsOfUsers(db: Db, userIds: readonly number[], window: ListWindow, visibility: DraftVisibility): Promise<PostRow[]> {
  if (userIds.length === 0) return Promise.resolve([])
  const windowIds = (eb: WindowBuilder) =>
    eb
      .selectFrom('posts as p')
      .select('p.id')
      .whereRef('p.user_id', '=', 'parent.id')
      .where(visible('p', visibility))
      .orderBy('p.id', window.order ?? 'asc')
      .limit(window.limit)
      .offset(window.offset)
  return factsOf(db)
    .joinWindow(db.selectFrom('users as parent'), 'posts', windowIds)
    .selectAll('posts')
    .where('parent.id', 'in', userIds)
    .orderBy('posts.id', window.order ?? 'asc')
    .execute() as Promise<PostRow[]>
}

/** How many posts of each user the reader sees, by user id, each counted up to `atMost` (by the (user_id, id) index), in one statement. */
export function countPostsOfUsers(db: Db, userIds: readonly number[], visibility: DraftVisibility, atMost: number): Promise<Map<number, number>> {
  if (userIds.length === 0) return Promise.resolve(new Map<number, number>())
  return countPerParent(
    db.selectFrom('users as parent').where('parent.id', 'in', userIds),
    (eb) => eb.selectFrom('posts as p').whereRef('p.user_id', '=', 'parent.id').where(visible('p', visibility)),
    atMost,
  )
}

/** A user's posts; drafts only when the caller may see them. */
export function listPostsOfUser(db: Db, userId: number, query: CollectionQuery, options: { includeDrafts: boolean }): Promise<RowPage<PostRow>> {
  return listPage<PostRow>(db, {
    from: (executor) => {
      const mine = executor.selectFrom('posts').where('user_id', '=', userId)
      return options.includeDrafts ? mine : mine.where('status', '=', 'published')
    },
    select: (q) => q.selectAll(),
    query,
  })
}

export function insertPost(db: Db, row: NewPostRow): Promise<PostRow> {
  return db.insertInto('posts').values(row).returningAll().executeTakeFirstOrThrow()
}

export function updatePost(db: Db, id: number, changes: PostRowChanges): Promise<PostRow> {
  return db.updateTable('posts').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
}

export async function deletePost(db: Db, id: number): Promise<void> {
  await db.deleteFrom('posts').where('id', '=', id).execute()
}
