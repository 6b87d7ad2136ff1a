// The first schema: users, posts, comments, todos and tokens. Written once for every dialect:
// the few differences (id columns, timestamp and text types) come from the dialect's facts.
import { type Kysely, type Migration, sql } from 'kysely'
import type { DialectFacts } from '../dialect-facts.js'

export function initialMigration(facts: DialectFacts): Migration {
  const ts = facts.timestampType
  const text = facts.textType
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'integer', (c) => facts.autoIncrementPrimaryKey(c))
        .addColumn('name', text, (c) => c.notNull())
        .addColumn('email', text, (c) => c.notNull())
        .addColumn('age', 'integer')
        .addColumn('avatar', text)
        .addColumn('role', text, (c) => c.notNull().defaultTo('user'))
        .addColumn('password_hash', text)
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addCheckConstraint('users_role_check', sql`role in ('user', 'admin')`)
        .execute()
      // E-mail addresses are unique regardless of case, and found by lower(email).
      await db.schema
        .createIndex('users_email_unique')
        .on('users')
        .unique()
        .expression(sql`lower(email)`)
        .execute()
      await db.schema.createIndex('users_role_idx').on('users').columns(['role', 'id']).execute()

      await db.schema
        .createTable('posts')
        .addColumn('id', 'integer', (c) => facts.autoIncrementPrimaryKey(c))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('title', text, (c) => c.notNull())
        .addColumn('content', text, (c) => c.notNull())
        .addColumn('status', text, (c) => c.notNull().defaultTo('published'))
        .addColumn('published_at', ts)
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addCheckConstraint('posts_status_check', sql`status in ('draft', 'published')`)
        .execute()
      await db.schema.createIndex('posts_user_id_idx').on('posts').columns(['user_id', 'id']).execute()

      await db.schema
        .createTable('comments')
        .addColumn('id', 'integer', (c) => facts.autoIncrementPrimaryKey(c))
        .addColumn('post_id', 'integer', (c) => c.notNull().references('posts.id').onDelete('cascade'))
        .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('content', text, (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .execute()
      await db.schema.createIndex('comments_post_id_idx').on('comments').columns(['post_id', 'id']).execute()
      await db.schema.createIndex('comments_author_id_idx').on('comments').columns(['author_id', 'id']).execute()

      await db.schema
        .createTable('todos')
        .addColumn('id', 'integer', (c) => facts.autoIncrementPrimaryKey(c))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('text', text, (c) => c.notNull())
        .addColumn('completed', 'boolean', (c) => c.notNull().defaultTo(sql`false`))
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .execute()
      await db.schema.createIndex('todos_user_id_idx').on('todos').columns(['user_id', 'id']).execute()

      await db.schema
        .createTable('tokens')
        .addColumn('id', 'integer', (c) => facts.autoIncrementPrimaryKey(c))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('token_hash', text, (c) => c.notNull().unique())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('expires_at', ts, (c) => c.notNull())
        .addColumn('revoked_at', ts)
        .execute()
      await db.schema.createIndex('tokens_user_id_idx').on('tokens').column('user_id').execute()
    },

    async down(db: Kysely<unknown>) {
      for (const table of ['tokens', 'todos', 'comments', 'posts', 'users']) {
        await db.schema.dropTable(table).execute()
      }
    },
  }
}
