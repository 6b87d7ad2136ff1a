// SQL for posts. Every function takes the executor first: the database or a transaction.
import { sql } from 'kysely'
import type { AggregatePayment, AggregateQuery } from '../collections/aggregation.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import { aggregatePage } from '../db/aggregate-page.js'
import type { Db } from '../db/create-database.js'
import type { RowPage } from '../collections/collection-page.js'
import { countPerParent, listPage, listWindowPerParent } from '../db/list-page.js'
import type { NewPostRow, PostRow, PostRowChanges } from './posts.table.js'
import type { ListWindow } from '../collections/pagination.js'
import { type Columns, selecting } from '../db/projection.js'
import { compiledStatement, rowById, rowInsert, rowUpdate, rowUpdateIfChanged, type RowChangeConditions } from '../db/compiled-statements.js'
import { type DraftVisibility, visibilityShape, visible } from './post-visibility.js'

/** The posts table with the columns given (the whole row without them); a row read so holds only those. */
function posts(db: Db, columns: Columns<PostRow> | undefined) {
  const from = db.selectFrom('posts')
  return selecting(columns)(from) as ReturnType<typeof from.selectAll>
}

export const findPostById: (db: Db, id: number, columns?: Columns<PostRow>) => Promise<PostRow | undefined> = rowById(posts)

export function findPostsByIds(db: Db, ids: readonly number[], visibility: DraftVisibility, columns?: Columns<PostRow>): Promise<PostRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return posts(db, columns).where('id', 'in', ids).where(visible('posts', visibility)).execute()
}

interface WindowArgs {
  readonly userIds: readonly number[]
  readonly window: ListWindow
  readonly visibility: DraftVisibility
  readonly columns: Columns<PostRow> | undefined
}

const postsOfUsers = compiledStatement<PostRow, WindowArgs>(
  ({ userIds, window, visibility, columns }) => [columns?.key ?? '*', userIds.length, window.order ?? 'asc', visibilityShape(visibility)].join(':'),
  (db, { userIds, window, visibility, columns }, slot) => {
    const seen: DraftVisibility = { allDrafts: visibility.allDrafts, ownerId: visibility.ownerId === null ? null : slot((args) => args.visibility.ownerId) }
    const joined = listWindowPerParent(db, db.selectFrom('users as parent'), {
      table: 'posts',
      parentColumn: 'user_id',
      narrow: (children) => children.where(visible('child', seen)),
      order: window.order,
      limit: slot((args) => args.window.limit),
      offset: slot((args) => args.window.offset),
    })
    return selecting(
      columns,
      'posts',
    )(joined).where(
      'parent.id',
      'in',
      userIds.map((_, i) => slot((args) => args.userIds[i] as number)),
    )
  },
)

/**
 * The same window of each user's posts, in the window's id order, in one statement: for each user, the window
 * by the (user_id, id) index (listWindowPerParent). The cost follows the window,
 * never the size of a user's whole list.
 */
export function listPostsOfUsers(
  db: Db,
  userIds: readonly number[],
  window: ListWindow,
  visibility: DraftVisibility,
  columns?: Columns<PostRow>,
): Promise<PostRow[]> {
  if (userIds.length === 0) return Promise.resolve([])
  return postsOfUsers.all(db, { userIds, window, visibility, columns })
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
export function listPostsOfUser(
  db: Db,
  userId: number,
  query: CollectionQuery,
  options: { includeDrafts: boolean },
  columns?: Columns<PostRow>,
): Promise<RowPage<PostRow>> {
  return listPage<PostRow>(db, {
    from: postsOfUser(options),
    parentId: userId,
    select: selecting(columns),
    query,
    shape: `posts of a user:${options.includeDrafts ? 'all' : 'published'}:${columns?.key ?? '*'}`,
  })
}

/** The rows listPostsOfUser lists, aggregated. */
export function aggregatePostsOfUser(db: Db, userId: number, request: AggregateQuery, options: { includeDrafts: boolean }, pay?: AggregatePayment) {
  return aggregatePage(db, { from: (executor) => postsOfUser(options)(executor, userId), request, pay })
}

/** The scope of listPostsOfUser: the status is written into the SQL, so that the user's id is its one value. */
function postsOfUser(options: { includeDrafts: boolean }) {
  return (executor: Db, userId: number) => {
    const mine = executor.selectFrom('posts').where('user_id', '=', userId)
    return options.includeDrafts ? mine : mine.where('status', '=', sql.lit('published'))
  }
}

/**
 * Every post the reader sees, across users, in the query's order; the query's filters narrow it
 * (`userId` to one author's, by the (user_id, id) index).
 */
export function listPosts(db: Db, query: CollectionQuery, visibility: DraftVisibility, columns?: Columns<PostRow>): Promise<RowPage<PostRow>> {
  return listPage<PostRow>(db, {
    from: visiblePosts(visibility),
    select: selecting(columns),
    query,
    shape: `posts:${visibilityShape(visibility)}:${columns?.key ?? '*'}`,
  })
}

/** The rows listPosts lists, aggregated. */
export function aggregatePosts(db: Db, request: AggregateQuery, visibility: DraftVisibility, pay?: AggregatePayment) {
  return aggregatePage(db, { from: visiblePosts(visibility), request, pay })
}

const visiblePosts = (visibility: DraftVisibility) => (executor: Db) => executor.selectFrom('posts').where(visible('posts', visibility))

export const insertPost: (db: Db, row: NewPostRow) => Promise<PostRow> = rowInsert('posts')

/** Many posts in one statement, as their rows (RETURNING's order is the store's: see inInsertOrder). */
export function insertPosts(db: Db, rows: readonly NewPostRow[]): Promise<PostRow[]> {
  return db.insertInto('posts').values(rows).returningAll().execute()
}

export const updatePost: (db: Db, id: number, changes: PostRowChanges) => Promise<PostRow> = rowUpdate('posts')

/** The post's row with `changes` set, where one of them is new to it and it holds `matched` (rowUpdateIfChanged); undefined when nothing was written. */
export const updatePostIfChanged: (
  db: Db,
  id: number,
  changes: PostRowChanges,
  conditions: RowChangeConditions<PostRowChanges>,
) => Promise<PostRow | undefined> = rowUpdateIfChanged('posts')

export async function deletePost(db: Db, id: number): Promise<void> {
  await db.deleteFrom('posts').where('id', '=', id).execute()
}
