// Scoped tokens and sign-in by an outside OpenID Connect issuer. A token's scope is `read` (reads,
// queries, subscriptions) or `write` (all its user may do: every token issued before scopes).
// An identity is a subject of an issuer, mapped to the one user its first token made; an access
// token of that issuer is kept in `tokens` by its hash, as an own token is, once it has been verified.
import { type Kysely, type Migration, sql } from 'kysely'
import type { DialectFacts } from '../dialect-facts.js'

export function scopesAndIdentitiesMigration(facts: DialectFacts): Migration {
  const text = facts.textType
  const ts = facts.timestampType
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('tokens')
        .addColumn('scope', text, (c) =>
          c
            .notNull()
            .defaultTo('write')
            .check(sql`scope in ('read', 'write')`),
        )
        .execute()
      await db.schema
        .createTable('identities')
        .addColumn('issuer', text, (c) => c.notNull())
        .addColumn('subject', text, (c) => c.notNull())
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('created_at', ts, (c) => c.notNull())
        .addPrimaryKeyConstraint('identities_pkey', ['issuer', 'subject'])
        .execute()
      await db.schema.createIndex('identities_user_id_idx').on('identities').column('user_id').execute()
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('identities').execute()
      await db.schema.alterTable('tokens').dropColumn('scope').execute()
    },
  }
}
