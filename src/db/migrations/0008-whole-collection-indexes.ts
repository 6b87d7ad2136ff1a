// Indexes for the lists over a whole collection (every post, comment or todo, not one parent's):
// every filter and sort they offer is served by an index ending in id, as migration 0002 does for
// users and for one user's posts, so their pages by keyset are index seeks however deep they go.
// Filters by parent (user_id, post_id, author_id) already have theirs (migration 0001).
import type { Kysely, Migration } from 'kysely'

const INDEXES: readonly [name: string, table: string, columns: string[]][] = [
  ['posts_title_idx', 'posts', ['title', 'id']],
  ['posts_status_idx', 'posts', ['status', 'id']],
  ['posts_published_at_idx', 'posts', ['published_at', 'id']],
  ['posts_created_at_idx', 'posts', ['created_at', 'id']],
  ['posts_updated_at_idx', 'posts', ['updated_at', 'id']],
  ['comments_created_at_idx', 'comments', ['created_at', 'id']],
  ['comments_updated_at_idx', 'comments', ['updated_at', 'id']],
  ['todos_text_idx', 'todos', ['text', 'id']],
  ['todos_completed_idx', 'todos', ['completed', 'id']],
  ['todos_created_at_idx', 'todos', ['created_at', 'id']],
  ['todos_updated_at_idx', 'todos', ['updated_at', 'id']],
]

export function wholeCollectionIndexesMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      for (const [name, table, columns] of INDEXES) {
        await db.schema.createIndex(name).on(table).columns(columns).execute()
      }
    },
    async down(db: Kysely<unknown>) {
      for (const [name] of INDEXES) await db.schema.dropIndex(name).execute()
    },
  }
}
