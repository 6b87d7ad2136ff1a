// SQL for bearer tokens. Only SHA-256 hashes are stored; lookups go through the unique index.
import type { Scope } from '../core/caller.js'
import type { Db } from '../db/create-database.js'
import type { UsersTable } from '../users/users.public.js'

export interface ActiveToken {
  id: number
  user_id: number
  role: UsersTable['role']
  scope: Scope
}

/** The token with this hash when it is neither revoked nor expired at `now`, with its user's role and its expiry. */
export function findActiveToken(db: Db, tokenHash: string, now: string): Promise<(ActiveToken & { expires_at: string | Date }) | undefined> {
  return db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .select(['tokens.id', 'tokens.user_id', 'users.role', 'tokens.scope', 'tokens.expires_at'])
    .where('tokens.token_hash', '=', tokenHash)
    .where('tokens.revoked_at', 'is', null)
    .where('tokens.expires_at', '>', now)
    .executeTakeFirst()
}

/** Of the tokens with these ids, those neither revoked nor expired at `now`, with their user's role (by primary key). */
export function findActiveTokensByIds(db: Db, ids: readonly number[], now: string): Promise<ActiveToken[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .select(['tokens.id', 'tokens.user_id', 'users.role', 'tokens.scope'])
    .where('tokens.id', 'in', ids)
    .where('tokens.revoked_at', 'is', null)
    .where('tokens.expires_at', '>', now)
    .execute()
}

type NewToken = { user_id: number; token_hash: string; created_at: string; expires_at: string; scope: Scope }

export async function insertToken(db: Db, row: NewToken): Promise<void> {
  await db.insertInto('tokens').values(row).execute()
}

/** Keeps a verified token of an outside issuer, once: a second request with it, here or on another instance, inserts nothing. */
export async function insertTokenOnce(db: Db, row: NewToken): Promise<void> {
  await db
    .insertInto('tokens')
    .values(row)
    .onConflict((conflict) => conflict.column('token_hash').doNothing())
    .execute()
}

/** The user an issuer's subject was mapped to, if any. */
export async function findIdentity(db: Db, issuer: string, subject: string): Promise<number | undefined> {
  const row = await db.selectFrom('identities').select('user_id').where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst()
  return row?.user_id
}

/** Maps the issuer's subject to the user; false when another request mapped it first. */
export async function insertIdentity(db: Db, row: { issuer: string; subject: string; user_id: number; created_at: string }): Promise<boolean> {
  const inserted = await db
    .insertInto('identities')
    .values(row)
    .onConflict((conflict) => conflict.columns(['issuer', 'subject']).doNothing())
    .executeTakeFirst()
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0
}

/** Marks the token revoked; the token (id and user) it revoked, or undefined when no unrevoked token matched. */
export async function revokeTokenWhere(
  db: Db,
  where: { id: number } | { token_hash: string },
  now: string,
): Promise<{ id: number; user_id: number } | undefined> {
  let query = db.updateTable('tokens').set({ revoked_at: now }).where('revoked_at', 'is', null)
  query = 'id' in where ? query.where('id', '=', where.id) : query.where('token_hash', '=', where.token_hash)
  return query.returning(['id', 'user_id']).executeTakeFirst()
}
