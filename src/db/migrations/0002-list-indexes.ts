// Indexes for the collection query language: every filter and sort offered on users and on a
// user's posts is served by an index, ending in id (the tie-breaker of every order), so pages by
// keyset are index seeks however deep they go.
import type { Kysely, Migration } from 'kysely'

const INDEXES: readonly [name: string, table: string, columns: string[]][] = [
  ['users_name_idx', 'users', ['name', 'id']],
  ['users_age_idx', 'users', ['age', 'id']],
  ['users_role_name_idx', 'users', ['role', 'name', 'id']],
  ['users_created_at_idx', 'users', ['created_at', 'id']],
  ['users_updated_at_idx', 'users', ['updated_at', 'id']],
  ['posts_user_title_idx', 'posts', ['user_id', 'title', 'id']],
  ['posts_user_status_idx', 'posts', ['user_id', 'status', 'id']],
  ['posts_user_published_at_idx', 'posts', ['user_id', 'published_at', 'id']],
  ['posts_user_created_at_idx', 'posts', ['user_id', 'created_at', 'id']],
  ['posts_user_updated_at_idx', 'posts', ['user_id', 'updated_at', 'id']],
  ['todos_user_completed_idx', 'todos', ['user_id', 'completed', 'id']],
]

export function listIndexesMigration(): Migration {
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
