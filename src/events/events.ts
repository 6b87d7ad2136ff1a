// The events port: what happened, told to whoever listens — in this process (memory-events.ts)
// or, when scaling out, across instances (Redis). Services publish after their write has
// committed; the GraphQL subscriptions listen.
import type { Comment } from '../comments/comments.schemas.js'
import type { Post } from '../posts/posts.schemas.js'
import type { User } from '../users/users.schemas.js'

/** A comment was created: the comment, its post and its author, as they were at that moment. */
export interface CommentAdded {
  comment: Comment
  post: Post
  author: User
}

export interface EventMap {
  commentAdded: CommentAdded
}

export type EventName = keyof EventMap

export interface Events {
  /**
   * Tells every listener of `name`. Never rejects: the write it reports has committed, and an
   * adapter that cannot deliver logs and counts the failure instead.
   */
  publish<N extends EventName>(name: N, event: EventMap[N]): Promise<void>
  /** Calls `listener` with each event of `name` from now on; returns the unsubscribe function. */
  subscribe<N extends EventName>(name: N, listener: (event: EventMap[N]) => void): () => void
  /** Listeners of `name` in this process (open subscriptions). */
  listenerCount(name: EventName): number
  close(): Promise<void>
}
