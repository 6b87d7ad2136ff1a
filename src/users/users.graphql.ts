// GraphQL adapter for users: the User type, its queries and mutations, each one service call.
// The input is checked with the same schemas as the REST bodies.
import { AGGREGATE_REFUSAL, aggregateArgsSdl, aggregateResolvers, aggregateTypesSdl } from '../graphql/aggregates.js'
import type { GraphQLResolveInfo } from 'graphql'
import {
  COLLECTION_ARGS_REFUSAL,
  collectionArgsSdl,
  type CollectionArgs,
  enumFilterSdl,
  filterInputSdl,
  toCollectionQuery,
  toPageResult,
  whereInputSdl,
} from '../graphql/collection-args.js'
import {
  CONNECTION_ARGS_REFUSAL,
  type CollectionConnectionArgs,
  connectionArgsSdl,
  connectionTypesSdl,
  selectsTotalCount,
  toConnection,
  toConnectionPlan,
} from '../graphql/connections.js'
import { type GraphQLContext, type Reference, selectsPageTotal } from '../graphql/context.js'
import { notFound } from '../errors.js'
import { parseId } from '../core/ids.js'
import { DEFAULT_PAGE_LIMIT } from '../collections/pagination.js'
import { mutation, mutationWithoutInput } from '../graphql/validated.js'
import { fieldDescription } from '../graphql/error-codes.js'
import { CreateUserBody, UpdateUserBody, type User, UsersCollection } from './users.schemas.js'
import { type UsersService, userFields } from './users.service.js'
import type { Columns } from '../db/projection.js'
import type { UserRow } from './users.table.js'
import { selectionOf, type Selector } from '../graphql/selection.js'

export const usersTypeDefs = /* GraphQL */ `
"A person who writes posts and comments and keeps todos. Anyone may read users."
type User {
  id: ID!
  name: String!
  "Unique, compared without regard to case."
  email: String!
  "An https URL, or null."
  avatar: String
  age: Int
  role: Role!
  "A handle; not unique."
  username: String
  phone: String
  "As the user wrote it: a host name or a URL."
  website: String
  address: Address
  company: Company
  createdAt: DateTime!
  updatedAt: DateTime!
}

"A postal address."
type Address {
  street: String!
  suite: String!
  city: String!
  zipcode: String!
  geo: Geo!
}

"A place on the map, as the user wrote it."
type Geo {
  lat: String!
  lng: String!
}

"Where a user works."
type Company {
  name: String!
  catchPhrase: String!
  bs: String!
}

"A postal address, written whole."
input AddressInput {
  street: String!
  suite: String!
  city: String!
  zipcode: String!
  geo: GeoInput!
}

input GeoInput {
  lat: String!
  lng: String!
}

"Where a user works, written whole."
input CompanyInput {
  name: String!
  catchPhrase: String!
  bs: String!
}

enum Role {
  user
  admin
}

${enumFilterSdl('Role')}

${filterInputSdl('UserFilter', UsersCollection, { role: 'Role' })}

${whereInputSdl('UserWhere', UsersCollection, { role: 'Role' })}

"A page of users and where it sits."
type UserPage {
  items: [User!]!
  pageInfo: PageInfo!
}

${connectionTypesSdl('User')}

"Only an admin creates users or sets a role."
input CreateUserInput {
  name: String!
  email: String!
  age: Int
  avatar: String
  role: Role
  "Write-only: lets the user sign in with POST /tokens."
  password: String
  username: String
  phone: String
  website: String
  address: AddressInput
  company: CompanyInput
}

"Only the fields given change; null clears age, avatar or a field of the profile. An address or company given replaces the one there."
input UpdateUserInput {
  name: String
  email: String
  age: Int
  avatar: String
  role: Role
  password: String
  username: String
  phone: String
  website: String
  address: AddressInput
  company: CompanyInput
}

${aggregateTypesSdl('User', UsersCollection, { role: 'Role' })}

extend type Query {
  ${fieldDescription('The user with this id; null, with a NOT_FOUND error, when there is none.', { NOT_FOUND: 'no user with this id' })}
  user(id: ID!): User
  ${fieldDescription(`A page of users (the first ${DEFAULT_PAGE_LIMIT} in id order without arguments): the REST collection query language as arguments.`, { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  users${collectionArgsSdl('UserFilter', 'UserWhere')}: [User!]!
  ${fieldDescription("Aggregates over what users would list, with the same arguments (no page): count, and min, max, sum and avg of the fields they fit, of every row and of each group of groupBy; as REST's select=count().", { BAD_REQUEST: AGGREGATE_REFUSAL })}
  usersAggregate${aggregateArgsSdl('User', 'UserFilter', 'UserWhere')}: UserAggregate!
  ${fieldDescription('The same page as users, with its pageInfo (nextCursor to go on; total only when selected).', { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  usersPage${collectionArgsSdl('UserFilter', 'UserWhere')}: UserPage!
  ${fieldDescription("The same users as a Relay cursor connection (first/after, last/before), on the same keyset as usersPage's cursor; totalCount only when selected.", { BAD_REQUEST: CONNECTION_ARGS_REFUSAL })}
  usersConnection${connectionArgsSdl('UserFilter', 'UserWhere')}: UserConnection!
  ${fieldDescription('The signed-in caller, or null when anonymous.', { NOT_FOUND: 'the caller was deleted while the operation ran' })}
  viewer: User
}

extend type Mutation {
  ${fieldDescription('Only an admin creates users.', {
    UNAUTHENTICATED: 'anonymous caller',
    FORBIDDEN: 'the caller is not an admin',
    VALIDATION_ERROR: 'the input breaks the rules of a user, one detail per field',
    CONFLICT: 'the e-mail address is taken',
    RATE_LIMITED: 'the caller set too many passwords in the window',
  })}
  createUser(input: CreateUserInput!): User!
  ${fieldDescription('A user changes themself; an admin anyone.', {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the input breaks the rules of a user, one detail per field',
    NOT_FOUND: 'no user with this id',
    FORBIDDEN: 'another user, and the caller is not an admin; or a role change by a non-admin',
    CONFLICT: 'the e-mail address is taken, or the last admin would lose the role',
    RATE_LIMITED: 'the caller set too many passwords in the window',
  })}
  updateUser(id: ID!, input: UpdateUserInput!): User!
  ${fieldDescription('Deletes the user with their posts, comments, todos and tokens; answers the id.', {
    UNAUTHENTICATED: 'anonymous caller',
    NOT_FOUND: 'no user with this id',
    FORBIDDEN: 'another user, and the caller is not an admin',
    CONFLICT: 'the last admin',
  })}
  deleteUser(id: ID!): ID!
}
`

