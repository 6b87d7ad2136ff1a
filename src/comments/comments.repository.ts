// SQL for comments, always with their author's name (none for a guest comment).
import type { AggregatePayment, AggregateQuery } from '../collections/aggregation.js'
import { aggregatePage } from '../db/aggregate-page.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { toIsoTimestamp } from '../db/tables.js'
import { rowById } from '../db/compiled-statements.js'
import type { RowPage } from '../collections/collection-page.js'
import { countPerParent, listPage, listWindowPerParent } from '../db/list-page.js'
import type { Comment } from './comments.schemas.js'
import type { CommentRow, NewCommentRow } from './comments.table.js'
import type { ListWindow } from '../collections/pagination.js'
import { type DraftVisibility, visibilityShape, visible } from '../posts/posts.public.js'

/** `author_name` is null for a guest comment (author_id null). */
export type CommentWithAuthorRow = CommentRow & { author_name: string | null }

/** A comment as the API shows it, from its row. */
export function toComment(row: CommentWithAuthorRow): Comment {
  return {
    id: row.id,
    postId: row.post_id,
    authorId: row.author_id,
    author: row.author_id === null ? null : { id: row.author_id, name: row.author_name as string },
    email: row.email,
    content: row.content,
    createdAt: toIsoTimestamp(row.created_at),
    updatedAt: toIsoTimestamp(row.updated_at),
  }
}

function selectWithAuthor(db: Db) {
  return db.selectFrom('comments').leftJoin('users', 'users.id', 'comments.author_id').selectAll('comments').select('users.name as author_name')
}

export const findCommentById: (db: Db, id: number) => Promise<CommentWithAuthorRow | undefined> = rowById(selectWithAuthor, 'comments.id', 'comments')

export function listCommentsOfPost(db: Db, postId: number, query: CollectionQuery): Promise<RowPage<CommentWithAuthorRow>> {
  return listPage<CommentWithAuthorRow>(db, {
    from: commentsOfPost,
    parentId: postId,
    select: (q) => q.selectAll('comments').select('users.name as author_name'),
    query,
    shape: 'comments of a post',
  })
}

/**
 * Every comment on a post the reader sees, across posts, in the query's order; the query's filters
 * narrow it (`postId` to one post's, `authorId` to one author's, each by its (…, id) index).
 */
export function listComments(db: Db, query: CollectionQuery, visibility: DraftVisibility): Promise<RowPage<CommentWithAuthorRow>> {
  return listPage<CommentWithAuthorRow>(db, {
    from: visibleComments(visibility),
    select: (q) => q.selectAll('comments').select('users.name as author_name'),
    query,
    shape: `comments:${visibilityShape(visibility)}`,
  })
}

/** The rows listCommentsOfPost lists (the post's, checked visible), aggregated; or, without a post, listComments's. */
export function aggregateComments(db: Db, postId: number | undefined, request: AggregateQuery, visibility: DraftVisibility, pay?: AggregatePayment) {
  return aggregatePage(db, { from: postId === undefined ? visibleComments(visibility) : (executor) => commentsOfPost(executor, postId), request, pay })
}

const commentsOfPost = (executor: Db, postId: number) =>
  executor.selectFrom('comments').leftJoin('users', 'users.id', 'comments.author_id').where('comments.post_id', '=', postId)

const visibleComments = (visibility: DraftVisibility) => (executor: Db) =>
  executor
    .selectFrom('comments')
    .leftJoin('users', 'users.id', 'comments.author_id')
    .innerJoin('posts', 'posts.id', 'comments.post_id')
    .where(visible('posts', visibility))

/**
 * The same window of comments on each post the reader may see, in the window's id order, in one statement:
 * per post, the window by the (post_id, id) index (listWindowPerParent).
 */
export function listCommentsOfPosts(db: Db, postIds: readonly number[], window: ListWindow, visibility: DraftVisibility): Promise<CommentWithAuthorRow[]> {
  if (postIds.length === 0) return Promise.resolve([])
  return listWindowPerParent(db, db.selectFrom('posts as parent'), { table: 'comments', parentColumn: 'post_id', ...window })
    .leftJoin('users', 'users.id', 'comments.author_id')
    .selectAll('comments')
    .select('users.name as author_name')
    .where('parent.id', 'in', postIds)
    .where(visible('parent', visibility))
    .execute() as Promise<CommentWithAuthorRow[]>
}

