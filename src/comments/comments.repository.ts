// SQL for comments, always with their author's name.
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { listPage, type RowPage } from '../db/list-page.js'
import type { CommentRow, NewCommentRow } from '../db/tables.js'

export type CommentWithAuthorRow = CommentRow & { author_name: string }

function selectWithAuthor(db: Db) {
  return db
    .selectFrom('comments')
    .innerJoin('users', 'users.id', 'comments.author_id')
    .selectAll('comments')
    .select('users.name as author_name')
}

export function findCommentById(db: Db, id: number): Promise<CommentWithAuthorRow | undefined> {
  return selectWithAuthor(db).where('comments.id', '=', id).executeTakeFirst()
}

export function listCommentsOfPost(db: Db, postId: number, query: CollectionQuery): Promise<RowPage<CommentWithAuthorRow>> {
  return listPage<CommentWithAuthorRow>(db, {
    from: (executor) =>
      executor
        .selectFrom('comments')
        .innerJoin('users', 'users.id', 'comments.author_id')
        .where('comments.post_id', '=', postId),
    select: (q) => q.selectAll('comments').select('users.name as author_name'),
    query,
  })
}

export async function insertComment(db: Db, row: NewCommentRow): Promise<number> {
  const { id } = await db.insertInto('comments').values(row).returning('id').executeTakeFirstOrThrow()
  return id
}

export async function updateCommentContent(db: Db, id: number, content: string, updatedAt: string): Promise<void> {
  await db.updateTable('comments').set({ content, updated_at: updatedAt }).where('id', '=', id).execute()
}

export async function deleteComment(db: Db, id: number): Promise<void> {
  await db.deleteFrom('comments').where('id', '=', id).execute()
}
