// The rules for comments: anyone who may see a post reads its comments; any signed-in user who
// may see it comments on it, as themself; the author or an admin edits; the author, the post's
// owner or an admin deletes.
import { type Caller, isAdmin, requireOwnerOrAdmin, requireSignedIn } from '../core/caller.js'
import { type CollectionPage, groupByParent, toCollectionPage } from '../collections/collection-page.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { toIsoTimestamp } from '../db/tables.js'
import type { PostRow } from '../posts/posts.public.js'
import { AppError, forbidden, isAppError, notFound } from '../errors.js'
import { type IdInput, parseId } from '../core/ids.js'
import type { ListWindow } from '../collections/pagination.js'
import { type DraftVisibility, draftVisibility, loadVisiblePost, mayRead, toPost } from '../posts/posts.public.js'
import { loadUser, toUser } from '../users/users.public.js'
import type { Events } from '../events/events.js'
import type { CommentAdded, CommentsTopics } from './comments.events.js'
import { eventStream, type EventStreamOptions, type EventsInterrupted, isEventsInterrupted, markReplayed } from '../events/event-stream.js'
import { checkPrecondition, type WriteOptions } from '../core/preconditions.js'
import * as repo from './comments.repository.js'
import type { Comment, CreateCommentInput, UpdateCommentInput } from './comments.schemas.js'
import { writeTransaction } from '../db/write-transaction.js'

export type CommentsService = ReturnType<typeof createCommentsService>

/** Where a comment lives: /users/{userId}/posts/{postId}/comments; without userId, the post is found by its id. */
export interface PostPath {
  userId?: IdInput
  postId: IdInput
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

/** Replays kept for the next subscriber that resumes from the same id, while the data version stands. */
const KEPT_REPLAYS = 64

export function createCommentsService({ db, events, dataVersion }: CommentsServiceDeps) {
  /**
   * The comments after `afterId` a resumed subscription missed (at most MAX_REPLAYED + 1, to tell
   * when there are more). Subscribers that resume together (a reconnect storm after an outage:
   * they all received the same last event) share one read: one whose data version has not moved
   * since (nothing was written: what it read is what a read now would), or, without a data
   * version, one that began after they were listening to the live events (`listening`, numbered
   * in order): a comment committed before they listened and after an older read began would be
   * in neither.
   */
  const replays = new Map<string, { since: number; version: number | undefined; rows: Promise<AddedComment[]> }>()
  let listeners = 0
  function readMissed(afterId: number, postId: number | undefined, visibility: DraftVisibility, listening: number): Promise<AddedComment[]> {
    const key = `${afterId} ${postId ?? ''} ${visibility.allDrafts ? '*' : (visibility.ownerId ?? '')}`
    const version = dataVersion?.()
    const kept = replays.get(key)
    if (kept !== undefined && ((version !== undefined && kept.version === version) || kept.since >= listening)) return kept.rows
    const read = {
      since: listeners,
      version,
      rows: repo
        .listCommentsAddedAfter(db, afterId, { postId, visibility, limit: MAX_REPLAYED + 1 })
        .then((rows) => rows.map((row) => ({ comment: toComment(row) }))),
    }
    replays.delete(key)
    replays.set(key, read)
    if (replays.size > KEPT_REPLAYS) replays.delete(replays.keys().next().value as string)
    // Without a data version, a read is shared only while it runs; a failed one, never again.
    const forget = () => {
      if (replays.get(key) === read) replays.delete(key)
    }
    read.rows.then(version === undefined ? forget : undefined, forget)
    return read.rows
  }

  return {
    async list(caller: Caller | null, path: PostPath, query: CollectionQuery): Promise<CollectionPage<Comment>> {
      const post = await loadVisiblePost(db, caller, path.userId, path.postId)
      return toCollectionPage(query, await repo.listCommentsOfPost(db, post.id, query), toComment)
    },

    async get(caller: Caller | null, path: PostPath, commentId: IdInput): Promise<Comment> {
      return toComment((await loadVisibleComment(db, caller, path, commentId)).comment)
    },

    /** The same window of comments on each of these posts the caller may see, by post id, in one read. */
    async listOfPosts(caller: Caller | null, postIds: readonly number[], window: ListWindow): Promise<Map<number, Comment[]>> {
      const rows = await repo.listCommentsOfPosts(db, postIds, window, draftVisibility(caller))
      return groupByParent(rows, (row) => row.post_id, toComment)
    },

    /** How many comments each of these posts the caller may see has, by post id, each counted up to `atMost`, in one read. */
    async countOfPosts(caller: Caller | null, postIds: readonly number[], atMost: number): Promise<Map<number, number>> {
      return repo.countCommentsOfPosts(db, postIds, draftVisibility(caller), atMost)
    },

    /** The same window of each user's comments on posts the caller may see, by author id, in one read. */
    async listOfAuthors(caller: Caller | null, authorIds: readonly number[], window: ListWindow): Promise<Map<number, Comment[]>> {
      const rows = await repo.listCommentsOfAuthors(db, authorIds, window, draftVisibility(caller))
      return groupByParent(rows, (row) => row.author_id, toComment)
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
        const comment = toComment(await loadComment(trx, post, id))
        return { comment, post: toPost(post), author: toUser(author) }
      })
      // Committed: only now may anyone hear of it.
      await events.publish('commentAdded', added)
      return added.comment
    },

