// The comments' section of the data files (src/data-section.ts): in Threadline's format a
// comment as the API shows it without the author it embeds (authorId says who); JSONPlaceholder's
// names its author by e-mail (a user of the file or the database, or one added for it) and has a
// subject line, kept as the content's first paragraph (comment-subject.ts).
import { Type } from 'typebox'
import { type DataSection, StoredId, storedInstant } from '../data-section.js'
import { toIsoTimestamp } from '../db/tables.js'
import { nameProblems, toContent, toNameAndBody } from './comment-subject.js'
import { type CommentWithAuthorEmailRow, listCommentsAfterId } from './comments.repository.js'
import { Comment } from './comments.schemas.js'
// The author's e-mail is checked as a user's is.
import { User } from '../users/users.public.js'

export const commentsData: DataSection<CommentWithAuthorEmailRow> = {
  name: 'comments',
  noun: 'comment',
  references: ['posts', 'users'],
  read: listCommentsAfterId,
  formats: {
    threadline: {
      write: (row) => ({
        id: row.id,
        postId: row.post_id,
        authorId: row.author_id,
        content: row.content,
        createdAt: toIsoTimestamp(row.created_at),
        updatedAt: toIsoTimestamp(row.updated_at),
      }),
      // `author` is what the API embeds; an export may carry it, authorId says the same.
      schema: Type.Object(
        {
          ...Comment.properties,
          id: StoredId,
          postId: StoredId,
          authorId: StoredId,
          author: Type.Optional(Type.Object({ ...Comment.properties.author.properties, id: StoredId })),
        },
        { additionalProperties: false },
      ),
      references: [
        { field: 'postId', section: 'posts' },
        { field: 'authorId', section: 'users' },
      ],
      toColumns: (row) => ({
        id: row.id,
        post_id: row.postId,
        author_id: row.authorId,
        content: row.content,
        created_at: storedInstant(row.createdAt),
        updated_at: storedInstant(row.updatedAt),
      }),
    },
    jsonplaceholder: {
      write: (row) => {
        const { name, body } = toNameAndBody(row.content)
        return { postId: row.post_id, id: row.id, name, email: row.author_email, body }
      },
      schema: Type.Object({
        id: StoredId,
        postId: StoredId,
        name: Type.Optional(Type.String()),
        email: User.properties.email,
        body: Comment.properties.content,
      }),
      problems: (row) => nameProblems(row.name as string | undefined, row.body as string).map((message) => ['name', message] as const),
      references: [
        { field: 'postId', section: 'posts' },
        { field: 'email', section: 'users', by: 'email' },
      ],
      toColumns: (row, { now, ids }) => ({
        id: row.id,
        post_id: row.postId,
        author_id: ids.email,
        content: toContent(row.name as string | undefined, row.body as string),
        created_at: now,
        updated_at: now,
      }),
    },
  },
}
