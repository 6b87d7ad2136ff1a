// The users' section of the data files (src/data-section.ts): in Threadline's format a user
// as the API shows it plus the stored password hash, so that an import signs the same people in;
// JSONPlaceholder's has its id, name, username, e-mail and the rest of its profile (address, phone,
// website, company), and never a password. E-mails are unique whatever their case.
import { Type } from 'typebox'
import { type DataSection, type Fields, StoredId, storedInstant } from '../data-section.js'
import { Nullable } from '../core/schema-types.js'
import type { UserRow } from './users.table.js'
import { type Address, type Company, User } from './users.schemas.js'
import { profileColumns, toUser } from './users.service.js'

/** The part of an e-mail before the @: the `username` of a user who has none. */
const localPart = (email: string) => email.slice(0, email.lastIndexOf('@'))

/** The profile's fields, each optional: a file made before users had a profile has none of them. */
const profileFields = {
  username: Type.Optional(User.properties.username),
  phone: Type.Optional(User.properties.phone),
  website: Type.Optional(User.properties.website),
  address: Type.Optional(User.properties.address),
  company: Type.Optional(User.properties.company),
}

/** A checked row's profile as its columns: a field left out is null. */
const profileOf = (row: Fields) => {
  const columns = profileColumns({
    username: row.username as string | null | undefined,
    phone: row.phone as string | null | undefined,
    website: row.website as string | null | undefined,
    address: row.address as Address | null | undefined,
    company: row.company as Company | null | undefined,
  })
  return {
    username: columns.username ?? null,
    phone: columns.phone ?? null,
    website: columns.website ?? null,
    address: columns.address ?? null,
    company: columns.company ?? null,
  }
}

export const usersData: DataSection<UserRow> = {
  name: 'users',
  noun: 'user',
  unique: [{ field: 'email', column: 'email', noun: 'e-mail', ignoreCase: true }],
  formats: {
    threadline: {
      write: (row) => ({ ...toUser(row), passwordHash: row.password_hash }),
      schema: Type.Object(
        {
          ...User.properties,
          ...profileFields,
          id: StoredId,
          passwordHash: Nullable(Type.String({ minLength: 1, maxLength: 500 })),
        },
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
        ...profileOf(row),
        created_at: storedInstant(row.createdAt),
        updated_at: storedInstant(row.updatedAt),
      }),
    },
    jsonplaceholder: {
      // Its fields in its order; a field the user has no value for is left out (JSONPlaceholder has
      // no nulls), but every user has a username, as every JSONPlaceholder user has.
      write: (row) => {
        const user = toUser(row)
        const present = (fields: Fields) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null))
        return {
          id: user.id,
          name: user.name,
          username: user.username ?? localPart(user.email),
          email: user.email,
          ...present({ address: user.address, phone: user.phone, website: user.website, company: user.company }),
        }
      },
      // The fields Threadline keeps are checked; any other is left unread.
      schema: Type.Object({ id: StoredId, name: User.properties.name, email: User.properties.email, ...profileFields }),
      toColumns: (row, { now }) => ({
        id: row.id,
        name: row.name,
        email: row.email,
        age: null,
        avatar: null,
        role: 'user',
        password_hash: null,
        ...profileOf(row),
        created_at: now,
        updated_at: now,
      }),
    },
  },
}
