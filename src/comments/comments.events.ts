// The comments feature's topic: a comment was created. Published by the comments service after
// the write has committed; the commentAdded subscription listens.
import { Type } from 'typebox'
import { eventShape } from '../events/events.js'
import { Post } from '../posts/posts.public.js'
import { User } from '../users/users.public.js'
import { Comment } from './comments.schemas.js'

/**
 * A comment was created: the comment, its post and its author, as they were at that moment. A
 * comment created through the API always has an author (the caller); a guest comment is only ever
 * imported, and an import publishes nothing.
 */
export interface CommentAdded {
  comment: Comment
  post: Post
  author: User
}

export interface CommentsTopics {
  commentAdded: CommentAdded
}

export const COMMENTS_TOPICS = {
  commentAdded: eventShape(Type.Object({ comment: Comment, post: Post, author: User })),
} satisfies Record<keyof CommentsTopics, object>
