// The todos feature: a user's todos.
import type { Feature } from '../core/feature.js'
import { userReference } from '../users/users.feature.js'
import type { UsersService } from '../users/users.service.js'
import { todosResolvers, todosTypeDefs } from './todos.graphql.js'
import { todosRoutes } from './todos.routes.js'
import { createTodosService, type TodosService } from './todos.service.js'
import { todosData } from './todos.data.js'

export const todosFeature = {
  name: 'todos',
  createService: createTodosService,
  routes: todosRoutes,
  graphql: { typeDefs: todosTypeDefs, resolvers: ({ todos, users }) => todosResolvers(todos, userReference(users)) },
  data: todosData,
} satisfies Feature<{ todos: TodosService; users: UsersService }>
