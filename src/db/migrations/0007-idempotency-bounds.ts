// What the kept answers of writes (src/idempotency/) need to be bounded and to survive faults:
// - `write_done_at`: set inside the write's own transaction, so a claim whose answer was lost (its
//   process stopped, or keeping the answer failed, after the commit) is never taken over to run
//   the write again;
// - `kept_bytes` and `body_omitted`: the bytes of body a row keeps, and whether its body was past
//   the bounds and left out;
// - `idempotency_callers`: the bytes each caller keeps in all, so that a bound on them costs one
//   row's update, not a sum over the caller's keys.
// Rows kept before are counted as they stand: their bodies' lengths, summed per caller.
import { type Kysely, type Migration, sql } from 'kysely'
import type { DialectFacts } from '../dialect-facts.js'

export function idempotencyBoundsMigration(facts: DialectFacts): Migration {
  const text = facts.textType
  const ts = facts.timestampType
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('idempotency_keys').addColumn('write_done_at', ts).execute()
      await db.schema
        .alterTable('idempotency_keys')
        .addColumn('kept_bytes', 'integer', (c) => c.notNull().defaultTo(0))
        .execute()
      await db.schema
        .alterTable('idempotency_keys')
        .addColumn('body_omitted', 'integer', (c) => c.notNull().defaultTo(0))
        .execute()
      await sql`update idempotency_keys set kept_bytes = length(body) where body is not null`.execute(db)
      await db.schema
        .createTable('idempotency_callers')
        .addColumn('caller', text, (c) => c.notNull().primaryKey())
        .addColumn('kept_bytes', 'integer', (c) => c.notNull())
        .execute()
      await sql`insert into idempotency_callers (caller, kept_bytes) select caller, sum(kept_bytes) from idempotency_keys group by caller having sum(kept_bytes) > 0`.execute(
        db,
      )
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('idempotency_callers').execute()
      await db.schema.alterTable('idempotency_keys').dropColumn('body_omitted').execute()
      await db.schema.alterTable('idempotency_keys').dropColumn('kept_bytes').execute()
      await db.schema.alterTable('idempotency_keys').dropColumn('write_done_at').execute()
    },
  }
}
