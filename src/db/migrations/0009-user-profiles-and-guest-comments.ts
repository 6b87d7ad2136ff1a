// What JSONPlaceholder's users and comments carry and Threadline kept nowhere
// (docs/decisions/0061-jsonplaceholder-round-trip.md):
// - a user's profile: `username`, `phone` and `website` (lines), `address` and `company` (objects,
//   as JSON text: they are read and written whole, never filtered), all nullable;
// - a guest comment, written by someone who is no user: `author_id` becomes nullable, and
//   `email` keeps the commenter's e-mail; a comment has one or the other, never both or neither.
// PostgreSQL drops the NOT NULL in place. SQLite cannot (ALTER TABLE has no such form): the comments
// table is rebuilt — a new table, the rows copied, the old one dropped, the new one renamed — in one
// transaction, and everything that belongs to the table (its indexes, and the triggers that keep the
// search index of migration 0004 in step) is made again from the SQL SQLite kept of it. The search
// index itself stays: it names its content table by name, and the rows keep their ids and text.
import { type Kysely, type Migration, sql } from 'kysely'
import type { DialectFacts } from '../dialect-facts.js'

const PROFILE_COLUMNS = ['username', 'phone', 'website', 'address', 'company'] as const

/** A comment is a user's (author_id) or a guest's (email). */
const AUTHOR_OR_GUEST = 'comments_author_or_guest'
const authorOrGuest = sql`(author_id is null) = (email is not null)`

export function userProfilesAndGuestCommentsMigration(facts: DialectFacts): Migration {
  const text = facts.textType
  return {
    async up(db: Kysely<unknown>) {
      for (const column of PROFILE_COLUMNS) await db.schema.alterTable('users').addColumn(column, text).execute()
      // `username` is filtered and sorted on, as `name` is (migration 0002).
      await db.schema.createIndex('users_username_idx').on('users').columns(['username', 'id']).execute()
      if (facts.dialect === 'postgres') {
        await db.schema.alterTable('comments').addColumn('email', text).execute()
        await sql`alter table comments alter column author_id drop not null`.execute(db)
        await sql`alter table comments add constraint ${sql.id(AUTHOR_OR_GUEST)} check (${authorOrGuest})`.execute(db)
      } else {
        await rebuildComments(db, facts, { guests: true })
      }
    },
    async down(db: Kysely<unknown>) {
      // A guest comment has no author to go back to.
      await sql`delete from comments where author_id is null`.execute(db)
      if (facts.dialect === 'postgres') {
        await sql`alter table comments drop constraint ${sql.id(AUTHOR_OR_GUEST)}`.execute(db)
        await sql`alter table comments alter column author_id set not null`.execute(db)
        await db.schema.alterTable('comments').dropColumn('email').execute()
      } else {
        await rebuildComments(db, facts, { guests: false })
      }
      await db.schema.dropIndex('users_username_idx').execute()
      for (const column of PROFILE_COLUMNS) await db.schema.alterTable('users').dropColumn(column).execute()
    },
  }
}

/**
 * SQLite: the comments table made again with or without guest comments (a nullable author_id and
 * an `email`), its rows, indexes and triggers kept, in one transaction (the migrator runs SQLite's
 * migrations outside one). Foreign keys stay on: no table references comments, and the rows copied
 * satisfy the new table's references as they did the old one's.
 */
async function rebuildComments(db: Kysely<unknown>, facts: DialectFacts, { guests }: { guests: boolean }): Promise<void> {
  const ts = facts.timestampType
  const text = facts.textType
  await db.transaction().execute(async (trx) => {
    // The table's indexes (not the automatic ones, which have no SQL) and triggers, as SQLite keeps them.
    const dependents = (
      await sql<{ type: string; name: string; sql: string }>`
        select type, name, sql from sqlite_master
        where tbl_name = 'comments' and type in ('index', 'trigger') and sql is not null
        order by type, name`.execute(trx)
    ).rows
    const sequence = (await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'comments'`.execute(trx)).rows[0]?.seq

    let table = trx.schema
      .createTable('comments_rebuilt')
      .addColumn('id', 'integer', (c) => facts.autoIncrementPrimaryKey(c))
      .addColumn('post_id', 'integer', (c) => c.notNull().references('posts.id').onDelete('cascade'))
      .addColumn('author_id', 'integer', (c) => (guests ? c : c.notNull()).references('users.id').onDelete('cascade'))
      .addColumn('content', text, (c) => c.notNull())
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
    if (guests) table = table.addColumn('email', text).addCheckConstraint(AUTHOR_OR_GUEST, authorOrGuest)
    await table.execute()
    await sql`
      insert into comments_rebuilt (id, post_id, author_id, content, created_at, updated_at)
      select id, post_id, author_id, content, created_at, updated_at from comments`.execute(trx)

    for (const { type, name } of dependents) await sql`drop ${sql.raw(type)} ${sql.id(name)}`.execute(trx)
    await sql`drop table comments`.execute(trx)
    await sql`alter table comments_rebuilt rename to comments`.execute(trx)
    // Indexes before triggers (the order above), as they were made.
    for (const { sql: statement } of dependents) await sql.raw(statement).execute(trx)
    // AUTOINCREMENT never gives an id twice: the next is still after every id the old table gave,
    // the deleted ones' too.
    if (sequence !== undefined) await sql`update sqlite_sequence set seq = max(seq, ${sequence}) where name = 'comments'`.execute(trx)
  })
}
