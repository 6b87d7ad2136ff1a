// SQL for posts. Every function takes the executor first: the database or a transaction.
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { listPage, type RowPage } from '../db/list-page.js'
import type { NewPostRow, PostRow, PostRowChanges } from '../db/tables.js'

export function findPostById(db: Db, id: number): Promise<PostRow | undefined> {
  return db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirst()
}

/** A user's posts; drafts only when the caller may see them. */
export function listPostsOfUser(
  db: Db,
  userId: number,
  query: CollectionQuery,
  options: { includeDrafts: boolean },
): Promise<RowPage<PostRow>> {
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
