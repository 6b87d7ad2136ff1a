// The comments' section of the data files (src/data-section.ts): in Threadline's format a
// comment as the API shows it without the author it embeds (authorId says who, or, for a guest
// comment, email); JSONPlaceholder's names its commenter by e-mail alone, and is a guest comment
// (docs/decisions/0061-jsonplaceholder-round-trip.md): no user is looked up or made for it. Its
// subject line is kept as the content's first paragraph (comment-subject.ts).
import { Type } from 'typebox'
import { type DataSection, StoredId, storedInstant } from '../data-section.js'
import { Nullable } from '../core/schema-types.js'
import { toIsoTimestamp } from '../db/tables.js'
import { nameProblems, toContent, toNameAndBody } from './comment-subject.js'
import { type CommentWithAuthorEmailRow, listCommentsAfterId } from './comments.repository.js'
import { Comment, CommenterEmail } from './comments.schemas.js'

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
        email: row.email,
        content: row.content,
        createdAt: toIsoTimestamp(row.created_at),
        updatedAt: toIsoTimestamp(row.updated_at),
      }),
      // `author` is what the API embeds; an export may carry it, authorId says the same. `email`
      // may be left out: an export made before guest comments has none.
      schema: Type.Object(
        {
          ...Comment.properties,
          id: StoredId,
          postId: StoredId,
          authorId: Nullable(StoredId),
          author: Type.Optional(Nullable(Type.Object({ id: StoredId, name: Type.String() }))),
          email: Type.Optional(Comment.properties.email),
        },
        { additionalProperties: false },
      ),
      // A user's comment or a guest's: one of the two says who wrote it.
      problems: (row) =>
        row.authorId === null
          ? (row.email ?? null) === null
            ? [['email', 'is required for a comment without an author (a guest comment)']]
            : []
          : (row.email ?? null) !== null
            ? [['email', "must be null for a user's comment (authorId says who wrote it)"]]
            : [],
      references: [
        { field: 'postId', section: 'posts' },
        { field: 'authorId', section: 'users' },
      ],
      toColumns: (row) => ({
        id: row.id,
        post_id: row.postId,
        author_id: row.authorId,
        email: row.email ?? null,
        content: row.content,
        created_at: storedInstant(row.createdAt),
        updated_at: storedInstant(row.updatedAt),
      }),
    },
    jsonplaceholder: {
      // A guest comment gives back its commenter's e-mail; a user's, its author's.
      write: (row) => {
        const { name, body } = toNameAndBody(row.content)
        return { postId: row.post_id, id: row.id, name, email: row.email ?? row.author_email, body }
      },
      schema: Type.Object({
        id: StoredId,
        postId: StoredId,
        name: Type.Optional(Type.String()),
        email: CommenterEmail,
        body: Comment.properties.content,
      }),
      problems: (row) => nameProblems(row.name as string | undefined, row.body as string).map((message) => ['name', message] as const),
      references: [{ field: 'postId', section: 'posts' }],
      toColumns: (row, { now }) => ({
        id: row.id,
        post_id: row.postId,
        author_id: null,
        email: row.email,
        content: toContent(row.name as string | undefined, row.body as string),
        created_at: now,
        updated_at: now,
      }),
    },
  },
}
