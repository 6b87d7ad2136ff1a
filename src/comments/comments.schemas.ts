// A comment as the API shows it and as callers may write it. The author is always the caller; a
// guest comment (imported: written by someone who is no user) has no author, and its commenter's e-mail.
import { type Static, Type } from 'typebox'
import { defineCollection } from '../collections/collection-spec.js'
import { Id, Nullable, Prose, Timestamp } from '../core/schema-types.js'

const Content = Prose({ minLength: 1, maxLength: 5000, mayBeEmpty: false })
/** A guest's e-mail, checked as a user's is. */
export const CommenterEmail = Type.String({ format: 'email', maxLength: 254 })

export const Comment = Type.Object({
  id: Id,
  postId: Id,
  authorId: Nullable(Type.Integer({ minimum: 1, description: 'The user who wrote it; null for a guest comment.' })),
  author: Nullable(Type.Object({ id: Id, name: Type.String() }, { description: 'The author: `{id, name}`; null for a guest comment.' })),
  email: Nullable(
    Type.String({ ...CommenterEmail, description: "A guest comment's commenter's e-mail, as JSONPlaceholder shows it; null for a user's comment." }),
  ),
  content: Content,
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Comment = Static<typeof Comment>

export const CreateCommentBody = Type.Object({ content: Content }, { additionalProperties: false })
export type CreateCommentInput = Static<typeof CreateCommentBody>

export const UpdateCommentBody = CreateCommentBody
export type UpdateCommentInput = Static<typeof UpdateCommentBody>

export const CommentsCollection = defineCollection('comments', {
  id: { column: 'comments.id', type: 'integer' },
  postId: { column: 'comments.post_id', type: 'integer', sortable: false },
  authorId: { column: 'comments.author_id', type: 'integer', nullable: true },
  content: { column: 'comments.content', type: 'string', searchable: true, filterable: false, sortable: false },
  createdAt: { column: 'comments.created_at', type: 'timestamp' },
  updatedAt: { column: 'comments.updated_at', type: 'timestamp' },
})
