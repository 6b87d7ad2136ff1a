// SQL for bearer tokens. Only SHA-256 hashes are stored; lookups go through the unique index.
import type { Db } from '../db/create-database.js'
import type { UsersTable } from '../users/users.public.js'

export interface ActiveToken {
  id: number
  user_id: number
  role: UsersTable['role']
}

/** The token with this hash when it is neither revoked nor expired at `now`, with its user's role and its expiry. */
export function findActiveToken(db: Db, tokenHash: string, now: string): Promise<(ActiveToken & { expires_at: string | Date }) | undefined> {
  return db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .select(['tokens.id', 'tokens.user_id', 'users.role', 'tokens.expires_at'])
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
    .select(['tokens.id', 'tokens.user_id', 'users.role'])
    .where('tokens.id', 'in', ids)
    .where('tokens.revoked_at', 'is', null)
    .where('tokens.expires_at', '>', now)
    .execute()
}

export async function insertToken(db: Db, row: { user_id: number; token_hash: string; created_at: string; expires_at: string }): Promise<void> {
  await db.insertInto('tokens').values(row).execute()
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
