// A comment as the API shows it and as callers may write it. The author is always the caller.
import { type Static, Type } from 'typebox'
import { defineCollection } from '../collections/collection-spec.js'
import { Id, Prose, Timestamp } from '../core/schema-types.js'

const Content = Prose({ minLength: 1, maxLength: 5000, mayBeEmpty: false })

export const Comment = Type.Object({
  id: Id,
  postId: Id,
  authorId: Id,
  author: Type.Object({ id: Id, name: Type.String() }),
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
  authorId: { column: 'comments.author_id', type: 'integer' },
  content: { column: 'comments.content', type: 'string', searchable: true, filterable: false, sortable: false },
  createdAt: { column: 'comments.created_at', type: 'timestamp' },
  updatedAt: { column: 'comments.updated_at', type: 'timestamp' },
})