/** The columns of the fields a User field selects, and of a page's items. */
const selected: Selector<Columns<UserRow>> = { path: [], select: (fields) => userFields.columnsFor(fields) }
const selectedItems: Selector<Columns<UserRow>> = { path: ['items'], select: (fields) => userFields.columnsFor(fields) }

/** A User by id, in the operation's batch (of the same columns); a missing one is NOT_FOUND at its field, never a silent null. */
export const userReference =
  (users: UsersService): Reference<User> =>
  (context, id, info) => {
    const columns = info === undefined ? userFields.all : selectionOf(info, selected)
    return context.loaders.one(
      `User:${columns.key}`,
      id,
      (caller, ids) => users.getMany(caller, ids, columns),
      () => notFound('User'),
    )
  }

export function usersResolvers(users: UsersService) {
  const aggregate = aggregateResolvers('User', UsersCollection, (caller, request) => users.aggregate(caller, request))
  return {
    ...aggregate.typeResolvers,
    Query: {
      usersAggregate: aggregate.field,
      user: (_: unknown, args: { id: string }, context: GraphQLContext, info: GraphQLResolveInfo) =>
        users.get(context.caller, args.id, selectionOf(info, selected)),
      users: async (_: unknown, args: CollectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        (await users.list(context.caller, toCollectionQuery(UsersCollection, args, { withTotal: false }), selectionOf(info, selected))).items,
      usersPage: async (_: unknown, args: CollectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        toPageResult(
          await users.list(context.caller, toCollectionQuery(UsersCollection, args, { withTotal: selectsPageTotal(info) }), selectionOf(info, selectedItems)),
        ),
      usersConnection: async (_: unknown, args: CollectionConnectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) => {
        const plan = toConnectionPlan(UsersCollection, args, { withTotal: selectsTotalCount(info) })
        return toConnection(plan, await users.list(context.caller, plan.query))
      },
      viewer: (_: unknown, _args: unknown, context: GraphQLContext, info: GraphQLResolveInfo) =>
        context.caller === null ? null : users.get(context.caller, context.caller.userId, selectionOf(info, selected)),
    },
    Mutation: {
      createUser: mutation({ input: CreateUserBody }, (input, _args, context) => users.create(context.caller, input)),
      updateUser: mutation({ input: UpdateUserBody }, (input, args: { id: string }, context) => users.update(context.caller, args.id, input)),
      deleteUser: mutationWithoutInput(async (args: { id: string }, context) => {
        await users.remove(context.caller, args.id)
        return String(parseId(args.id))
      }),
    },
  }
}
