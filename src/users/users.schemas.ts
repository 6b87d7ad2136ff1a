// The user as the API shows it and as callers may write it.
import { type Static, Type } from 'typebox'
import { ROLES } from '../core/caller.js'
import { defineCollection } from '../collections/collection-spec.js'
import { Id, Line, Nullable, StringEnum, Timestamp } from '../core/schema-types.js'
import { MESSAGE_KEYWORD } from '../core/validation.js'

const Name = Line({ maxLength: 100, description: "The user's display name." })
const Email = Type.String({
  format: 'email',
  maxLength: 254,
  description: 'Unique, compared without regard to case.',
})
const Age = Type.Integer({ minimum: 0, maximum: 150 })
const Avatar = Type.String({
  format: 'uri',
  maxLength: 2048,
  pattern: '^https://',
  [MESSAGE_KEYWORD]: 'must be an https URL',
})
const Role = StringEnum(ROLES, { description: 'Only an admin may set it.' })
// The profile JSONPlaceholder's users have: lines and two small objects of lines, shown to anyone
// as the name is, written by the user or an admin.
const Username = Line({ maxLength: 100, description: 'A handle; not unique.' })
const Phone = Line({ maxLength: 100 })
const Website = Line({ maxLength: 2048, description: 'As the user wrote it: a host name or a URL.' })
const ProfileLine = Line({ maxLength: 200 })
export const Address = Type.Object(
  {
    street: ProfileLine,
    suite: ProfileLine,
    city: ProfileLine,
    zipcode: ProfileLine,
    geo: Type.Object({ lat: ProfileLine, lng: ProfileLine }, { additionalProperties: false }),
  },
  { additionalProperties: false, description: 'A postal address; written whole (a PATCH replaces it, null clears it).' },
)
export type Address = Static<typeof Address>
export const Company = Type.Object(
  { name: ProfileLine, catchPhrase: ProfileLine, bs: ProfileLine },
  { additionalProperties: false, description: 'Where the user works; written whole (a PATCH replaces it, null clears it).' },
)
export type Company = Static<typeof Company>

const Password = Type.String({
  minLength: 8,
  maxLength: 200,
  pattern: '^[^\\p{Cs}]*$',
  [MESSAGE_KEYWORD]: 'must not contain invalid characters',
  description: 'Write-only: never returned. Lets the user sign in with POST /tokens.',
})

export const User = Type.Object({
  id: Id,
  name: Name,
  email: Email,
  age: Nullable(Age),
  avatar: Nullable(Avatar),
  role: Role,
  username: Nullable(Username),
  phone: Nullable(Phone),
  website: Nullable(Website),
  address: Nullable(Address),
  company: Nullable(Company),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type User = Static<typeof User>

export const CreateUserBody = Type.Object(
  {
    name: Name,
    email: Email,
    age: Type.Optional(Nullable(Age)),
    avatar: Type.Optional(Nullable(Avatar)),
    role: Type.Optional(Role),
    password: Type.Optional(Password),
    username: Type.Optional(Nullable(Username)),
    phone: Type.Optional(Nullable(Phone)),
    website: Type.Optional(Nullable(Website)),
    address: Type.Optional(Nullable(Address)),
    company: Type.Optional(Nullable(Company)),
  },
  { additionalProperties: false },
)
export type CreateUserInput = Static<typeof CreateUserBody>

/** PUT: the whole representation. Optional fields left out become null (the profile's too); role and password, when left out, stay. */
export const ReplaceUserBody = CreateUserBody
export type ReplaceUserInput = Static<typeof ReplaceUserBody>

/** PATCH: only the fields given change; null clears an optional field. */
export const UpdateUserBody = Type.Partial(CreateUserBody, { additionalProperties: false })
export type UpdateUserInput = Static<typeof UpdateUserBody>

/** What the collection query language may filter, sort and search on /users. */
export const UsersCollection = defineCollection('users', {
  id: { column: 'id', type: 'integer' },
  name: { column: 'name', type: 'string', searchable: true },
  email: { column: 'email', type: 'string', caseInsensitive: true, searchable: true },
  age: { column: 'age', type: 'integer', nullable: true },
  avatar: { column: 'avatar', type: 'string', nullable: true, filterable: false, sortable: false },
  role: { column: 'role', type: 'string', values: ROLES },
  username: { column: 'username', type: 'string', nullable: true },
  phone: { column: 'phone', type: 'string', nullable: true, filterable: false, sortable: false },
  website: { column: 'website', type: 'string', nullable: true, filterable: false, sortable: false },
  createdAt: { column: 'created_at', type: 'timestamp' },
  updatedAt: { column: 'updated_at', type: 'timestamp' },
})
