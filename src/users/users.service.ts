// The rules for users, for every transport: reads are public; a signed-in user may change or
// delete themself; only an admin creates users, sets a role, or changes someone else. The last
// admin can be neither demoted nor deleted.
import { type Caller, type Role, requireAdmin, requireOwnerOrAdmin, requireSignedIn } from '../core/caller.js'
import { type CollectionPage, toCollectionPage } from '../collections/collection-page.js'
import type { AggregatePayment, AggregateQuery, AggregateResult } from '../collections/aggregation.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import type { CallerTopics } from '../core/caller-changed.js'
import type { Events } from '../events/events.js'
import { isUniqueViolation } from '../db/database-errors.js'
import { toIsoTimestamp } from '../db/tables.js'
import type { UserRow, UserRowChanges } from './users.table.js'
import { AppError, notFound } from '../errors.js'
import { type IdInput, parseId } from '../core/ids.js'
import { checkPrecondition, type WriteOptions } from '../core/preconditions.js'
import type { Limiter } from '../limits/limiter.js'
import { DEFAULT_SCRYPT_N, hashPassword, verifyAgainstDecoy, verifyPassword } from './passwords.js'
import * as repo from './users.repository.js'
import type { Address, Company, CreateUserInput, ReplaceUserInput, UpdateUserInput, User } from './users.schemas.js'
import { singleStatementWrite, writeTransaction } from '../db/write-transaction.js'
import { type Columns, Projection, sortColumns } from '../db/projection.js'

export interface UsersServiceDeps {
  db: Db
  /** Where callerChanged is published when a role changes or a user is deleted (open connections narrow or close on it). */
  events: Pick<Events<CallerTopics>, 'publish'>
  /**
   * Passwords one user may set per window (each costs a scrypt derivation). 'unlimited' only for
   * the operator's CLI and test fixtures; the HTTP app always gives one.
   */
  passwordChanges: Limiter | 'unlimited'
  /** scrypt's cost N for new passwords and the decoy (PASSWORD_SCRYPT_N). @default DEFAULT_SCRYPT_N */
  scryptN?: number
}

export type UsersService = ReturnType<typeof createUsersService>

