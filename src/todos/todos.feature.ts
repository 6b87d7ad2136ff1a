// The todos feature: a user's todos.
import type { Feature } from '../feature.js'
import { countRows } from '../db/list-page.js'
import { userReference, type UsersService } from '../users/users.public.js'
import { todosOfUser } from './todos.embeds.js'
import { todosResolvers, todosTypeDefs } from './todos.graphql.js'
import { todosRoutes } from './todos.routes.js'
import { createTodosService, type TodosService } from './todos.service.js'
import { todosData } from './todos.data.js'
import { todosSeed } from './todos.seed.js'

export const todosFeature = {
  name: 'todos',
  createService: createTodosService,
  routes: todosRoutes,
  graphql: { typeDefs: todosTypeDefs, resolvers: ({ todos, users }) => todosResolvers(todos, userReference(users)) },
  embeds: [todosOfUser],
  apiIndex: {
    user_todos_url: { path: '/users/{user_id}/todos', query: 'collection' },
    user_todo_url: { path: '/users/{user_id}/todos/{todo_id}', query: 'item' },
  },
  landingCount: { label: 'Todos', count: (db) => countRows(db, db.selectFrom('todos')) },
  data: todosData,
  seed: todosSeed,
} satisfies Feature<{ todos: TodosService; users: UsersService }>
