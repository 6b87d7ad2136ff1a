// The users' section of the data files (src/data-section.ts): in Threadline's format a user
// as the API shows it plus the stored password hash, so that an import signs the same people in;
// JSONPlaceholder's has its id, name, username and e-mail, and never a password. E-mails are
// unique whatever their case, and a JSONPlaceholder comment's author named by an e-mail no user
// has is added as a user.
import { Type } from 'typebox'
import { type DataSection, StoredId, storedInstant } from '../data-section.js'
import { Nullable } from '../core/schema-types.js'
import type { UserRow } from './users.table.js'
import { User } from './users.schemas.js'
import { toUser } from './users.service.js'

/** The part of an e-mail before the @: JSONPlaceholder's `username`. */
const localPart = (email: string) => email.slice(0, email.lastIndexOf('@'))

/** A user a file gives only its id, name and e-mail: the other columns as a new plain user's, made `now`. */
const plainUserColumns = (user: { id: unknown; name: unknown; email: unknown }, now: string) => ({
  ...user,
  age: null,
  avatar: null,
  role: 'user',
  password_hash: null,
  created_at: now,
  updated_at: now,
})

export const usersData: DataSection<UserRow> = {
  name: 'users',
  noun: 'user',
  unique: [
    {
      field: 'email',
      column: 'email',
      noun: 'e-mail',
      ignoreCase: true,
      rowFor: (email, id, now) => plainUserColumns({ id, name: email.split('@')[0] || email, email }, now),
    },
  ],
  formats: {
    threadline: {
      write: (row) => ({ ...toUser(row), passwordHash: row.password_hash }),
      schema: Type.Object(
        { ...User.properties, id: StoredId, passwordHash: Nullable(Type.String({ minLength: 1, maxLength: 500 })) },
        { additionalProperties: false },
      ),
      toColumns: (row) => ({
        id: row.id,
        name: row.name,
        email: row.email,
        age: row.age,
        avatar: row.avatar,
        role: row.role,
        password_hash: row.passwordHash ?? null,
        created_at: storedInstant(row.createdAt),
        updated_at: storedInstant(row.updatedAt),
      }),
    },
    jsonplaceholder: {
      write: (row) => ({ id: row.id, name: row.name, username: localPart(row.email), email: row.email }),
      // The fields Threadline keeps are checked; the rest are dropped unread.
      schema: Type.Object({ id: StoredId, name: User.properties.name, email: User.properties.email }),
      dropped: ['username', 'address', 'phone', 'website', 'company'],
      toColumns: (row, { now }) => plainUserColumns({ id: row.id, name: row.name, email: row.email }, now),
    },
  },
}
