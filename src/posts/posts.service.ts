// The rules for posts: everyone reads published posts; drafts are seen only by their owner and
// admins (to anyone else a draft does not exist: 404); only the owner or an admin writes.
// publishedAt is the service's to set: when a post becomes published, and cleared for a draft.
import { type Caller, isAdmin, ownerToMatch, requireOwnerOrAdmin } from '../core/caller.js'
import { type CollectionPage, groupByParent, toCollectionPage } from '../collections/collection-page.js'
import type { AggregatePayment, AggregateQuery, AggregateResult } from '../collections/aggregation.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { toIsoTimestamp } from '../db/tables.js'
import type { PostRow, PostRowChanges } from './posts.table.js'
import { notFound } from '../errors.js'
import { type IdInput, parseId } from '../core/ids.js'
import type { ListWindow } from '../collections/pagination.js'
import { checkPrecondition, type WriteOptions } from '../core/preconditions.js'
import { loadUser, loadUserId, pageOfUser } from '../users/users.public.js'
import * as repo from './posts.repository.js'
import type { DraftVisibility } from './post-visibility.js'
import type { CreatePostInput, Post, UpdatePostInput } from './posts.schemas.js'
import { singleStatementWrite, writeTransaction } from '../db/write-transaction.js'
import { inInsertOrder, insertInChunks } from '../db/bulk-insert.js'
import { parentsOfItems } from '../core/bulk.js'
import { type Columns, Projection, sortColumns } from '../db/projection.js'

export type PostsService = ReturnType<typeof createPostsService>

