// The users feature: people, and who may administer the service.
import type { Feature } from '../core/feature.js'
import type { PostsService } from '../posts/posts.service.js'
import type { TodosService } from '../todos/todos.service.js'
import { userReference, usersResolvers, usersTypeDefs } from './users.graphql.js'
import { usersRoutes } from './users.routes.js'
import { createUsersService, type UsersService } from './users.service.js'
import { usersData } from './users.data.js'

export const usersFeature = {
  name: 'users',
  createService: createUsersService,
  routes: usersRoutes,
  graphql: { typeDefs: usersTypeDefs, resolvers: ({ users }) => usersResolvers(users) },
  data: usersData,
} satisfies Feature<{ users: UsersService; posts: PostsService; todos: TodosService }>

/** How other features' resolvers read a user by id (batched per operation). */
export { userReference }
