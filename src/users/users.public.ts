// What other features may use of users: the item schema, the service's type, how to load a user (or
// only check one is there, or read a page of one of a user's lists) and write one as the API does,
// and the batched reference resolvers use. Everything else in this folder is the feature's own (the
// lint refuses other features' imports of it).
export { User } from './users.schemas.js'
export { loadUser, loadUserId, pageOfUser, toUser, type UsersService } from './users.service.js'
export { userReference } from './users.graphql.js'
export type { UserRow, UsersTable } from './users.table.js'