export function createPostsService({ db }: { db: Db }) {
  return {
    /** `columns`: only those are read, and only their fields set (the sort keys are read too, for the cursors). */
    async list(caller: Caller | null, userId: IdInput, query: CollectionQuery, columns: Columns<PostRow> = postFields.all): Promise<CollectionPage<Post>> {
      const read = postFields.plus(columns, sortColumns(query))
      const page = await pageOfUser(db, userId, (ownerId) => repo.listPostsOfUser(db, ownerId, query, { includeDrafts: maySeeDrafts(caller, ownerId) }, read))
      return toCollectionPage(query, page, (row) => postFields.read(row, read))
    },

    /**
     * Every post the caller may see, across users: the published ones, and the drafts that are
     * theirs (all of them, to an admin). The query's filters narrow it (`userId` to one author's,
     * an author who does not exist having none). `columns`: as list's.
     */
    async listAll(caller: Caller | null, query: CollectionQuery, columns: Columns<PostRow> = postFields.all): Promise<CollectionPage<Post>> {
      const read = postFields.plus(columns, sortColumns(query))
      const page = await repo.listPosts(db, query, draftVisibility(caller), read)
      return toCollectionPage(query, page, (row) => postFields.read(row, read))
    },

    /** The posts `list` (with `userId`) or `listAll` would list, aggregated as asked; `pay` is charged for the rows read. */
    async aggregate(caller: Caller | null, userId: IdInput | undefined, request: AggregateQuery, pay?: AggregatePayment): Promise<AggregateResult> {
      if (userId === undefined) return repo.aggregatePosts(db, request, draftVisibility(caller), pay)
      const ownerId = await loadUserId(db, userId)
      return repo.aggregatePostsOfUser(db, ownerId, request, { includeDrafts: maySeeDrafts(caller, ownerId) }, pay)
    },

    /** `userId` undefined: the post is found by its id alone. `columns`: only those are read, and only their fields set. */
    async get(caller: Caller | null, userId: IdInput | undefined, postId: IdInput, columns: Columns<PostRow> = postFields.all): Promise<Post> {
      return postFields.read(await loadVisiblePost(db, caller, userId, postId, columns), columns)
    },

    /** The posts with these ids that the caller may see, by id; the others are absent. `columns`: only those are read. */
    async getMany(caller: Caller | null, ids: readonly number[], columns: Columns<PostRow> = postFields.all): Promise<Map<number, Post>> {
      const rows = await repo.findPostsByIds(db, ids, draftVisibility(caller), columns)
      return new Map(rows.map((row) => [row.id, postFields.read(row, columns)]))
    },

    /** The same window of each user's posts, by user id, in one read. `columns`: only those are read. */
    async listOfUsers(
      caller: Caller | null,
      userIds: readonly number[],
      window: ListWindow,
      columns: Columns<PostRow> = postFields.all,
    ): Promise<Map<number, Post[]>> {
      const rows = await repo.listPostsOfUsers(db, userIds, window, draftVisibility(caller), columns)
      return groupByParent(
        rows,
        (row) => row.user_id,
        (row) => postFields.read(row, columns),
      )
    },

    /** How many posts of each user the caller may see, by user id, each counted up to `atMost`, in one read. */
    async countOfUsers(caller: Caller | null, userIds: readonly number[], atMost: number): Promise<Map<number, number>> {
      return repo.countPostsOfUsers(db, userIds, draftVisibility(caller), atMost)
    },

    /** The owner's existence is checked in the insert's transaction: no post for a user deleted meanwhile. */
    async create(caller: Caller | null, userId: IdInput, input: CreatePostInput): Promise<Post> {
      return writeTransaction(db, async (trx) => {
        const owner = await loadOwner(trx, caller, userId)
        return toPost(await repo.insertPost(trx, newPostRow(owner.id, input, new Date().toISOString())))
      })
    },

    /**
     * A bulk write: every post, each under its own author, in one transaction, all or nothing, in
     * the order given. Each author is checked as create checks one (exists, the caller may write
     * their posts); the first item that fails fails them all, named in the error's details (`[3]`).
     */
    async createMany(caller: Caller | null, items: readonly NewPost[]): Promise<Post[]> {
      return writeTransaction(db, async (trx) => {
        const owners = await parentsOfItems(
          items.map((item) => item.userId),
          (userId) => loadOwner(trx, caller, userId),
        )
        const now = new Date().toISOString()
        const rows = items.map((item, i) => newPostRow(owners[i]!.id, item.input, now))
        const inserted = await insertInChunks(rows, async (chunk) => inInsertOrder(await repo.insertPosts(trx, chunk)))
        return inserted.map(toPost)
      })
    },

    /** PUT: status left out becomes the default, published. */
    replace(caller: Caller | null, userId: IdInput | undefined, postId: IdInput, input: CreatePostInput, options?: WriteOptions<Post>): Promise<Post> {
      return change(caller, userId, postId, { ...input, status: input.status ?? 'published' }, options)
    },

    update(caller: Caller | null, userId: IdInput | undefined, postId: IdInput, input: UpdatePostInput, options?: WriteOptions<Post>): Promise<Post> {
      return change(caller, userId, postId, input, options)
    },

    /** Deletes the post and its comments. */
    async remove(caller: Caller | null, userId: IdInput | undefined, postId: IdInput, options?: WriteOptions<Post>): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const post = await loadVisiblePost(trx, caller, userId, postId)
        requireOwnerOrAdmin(caller, post.user_id, 'delete this post')
        checkPrecondition(options, () => toPost(post))
        await repo.deletePost(trx, post.id)
      })
    },
  }

  async function change(
    caller: Caller | null,
    userId: IdInput | undefined,
    postId: IdInput,
    input: UpdatePostInput,
    options?: WriteOptions<Post>,
  ): Promise<Post> {
    // No If-Match to check and no status (its publication time follows a change of it): one
    // statement, its owner a condition (who may change a post may see it, a draft too), made only
    // if a field changes; when it wrote nothing, the post is read below to tell why.
    const id = parseId(postId)
    const matched = options?.ifMatch === undefined && input.status === undefined ? ownerToMatch(caller, userId) : undefined
    if (id !== undefined && matched !== undefined) {
      const stamp = { updated_at: new Date().toISOString() }
      const written = await singleStatementWrite(db, (trx) =>
        repo.updatePostIfChanged(trx, id, { title: input.title, content: input.content }, { stamp, matched }),
      )
      if (written !== undefined) return toPost(written)
    }
    return writeTransaction(db, async (trx) => {
      const post = await loadVisiblePost(trx, caller, userId, postId)
      requireOwnerOrAdmin(caller, post.user_id, 'change this post')
      checkPrecondition(options, () => toPost(post))
      const changes = changedColumns(post, input)
      if (Object.keys(changes).length === 0) return toPost(post)
      changes.updated_at = new Date().toISOString()
      return toPost(await repo.updatePost(trx, post.id, changes))
    })
  }
}

