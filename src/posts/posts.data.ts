// The posts' section of the data files (src/data-section.ts): in Threadline's format a post as
// the API shows it, drafts included; JSONPlaceholder's has no status or times, so its posts are
// published at the moment of the import.
import { Type } from 'typebox'
import { type DataSection, StoredId, storedInstant } from '../data-section.js'
import type { PostRow } from './posts.table.js'
import { Post } from './posts.schemas.js'
import { toPost } from './posts.service.js'

const author = [{ field: 'userId', section: 'users' }]

export const postsData: DataSection<PostRow> = {
  name: 'posts',
  noun: 'post',
  references: ['users'],
  formats: {
    threadline: {
      write: toPost,
      schema: Type.Object({ ...Post.properties, id: StoredId, userId: StoredId }, { additionalProperties: false }),
      references: author,
      toColumns: (row) => ({
        id: row.id,
        user_id: row.userId,
        title: row.title,
        content: row.content,
        status: row.status,
        published_at: storedInstant(row.publishedAt),
        created_at: storedInstant(row.createdAt),
        updated_at: storedInstant(row.updatedAt),
      }),
    },
    jsonplaceholder: {
      write: (row) => ({ userId: row.user_id, id: row.id, title: row.title, body: row.content }),
      schema: Type.Object({ id: StoredId, userId: StoredId, title: Post.properties.title, body: Post.properties.content }),
      references: author,
      toColumns: (row, { now }) => ({
        id: row.id,
        user_id: row.userId,
        title: row.title,
        content: row.body,
        status: 'published',
        published_at: now,
        created_at: now,
        updated_at: now,
      }),
    },
  },
}
