// The rules for comments: anyone who may see a post reads its comments; any signed-in user who
// may see it comments on it, as themself; the author or an admin edits; the author, the post's
// owner or an admin deletes. A guest comment (imported, by someone who is no user) has no author:
// only an admin edits it, and the post's owner or an admin deletes it.
import { type Caller, isAdmin, requireAdmin, requireOwnerOrAdmin, requireSignedIn } from '../core/caller.js'
import { type CollectionPage, groupByParent, toCollectionPage } from '../collections/collection-page.js'
import type { AggregatePayment, AggregateQuery, AggregateResult } from '../collections/aggregation.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import type { PostRow } from '../posts/posts.public.js'
import { forbidden, isAppError, notFound } from '../errors.js'
import { type IdInput, parseId } from '../core/ids.js'
import type { ListWindow } from '../collections/pagination.js'
import { draftVisibility, loadVisiblePost, loadVisiblePostId, toPost } from '../posts/posts.public.js'
import { loadUser, toUser } from '../users/users.public.js'
import type { Events } from '../events/events.js'
import type { CommentsTopics } from './comments.events.js'
import { checkPrecondition, type WriteOptions } from '../core/preconditions.js'
import * as repo from './comments.repository.js'
import { streamAdded } from './comments.stream.js'
import type { Comment, CreateCommentInput, UpdateCommentInput } from './comments.schemas.js'
import { writeTransaction } from '../db/write-transaction.js'
import { inInsertOrder, insertInChunks } from '../db/bulk-insert.js'
import { parentsOfItems } from '../core/bulk.js'

export type CommentsService = ReturnType<typeof createCommentsService>

/** Where a comment lives: /users/{userId}/posts/{postId}/comments; without userId, the post is found by its id. */
export interface PostPath {
  userId?: IdInput
  postId: IdInput
}

/** One comment of a bulk write, and the post it is on. */
export interface NewComment {
  readonly path: PostPath
  readonly input: CreateCommentInput
}

export interface CommentsServiceDeps {
  db: Db
  /** Where commentAdded is published, after the comment's transaction has committed. */
  events: Events<CommentsTopics>
  /**
   * The store's data version (Database.dataVersion), where there is one: the comments a resumed
   * subscription missed, once read, serve the next subscriber that resumes from the same id while
   * it has not moved. Absent (PostgreSQL): only reads under way are shared.
   */
  dataVersion?: () => number
}

