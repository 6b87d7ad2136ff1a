// The comments created from now on, as a subscription receives them: live, or resumed after a
// comment id, the comments missed read from the store first. Subscribers that resume together
// share one read of what they missed.
import { setImmediate as nextLoopTurn } from 'node:timers/promises'
import type { Caller } from '../core/caller.js'
import { type IdInput, parseId } from '../core/ids.js'
import type { Db } from '../db/create-database.js'
import { AppError } from '../errors.js'
import { eventStream, type EventStreamOptions, type EventsInterrupted, isEventsInterrupted, markReplayed } from '../events/event-stream.js'
import type { Events } from '../events/events.js'
import { type DraftVisibility, draftVisibility, loadVisiblePost, mayRead } from '../posts/posts.public.js'
import type { CommentAdded, CommentsTopics } from './comments.events.js'
import * as repo from './comments.repository.js'
import type { Comment } from './comments.schemas.js'

/** Replays kept for the next subscriber that resumes from the same id, while the data version stands. */
const KEPT_REPLAYS = 64

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
export function streamAdded(db: Db, events: Events<CommentsTopics>, dataVersion: (() => number) | undefined) {
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
        .then((rows) => rows.map((row) => ({ comment: repo.toComment(row) }))),
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

  return async function streamAdded(
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
  }
}

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
        if (next > 0 && next % REPLAYED_PER_TURN === 0) await nextLoopTurn()
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
