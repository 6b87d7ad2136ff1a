// The users table as Kysely sees it, added to the store's Tables (src/db/tables.ts) from here.
import type { Generated, Insertable, Selectable, Updateable } from 'kysely'
import type { Timestamp } from '../db/tables.js'

export interface UsersTable {
  id: Generated<number>
  name: string
  email: string
  age: number | null
  avatar: string | null
  role: 'user' | 'admin'
  password_hash: string | null
  username: string | null
  phone: string | null
  website: string | null
  /** An Address as JSON text (users.profile.ts). */
  address: string | null
  /** A Company as JSON text (users.profile.ts). */
  company: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../db/tables.js' {
  interface Tables {
    users: UsersTable
  }
}

export type UserRow = Selectable<UsersTable>
export type NewUserRow = Insertable<UsersTable>
export type UserRowChanges = Updateable<UsersTable>
