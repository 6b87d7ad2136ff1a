// GraphQL adapter for todos: the Todo type, a user's todos, and the todo mutations (a new todo
// is the caller's), each one service call.
import { requireSignedIn } from '../core/caller.js'
import { WINDOW_ARGS_SDL } from '../graphql/collection-args.js'
import type { GraphQLContext, Reference, WindowArgs } from '../graphql/context.js'
import { parseId } from '../core/ids.js'
import type { User } from '../users/users.schemas.js'
import { assertValid } from '../core/validation.js'
import { type CreateTodoInput, CreateTodoBody, type Todo, type UpdateTodoInput, UpdateTodoBody } from './todos.schemas.js'
import type { TodosService } from './todos.service.js'

export const todosTypeDefs = /* GraphQL */ `
"Something a user means to do. Anyone reads todos; only their owner or an admin writes them."
type Todo {
  id: ID!
  text: String!
  completed: Boolean!
  createdAt: String!
  updatedAt: String!
  user: User!
}

"Only the fields given change."
input UpdateTodoInput {
  text: String
  completed: Boolean
}

extend type User {
  "Their todos in id order."
  todos${WINDOW_ARGS_SDL}: [Todo!]!
}

extend type Mutation {
  "A new, open todo for the caller."
  addTodo(text: String!): Todo!
  updateTodo(id: ID!, input: UpdateTodoInput!): Todo!
  "Answers the id of the deleted todo."
  deleteTodo(id: ID!): ID!
}
`

export function todosResolvers(todos: TodosService, userById: Reference<User>) {
  return {
    User: {
      todos: (user: User, args: WindowArgs, context: GraphQLContext) =>
        context.loaders.list('User.todos', args, user.id, (caller, ids, window) => todos.listOfUsers(caller, ids, window)),
    },
    Todo: {
      user: (todo: Todo, _args: unknown, context: GraphQLContext) => userById(context, todo.userId),
    },
    Mutation: {
      addTodo: (_: unknown, args: { text: string }, context: GraphQLContext) => {
        const owner = requireSignedIn(context.caller)
        const input = { text: args.text }
        assertValid<CreateTodoInput>(CreateTodoBody, input)
        return todos.create(context.caller, owner.userId, input)
      },
      updateTodo: (_: unknown, args: { id: string; input: UpdateTodoInput }, context: GraphQLContext) => {
        assertValid<UpdateTodoInput>(UpdateTodoBody, args.input)
        return todos.update(context.caller, undefined, args.id, args.input)
      },
      deleteTodo: async (_: unknown, args: { id: string }, context: GraphQLContext) => {
        await todos.remove(context.caller, undefined, args.id)
        return String(parseId(args.id))
      },
    },
  }
}