export function createUsersService({ db, events, passwordChanges, scryptN = DEFAULT_SCRYPT_N }: UsersServiceDeps) {
  /**
   * The stored form of a password `setter` sets: a point of their password allowance first
   * (RATE_LIMITED when it is spent), given back when no hash was made (too much hashing waits).
   */
  async function hashFor(setter: Caller, password: string): Promise<string> {
    const key = String(setter.userId)
    if (passwordChanges !== 'unlimited') {
      const verdict = await passwordChanges.consume(key)
      if (!verdict.allowed) {
        const { limit, retryAfterS } = verdict
        throw new AppError('RATE_LIMITED', `Too many passwords set: ${limit} per window; retry in ${retryAfterS} s`, undefined, { retryAfterS })
      }
    }
    try {
      return await hashPassword(password, `user:${key}`, scryptN)
    } catch (error) {
      if (passwordChanges !== 'unlimited') await passwordChanges.reward(key)
      throw error
    }
  }

  return {
    /**
     * For signing in (the tokens feature): the id of the user with this e-mail address when the
     * password is theirs, else undefined, after the same work either way (a decoy derivation for an
     * unknown address or a user without a password), so the time taken tells nothing.
     */
    async verifyCredentials(email: string, password: string, address: string): Promise<number | undefined> {
      const user = await repo.findUserByEmail(db, email)
      const valid =
        user?.password_hash != null ? await verifyPassword(password, user.password_hash, address) : await verifyAgainstDecoy(password, address, scryptN)
      return valid && user !== undefined ? user.id : undefined
    },

    /** For the operator's CLI (a token for a user): the id of the user named by id or e-mail address, if there is one. */
    async idOf(user: string): Promise<number | undefined> {
      const id = parseId(user)
      return (id === undefined ? await repo.findUserByEmail(db, user) : await repo.findUserById(db, id))?.id
    },

    /** `columns`: only those are read, and only their fields set (the sort keys are read too, for the cursors). */
    async list(_caller: Caller | null, query: CollectionQuery, columns: Columns<UserRow> = userFields.all): Promise<CollectionPage<User>> {
      const read = userFields.plus(columns, sortColumns(query))
      return toCollectionPage(query, await repo.listUsers(db, query, read), (row) => userFields.read(row, read))
    },

    /** The users `list` would list, aggregated as asked; `pay` is charged for the rows read. */
    aggregate(_caller: Caller | null, request: AggregateQuery, pay?: AggregatePayment): Promise<AggregateResult> {
      return repo.aggregateUsers(db, request, pay)
    },

    /** `columns`: only those are read, and only their fields set. */
    async get(_caller: Caller | null, id: IdInput, columns: Columns<UserRow> = userFields.all): Promise<User> {
      return userFields.read(await loadUser(db, id, columns), columns)
    },

    /** The users with these ids, by id; missing ones are absent. `columns`: only those are read. */
    async getMany(_caller: Caller | null, ids: readonly number[], columns: Columns<UserRow> = userFields.all): Promise<Map<number, User>> {
      return new Map((await repo.findUsersByIds(db, ids, columns)).map((row) => [row.id, userFields.read(row, columns)]))
    },

    async create(caller: Caller | null, input: CreateUserInput): Promise<User> {
      const admin = requireAdmin(caller, 'create users')
      const now = new Date().toISOString()
      const passwordHash = input.password === undefined ? null : await hashFor(admin, input.password)
      // A write transaction, as every write of the services: what a request asks to commit with its writes commits with this one.
      const row = await translateConflicts(() =>
        writeTransaction(db, (trx) =>
          repo.insertUser(trx, {
            name: input.name,
            email: input.email,
            age: input.age ?? null,
            avatar: input.avatar ?? null,
            role: input.role ?? 'user',
            password_hash: passwordHash,
            ...profileColumns(input),
            created_at: now,
            updated_at: now,
          }),
        ),
      )
      return toUser(row)
    },

    /** PUT: optional fields not given become null; role and password not given stay as they are. */
    replace(caller: Caller | null, id: IdInput, input: ReplaceUserInput, options?: WriteOptions<User>): Promise<User> {
      return change(
        caller,
        id,
        {
          ...input,
          age: input.age ?? null,
          avatar: input.avatar ?? null,
          username: input.username ?? null,
          phone: input.phone ?? null,
          website: input.website ?? null,
          address: input.address ?? null,
          company: input.company ?? null,
        },
        options,
      )
    },

    /** PATCH: only the fields given change. */
    update(caller: Caller | null, id: IdInput, input: UpdateUserInput, options?: WriteOptions<User>): Promise<User> {
      return change(caller, id, input, options)
    },

    /** Deletes the user with their posts, comments, todos and tokens. */
    async remove(caller: Caller | null, id: IdInput, options?: WriteOptions<User>): Promise<void> {
      const signedIn = requireSignedIn(caller)
      const deleted = await writeTransaction(db, async (trx) => {
        const target = await loadUser(trx, id)
        requireOwnerOrAdmin(signedIn, target.id, 'delete this user')
        checkPrecondition(options, () => toUser(target))
        if (target.role === 'admin') await assertAnotherAdminRemains(trx)
        await repo.deleteUser(trx, target.id)
        return target.id
      })
      // Committed: their open connections close now, on every instance.
      await events.publish('callerChanged', { userId: deleted, change: 'user-deleted' })
    },
  }

  async function change(caller: Caller | null, id: IdInput, input: UpdateUserInput, options?: WriteOptions<User>): Promise<User> {
    const signedIn = requireSignedIn(caller)
    const userId = parseId(id)
    // Nothing to read before the write: the caller may change the user whatever the row holds
    // (their own, or an admin), and no If-Match, role or password is to be checked or hashed. The
    // write is then one statement, made only if a field changes; when it wrote nothing, the path
    // below reads the row to answer it as it is, or NOT_FOUND.
    const alone = options?.ifMatch === undefined && input.role === undefined && input.password === undefined
    if (userId !== undefined && alone && (signedIn.role === 'admin' || signedIn.userId === userId)) {
      const stamp = { updated_at: new Date().toISOString() }
      const written = await singleStatementWrite(db, (trx) => translateConflicts(() => repo.updateUserIfChanged(trx, userId, givenColumns(input), { stamp })))
      if (written !== undefined) return toUser(written)
    }
    // Hash before the transaction (scrypt takes tens of milliseconds and must not hold the writer),
    // and only for a caller who may make the change: a refusal must cost nothing.
    let passwordHash: string | undefined
    if (input.password !== undefined) {
      requireOwnerOrAdmin(signedIn, (await loadUser(db, id)).id, 'change this user')
      passwordHash = await hashFor(signedIn, input.password)
    }
    let roleBefore: Role | undefined
    const changed = await writeTransaction(db, async (trx) => {
      const target = await loadUser(trx, id)
      roleBefore = target.role
      requireOwnerOrAdmin(signedIn, target.id, 'change this user')
      checkPrecondition(options, () => toUser(target))
      if (input.role !== undefined && input.role !== target.role) {
        requireAdmin(signedIn, 'change a role')
        if (target.role === 'admin') await assertAnotherAdminRemains(trx)
      }
      const changes = changedColumns(target, input)
      if (passwordHash !== undefined) changes.password_hash = passwordHash
      if (Object.keys(changes).length === 0) return toUser(target)
      changes.updated_at = new Date().toISOString()
      return toUser(await translateConflicts(() => repo.updateUser(trx, target.id, changes)))
    })
    // Committed: their open connections are judged with the new role from now on, on every instance.
    if (roleBefore !== undefined && changed.role !== roleBefore)
      await events.publish('callerChanged', { userId: changed.id, change: 'role-changed', role: changed.role })
    return changed
  }
}

