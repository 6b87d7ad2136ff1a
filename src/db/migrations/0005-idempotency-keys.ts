// The answers kept for writes sent with an Idempotency-Key (src/idempotency/): one row per caller
// and key, claimed when the write starts (no status yet) and completed with its answer. Rows expire
// (expires_at), and are purged in batches by expiry, hence its index.
import type { Kysely, Migration } from 'kysely'
import type { DialectFacts } from '../dialect-facts.js'

export function idempotencyKeysMigration(facts: DialectFacts): Migration {
  const text = facts.textType
  const ts = facts.timestampType
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('caller', text, (c) => c.notNull())
        .addColumn('key', text, (c) => c.notNull())
        .addColumn('fingerprint', text, (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('headers', text)
        .addColumn('body', text)
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('expires_at', ts, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pkey', ['caller', 'key'])
        .execute()
      await db.schema.createIndex('idempotency_keys_expires_at_idx').on('idempotency_keys').column('expires_at').execute()
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('idempotency_keys').execute()
    },
  }
}
