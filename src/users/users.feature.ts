// The users feature: people, and who may administer the service.
import type { Feature } from '../feature.js'
import { countRows } from '../db/list-page.js'
import { usersResolvers, usersTypeDefs } from './users.graphql.js'
import { usersRoutes } from './users.routes.js'
import { createUsersService, type UsersService } from './users.service.js'
import { usersData } from './users.data.js'
import { usersSeed } from './users.seed.js'

export const usersFeature = {
  name: 'users',
  createService: createUsersService,
  routes: usersRoutes,
  graphql: { typeDefs: usersTypeDefs, resolvers: ({ users }) => usersResolvers(users) },
  apiIndex: {
    users_url: { path: '/users', query: 'collection' },
    user_url: { path: '/users/{user_id}', query: 'item' },
  },
  landingCount: { label: 'Users', count: (db) => countRows(db, db.selectFrom('users')) },
  data: usersData,
  seed: usersSeed,
} satisfies Feature<{ users: UsersService }>