/** The user with this id, or NOT_FOUND; `columns`: only those are read. */
export async function loadUser(db: Db, id: IdInput, columns?: Columns<UserRow>): Promise<UserRow> {
  const userId = parseId(id)
  const row = userId === undefined ? undefined : await repo.findUserById(db, userId, columns)
  if (row === undefined) throw notFound('User')
  return row
}

async function assertAnotherAdminRemains(db: Db): Promise<void> {
  if ((await repo.countAdmins(db)) <= 1) {
    throw new AppError('CONFLICT', 'This is the last admin: make another user an admin first')
  }
}

/** The columns whose value the input changes; an input that changes nothing writes nothing. */
function changedColumns(current: UserRow, input: UpdateUserInput): UserRowChanges {
  const changes: Record<string, unknown> = {}
  // The profile's objects are compared as stored: an object given whole replaces the one there.
  for (const [column, value] of Object.entries(givenColumns(input))) {
    if (value !== undefined && value !== current[column as keyof UserRow]) changes[column] = value
  }
  return changes
}

/** The columns of the fields an input gives, as stored (undefined: not given); the password's hash apart. */
const givenColumns = (input: UpdateUserInput): UserRowChanges => ({
  name: input.name,
  email: input.email,
  age: input.age,
  avatar: input.avatar,
  role: input.role,
  ...profileColumns(input),
})
type ProfileColumns = Pick<UserRow, 'username' | 'phone' | 'website' | 'address' | 'company'>

/**
 * The profile's columns for the fields an input gives (undefined: not given): the lines as they
 * are, the objects as JSON text with their keys in the schema's order, so that the same object is
 * always the same text, and always shown in the same order.
 */
export function profileColumns(input: {
  username?: string | null
  phone?: string | null
  website?: string | null
  address?: Address | null
  company?: Company | null
}): { [K in keyof ProfileColumns]: ProfileColumns[K] | undefined } {
  const json = <T>(value: T | null | undefined, ordered: (value: T) => unknown) =>
    value === undefined ? undefined : value === null ? null : JSON.stringify(ordered(value))
  return {
    username: input.username,
    phone: input.phone,
    website: input.website,
    address: json(input.address, ({ street, suite, city, zipcode, geo }) => ({ street, suite, city, zipcode, geo: { lat: geo.lat, lng: geo.lng } })),
    company: json(input.company, ({ name, catchPhrase, bs }) => ({ name, catchPhrase, bs })),
  }
}

/** An object of the profile from its column (written by profileColumns). */
const parsed = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T))

async function translateConflicts<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError('CONFLICT', 'A user with this e-mail address already exists', [{ field: 'email', message: 'is already taken' }])
    }
    throw error
  }
}

/** Where each field of a User is read from (a read of some fields takes only their columns). */
export const userFields = new Projection<UserRow, User>(
  {
    id: { column: 'id' },
    name: { column: 'name' },
    email: { column: 'email' },
    age: { column: 'age' },
    avatar: { column: 'avatar' },
    role: { column: 'role' },
    username: { column: 'username' },
    phone: { column: 'phone' },
    website: { column: 'website' },
    address: { column: 'address', read: parsed<Address> },
    company: { column: 'company', read: parsed<Company> },
    createdAt: { column: 'created_at', read: toIsoTimestamp },
    updatedAt: { column: 'updated_at', read: toIsoTimestamp },
  },
  ['id'],
  (row) => toUser(row),
)

/** The id column alone: what a read of a user's own lists checks of the user. */
const ID_ONLY = userFields.columnsFor([])

/** The id of the user with this id, or NOT_FOUND: its id column alone read, as a list under the user needs it. */
export async function loadUserId(db: Db, id: IdInput): Promise<number> {
  return (await loadUser(db, id, ID_ONLY)).id
}

/**
 * A page of one of a user's own lists (`/users/{id}/…`), read before the user is looked for: a
 * row of it names its user, whom a foreign key keeps (a user's rows are deleted with them), so
 * only an empty page needs the user read. NOT_FOUND when there is no such user.
 */
export async function pageOfUser<Page extends { readonly rows: readonly unknown[] }>(
  db: Db,
  id: IdInput,
  read: (userId: number) => Promise<Page>,
): Promise<Page> {
  const userId = parseId(id)
  if (userId === undefined) throw notFound('User')
  const page = await read(userId)
  if (page.rows.length === 0) await loadUserId(db, userId)
  return page
}

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    age: row.age,
    avatar: row.avatar,
    role: row.role,
    username: row.username,
    phone: row.phone,
    website: row.website,
    address: parsed<Address>(row.address),
    company: parsed<Company>(row.company),
    createdAt: toIsoTimestamp(row.created_at),
    updatedAt: toIsoTimestamp(row.updated_at),
  }
}