export function createCommentsService({ db, events, dataVersion }: CommentsServiceDeps) {
  return {
    async list(caller: Caller | null, path: PostPath, query: CollectionQuery): Promise<CollectionPage<Comment>> {
      const postId = await loadVisiblePostId(db, caller, path.userId, path.postId)
      return toCollectionPage(query, await repo.listCommentsOfPost(db, postId, query), repo.toComment)
    },

    /**
     * Every comment the caller may see, across posts: those on published posts, and on drafts the
     * caller may see (their own; all, to an admin). The query's filters narrow it (`postId` to one
     * post's, `authorId` to one author's; a post the caller may not see has none).
     */
    async listAll(caller: Caller | null, query: CollectionQuery): Promise<CollectionPage<Comment>> {
      return toCollectionPage(query, await repo.listComments(db, query, draftVisibility(caller)), repo.toComment)
    },

    /** The comments `list` (with `path`) or `listAll` would list, aggregated as asked; `pay` is charged for the rows read. */
    async aggregate(caller: Caller | null, path: PostPath | undefined, request: AggregateQuery, pay?: AggregatePayment): Promise<AggregateResult> {
      const postId = path === undefined ? undefined : await loadVisiblePostId(db, caller, path.userId, path.postId)
      return repo.aggregateComments(db, postId, request, draftVisibility(caller), pay)
    },

    /** `path` undefined: the comment is found by its id alone. */
    async get(caller: Caller | null, path: PostPath | undefined, commentId: IdInput): Promise<Comment> {
      return repo.toComment((await loadVisibleComment(db, caller, path, commentId)).comment)
    },

    /** The same window of comments on each of these posts the caller may see, by post id, in one read. */
    async listOfPosts(caller: Caller | null, postIds: readonly number[], window: ListWindow): Promise<Map<number, Comment[]>> {
      const rows = await repo.listCommentsOfPosts(db, postIds, window, draftVisibility(caller))
      return groupByParent(rows, (row) => row.post_id, repo.toComment)
    },

    /** How many comments each of these posts the caller may see has, by post id, each counted up to `atMost`, in one read. */
    async countOfPosts(caller: Caller | null, postIds: readonly number[], atMost: number): Promise<Map<number, number>> {
      return repo.countCommentsOfPosts(db, postIds, draftVisibility(caller), atMost)
    },

    /** The same window of each user's comments on posts the caller may see, by author id, in one read. */
    async listOfAuthors(caller: Caller | null, authorIds: readonly number[], window: ListWindow): Promise<Map<number, Comment[]>> {
      const rows = await repo.listCommentsOfAuthors(db, authorIds, window, draftVisibility(caller))
      // Each is a comment of one of these authors: never a guest's.
      return groupByParent(rows, (row) => row.author_id as number, repo.toComment)
    },

    /** The author is the caller, never anyone named in the input. */
    async create(caller: Caller | null, path: PostPath, input: CreateCommentInput): Promise<Comment> {
      const signedIn = requireSignedIn(caller)
      const added = await writeTransaction(db, async (trx) => {
        // Both read (and, on PostgreSQL, locked) before the insert refers to them.
        const post = await loadVisiblePost(trx, caller, path.userId, path.postId)
        const author = await loadUser(trx, signedIn.userId)
        const now = new Date().toISOString()
        const id = await repo.insertComment(trx, {
          post_id: post.id,
          author_id: author.id,
          content: input.content,
          created_at: now,
          updated_at: now,
        })
        const comment = repo.toComment(await loadComment(trx, post, id))
        return { comment, post: toPost(post), author: toUser(author) }
      })
      // Committed: only now may anyone hear of it.
      await events.publish('commentAdded', added)
      return added.comment
    },

    /**
     * A bulk write: every comment, each on its own post, as the caller, checked as create checks
     * one, in one transaction, all or nothing, in the order given; then one commentAdded per
     * comment, in that order, once committed.
     */
    async createMany(caller: Caller | null, items: readonly NewComment[]): Promise<Comment[]> {
      const signedIn = requireSignedIn(caller)
      const added = await writeTransaction(db, async (trx) => {
        const posts = await parentsOfItems(
          items.map((item) => item.path),
          (path) => loadVisiblePost(trx, caller, path.userId, path.postId),
        )
        const author = await loadUser(trx, signedIn.userId)
        const now = new Date().toISOString()
        const rows = items.map((item, i) => ({ post_id: posts[i]!.id, author_id: author.id, content: item.input.content, created_at: now, updated_at: now }))
        const inserted = await insertInChunks(rows, async (chunk) => inInsertOrder(await repo.insertComments(trx, chunk)))
        return inserted.map((row, i) => ({
          comment: repo.toComment({ ...row, author_name: author.name }),
          post: toPost(posts[i]!),
          author: toUser(author),
        }))
      })
      // Committed: only now may anyone hear of them.
      for (const one of added) await events.publish('commentAdded', one)
      return added.map((one) => one.comment)
    },

    streamAdded: streamAdded(db, events, dataVersion),

    /** `path` undefined: the comment is found by its id alone. */
    async update(
      caller: Caller | null,
      path: PostPath | undefined,
      commentId: IdInput,
      input: UpdateCommentInput,
      options?: WriteOptions<Comment>,
    ): Promise<Comment> {
      return writeTransaction(db, async (trx) => {
        const { post, comment } = await loadVisibleComment(trx, caller, path, commentId)
        // A guest comment's words are no user's: an admin's alone to change.
        if (comment.author_id === null) requireAdmin(caller, 'edit a guest comment')
        else requireOwnerOrAdmin(caller, comment.author_id, 'edit this comment')
        checkPrecondition(options, () => repo.toComment(comment))
        if (input.content === comment.content) return repo.toComment(comment)
        await repo.updateCommentContent(trx, comment.id, input.content, new Date().toISOString())
        return repo.toComment(await loadComment(trx, post, comment.id))
      })
    },

    /** `path` undefined: the comment is found by its id alone. */
    async remove(caller: Caller | null, path: PostPath | undefined, commentId: IdInput, options?: WriteOptions<Comment>): Promise<void> {
      const signedIn = requireSignedIn(caller)
      await writeTransaction(db, async (trx) => {
        const { post, comment } = await loadVisibleComment(trx, caller, path, commentId)
        const allowed = signedIn.userId === comment.author_id || signedIn.userId === post.user_id || isAdmin(signedIn)
        if (!allowed) throw forbidden("Only the comment's author, the post's owner or an admin may delete this comment")
        checkPrecondition(options, () => repo.toComment(comment))
        await repo.deleteComment(trx, comment.id)
      })
    },
  }
}

/**
 * The comment with this id and its post, as the caller may see them: on the post the path names
 * (NOT_FOUND for the post first, as the path reads), or on whichever post it is when there is no path.
 */
async function loadVisibleComment(
  db: Db,
  caller: Caller | null,
  path: PostPath | undefined,
  commentId: IdInput,
): Promise<{ post: PostRow; comment: repo.CommentWithAuthorRow }> {
  if (path !== undefined) {
    const post = await loadVisiblePost(db, caller, path.userId, path.postId)
    return { post, comment: await loadComment(db, post, commentId) }
  }
  const id = parseId(commentId)
  const found = id === undefined ? undefined : await repo.findCommentById(db, id)
  if (found === undefined) throw notFound('Comment')
  const post = await loadVisiblePost(db, caller, undefined, found.post_id).catch((error: unknown) => {
    throw isAppError(error) && error.code === 'NOT_FOUND' ? notFound('Comment') : error
  })
  return { post, comment: found }
}

/** The comment with this id on this post, or NOT_FOUND. */
async function loadComment(db: Db, post: PostRow, commentId: IdInput): Promise<repo.CommentWithAuthorRow> {
  const id = parseId(commentId)
  const comment = id === undefined ? undefined : await repo.findCommentById(db, id)
  if (comment === undefined || comment.post_id !== post.id) throw notFound('Comment')
  return comment
}