/** How many comments each post the reader may see has, by post id, each counted up to `atMost` (by the (post_id, id) index), in one statement. */
export function countCommentsOfPosts(db: Db, postIds: readonly number[], visibility: DraftVisibility, atMost: number): Promise<Map<number, number>> {
  if (postIds.length === 0) return Promise.resolve(new Map<number, number>())
  return countPerParent(
    db.selectFrom('posts as parent').where('parent.id', 'in', postIds).where(visible('parent', visibility)),
    (eb) => eb.selectFrom('comments as c').whereRef('c.post_id', '=', 'parent.id'),
    atMost,
  )
}

/** The same window of each user's comments, on posts the reader may see, in one statement. */
export function listCommentsOfAuthors(db: Db, authorIds: readonly number[], window: ListWindow, visibility: DraftVisibility): Promise<CommentWithAuthorRow[]> {
  if (authorIds.length === 0) return Promise.resolve([])
  return listWindowPerParent(db, db.selectFrom('users as parent'), {
    table: 'comments',
    parentColumn: 'author_id',
    narrow: (children) => children.innerJoin('posts as p', 'p.id', 'child.post_id').where(visible('p', visibility)),
    ...window,
  })
    .selectAll('comments')
    .select('parent.name as author_name')
    .where('parent.id', 'in', authorIds)
    .execute() as Promise<CommentWithAuthorRow[]>
}

/**
 * The comments with ids above `afterId` on posts the reader may see (on one post when `postId` is
 * given), in id order, at most `limit`: what a subscriber missed. The primary key finds the first.
 */
export function listCommentsAddedAfter(
  db: Db,
  afterId: number,
  options: { postId: number | undefined; visibility: DraftVisibility; limit: number },
): Promise<CommentWithAuthorRow[]> {
  let query = selectWithAuthor(db)
    .innerJoin('posts as p', 'p.id', 'comments.post_id')
    .where('comments.id', '>', afterId)
    .where(visible('p', options.visibility))
  if (options.postId !== undefined) query = query.where('comments.post_id', '=', options.postId)
  return query.orderBy('comments.id').limit(options.limit).execute()
}

export async function insertComment(db: Db, row: NewCommentRow): Promise<number> {
  const { id } = await db.insertInto('comments').values(row).returning('id').executeTakeFirstOrThrow()
  return id
}

/** Many comments in one statement, as their rows (RETURNING's order is the store's: see inInsertOrder). */
export function insertComments(db: Db, rows: readonly NewCommentRow[]): Promise<CommentRow[]> {
  return db.insertInto('comments').values(rows).returningAll().execute()
}

export async function updateCommentContent(db: Db, id: number, content: string, updatedAt: string): Promise<void> {
  await db.updateTable('comments').set({ content, updated_at: updatedAt }).where('id', '=', id).execute()
}

export async function deleteComment(db: Db, id: number): Promise<void> {
  await db.deleteFrom('comments').where('id', '=', id).execute()
}

/** `author_email` is null for a guest comment, whose `email` is its commenter's. */
export type CommentWithAuthorEmailRow = CommentRow & { author_email: string | null }

/**
 * At most `limit` comments with ids above `afterId`, in id order, each with its author's e-mail (a
 * JSONPlaceholder comment carries its commenter's): a batch of a data file. `id > afterId` in id
 * order uses the primary key, so the thousandth batch costs what the first does.
 */
export function listCommentsAfterId(db: Db, afterId: number, limit: number): Promise<CommentWithAuthorEmailRow[]> {
  return db
    .selectFrom('comments')
    .leftJoin('users', 'users.id', 'comments.author_id')
    .select([
      'comments.id',
      'comments.post_id',
      'comments.author_id',
      'comments.content',
      'comments.created_at',
      'comments.updated_at',
      'comments.email',
      'users.email as author_email',
    ])
    .where('comments.id', '>', afterId)
    .orderBy('comments.id')
    .limit(limit)
    .execute()
}