/** One post of a bulk write, and its author. */
export interface NewPost {
  readonly userId: IdInput
  readonly input: CreatePostInput
}

/** The owner of posts to be written: the user, when the caller may write their posts. The owner's existence is checked in the insert's transaction. */
async function loadOwner(trx: Db, caller: Caller | null, userId: IdInput) {
  const owner = await loadUser(trx, userId)
  requireOwnerOrAdmin(caller, owner.id, "write this user's posts")
  return owner
}

/** A new post's row; published at `now` unless a draft. */
function newPostRow(userId: number, input: CreatePostInput, now: string) {
  const status = input.status ?? 'published'
  return {
    user_id: userId,
    title: input.title,
    content: input.content,
    status,
    published_at: status === 'published' ? now : null,
    created_at: now,
    updated_at: now,
  }
}

const maySeeDrafts = (caller: Caller | null, ownerId: number): boolean => caller?.userId === ownerId || isAdmin(caller)

/** Whether the caller may read this post: it is published, or it is theirs, or they are an admin. */
export const mayRead = (caller: Caller | null, post: Pick<Post, 'status' | 'userId'>): boolean =>
  post.status === 'published' || maySeeDrafts(caller, post.userId)

/** maySeeDrafts, for a query over many owners' posts. */
export const draftVisibility = (caller: Caller | null): DraftVisibility => ({
  allDrafts: isAdmin(caller),
  ownerId: caller?.userId ?? null,
})

/**
 * The post at /users/{userId}/posts/{postId} (or with this id, when `userId` is undefined) as the
 * caller may see it: NOT_FOUND when the user or the post does not exist, when the post belongs to
 * someone else, or when it is a draft the caller may not see.
 */
export async function loadVisiblePost(
  db: Db,
  caller: Caller | null,
  userId: IdInput | undefined,
  postId: IdInput,
  columns?: Columns<PostRow>,
): Promise<PostRow> {
  const id = parseId(postId)
  const post = id === undefined ? undefined : await repo.findPostById(db, id, columns)
  const elsewhere = userId !== undefined && post?.user_id !== parseId(userId)
  if (post === undefined || elsewhere || (post.status === 'draft' && !maySeeDrafts(caller, post.user_id))) {
    throw notFound('Post')
  }
  return post
}

function changedColumns(current: PostRow, input: UpdatePostInput): PostRowChanges {
  const changes: PostRowChanges = {}
  if (input.title !== undefined && input.title !== current.title) changes.title = input.title
  if (input.content !== undefined && input.content !== current.content) changes.content = input.content
  if (input.status !== undefined && input.status !== current.status) {
    changes.status = input.status
    changes.published_at = input.status === 'published' ? new Date().toISOString() : null
  }
  return changes
}

/** Where each field of a Post is read from; its author and status are always read (they decide who sees it, and group it by author). */
export const postFields = new Projection<PostRow, Post>(
  {
    id: { column: 'id' },
    userId: { column: 'user_id' },
    title: { column: 'title' },
    content: { column: 'content' },
    status: { column: 'status' },
    publishedAt: { column: 'published_at', read: toIsoTimestamp },
    createdAt: { column: 'created_at', read: toIsoTimestamp },
    updatedAt: { column: 'updated_at', read: toIsoTimestamp },
  },
  ['id', 'user_id', 'status'],
  (row) => toPost(row),
)

/** The columns a post's visibility is judged by (and its id): what a read of its own lists checks of the post. */
const VISIBILITY_ONLY = postFields.columnsFor([])

/** The id of the post loadVisiblePost would load, or NOT_FOUND: only what its visibility is judged by read. */
export async function loadVisiblePostId(db: Db, caller: Caller | null, userId: IdInput | undefined, postId: IdInput): Promise<number> {
  return (await loadVisiblePost(db, caller, userId, postId, VISIBILITY_ONLY)).id
}

export function toPost(row: PostRow): Post {
  return {
    id: row.id,
    userId: row.user_id,
    title: row.title,
    content: row.content,
    status: row.status,
    publishedAt: row.published_at === null ? null : toIsoTimestamp(row.published_at),
    createdAt: toIsoTimestamp(row.created_at),
    updatedAt: toIsoTimestamp(row.updated_at),
  }
}