    /**
     * The comments created from now on that the caller may see — on one post (which must be
     * visible to the caller now), or on any — as a bounded stream (see eventStream), with a marker
     * where delivery was interrupted. Each event is judged with the caller as they are when it
     * arrives (`caller` is read then): a revoked token or a lost role stops the drafts at once.
     *
     * With `after` (a comment id; or the stream's `resumeAfter`, an event stream's Last-Event-ID),
     * the comments created after it come first, read from the store with the caller's rights as
     * they are now, in id order, then the live ones, none twice: the live events are heard from
     * before the store is read, and those it read are skipped. At most MAX_REPLAYED: past that,
     * BAD_REQUEST (the client reads the list first). The replay is charged before it is read out.
     */
    async streamAdded(
      caller: () => Caller | null,
      postId: IdInput | undefined,
      options: EventStreamOptions,
      after?: IdInput,
    ): Promise<AsyncIterableIterator<AddedComment | EventsInterrupted>> {
      const only = postId === undefined ? undefined : (await loadVisiblePost(db, caller(), undefined, postId)).id
      const from = after ?? options.resumeAfter
      const afterId = from === undefined ? undefined : parseId(from)
      if (from !== undefined && afterId === undefined) throw new AppError('BAD_REQUEST', `"${String(from)}" is not a comment id to resume after`)
      const live = eventStream<CommentsTopics, 'commentAdded'>(
        events,
        'commentAdded',
        (event) => (only === undefined || event.post.id === only) && mayRead(caller(), event.post),
        options,
      )
      if (afterId === undefined) return live
      const listening = ++listeners
      try {
        const read = () => readMissed(afterId, only, draftVisibility(caller()), listening)
        const missed = await (options.inTurn === undefined ? read() : options.inTurn(read))
        if (missed.length > MAX_REPLAYED) {
          throw new AppError(
            'BAD_REQUEST',
            `More than ${MAX_REPLAYED} comments were added after comment ${afterId}: read them from the list first, then subscribe after the last one read`,
          )
        }
        await options.chargeReplay?.(missed.length)
        markReplayed(missed)
        return replayThenLive(missed, live)
      } catch (error) {
        await live.return?.()
        throw error
      }
    },

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
        requireOwnerOrAdmin(caller, comment.author_id, 'edit this comment')
        checkPrecondition(options, () => toComment(comment))
        if (input.content === comment.content) return toComment(comment)
        await repo.updateCommentContent(trx, comment.id, input.content, new Date().toISOString())
        return toComment(await loadComment(trx, post, comment.id))
      })
    },

    /** `path` undefined: the comment is found by its id alone. */
    async remove(caller: Caller | null, path: PostPath | undefined, commentId: IdInput, options?: WriteOptions<Comment>): Promise<void> {
      const signedIn = requireSignedIn(caller)
      await writeTransaction(db, async (trx) => {
        const { post, comment } = await loadVisibleComment(trx, caller, path, commentId)
        const allowed = signedIn.userId === comment.author_id || signedIn.userId === post.user_id || isAdmin(signedIn)
        if (!allowed) throw forbidden("Only the comment's author, the post's owner or an admin may delete this comment")
        checkPrecondition(options, () => toComment(comment))
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
/** The comments a resumed subscription may be handed before its live ones. */
export const MAX_REPLAYED = 1000

/** Missed comments handed out in one turn of the event loop, at most. */
const REPLAYED_PER_TURN = 32

/** A comment a resumed subscription missed, read from the store: its post and author are read as a query's are. */
export type AddedComment = CommentAdded | { comment: Comment; post?: undefined; author?: undefined }

/** The missed comments in order, then the live stream's items but those already handed out. */
function replayThenLive(
  missed: readonly AddedComment[],
  live: AsyncIterableIterator<CommentAdded | EventsInterrupted>,
): AsyncIterableIterator<AddedComment | EventsInterrupted> {
  const replayed = new Set(missed.map((item) => item.comment.id))
  let next = 0
  const iterator: AsyncIterableIterator<AddedComment | EventsInterrupted> = {
    async next() {
      if (next < missed.length) {
        // A turn of the event loop between bursts: a replay runs each comment's selection and
        // writes it, and a thousand subscribers resuming at once must not hold the loop for all of theirs.
        if (next > 0 && next % REPLAYED_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve))
        return { done: false, value: missed[next++] as AddedComment }
      }
      for (;;) {
        const result = await live.next()
        if (result.done === true || isEventsInterrupted(result.value) || !replayed.has(result.value.comment.id)) return result
      }
    },
    async return() {
      next = missed.length
      return (await live.return?.()) ?? { done: true, value: undefined }
    },
    async throw(error?: unknown) {
      next = missed.length
      return live.throw ? live.throw(error) : Promise.reject(error instanceof Error ? error : new Error(String(error)))
    },
    [Symbol.asyncIterator]() {
      return iterator
    },
  }
  return iterator
}

async function loadComment(db: Db, post: PostRow, commentId: IdInput): Promise<repo.CommentWithAuthorRow> {
  const id = parseId(commentId)
  const comment = id === undefined ? undefined : await repo.findCommentById(db, id)
  if (comment === undefined || comment.post_id !== post.id) throw notFound('Comment')
  return comment
}

export function toComment(row: repo.CommentWithAuthorRow): Comment {
  return {
    id: row.id,
    postId: row.post_id,
    authorId: row.author_id,
    author: { id: row.author_id, name: row.author_name },
    content: row.content,
    createdAt: toIsoTimestamp(row.created_at),
    updatedAt: toIsoTimestamp(row.updated_at),
  }
}
