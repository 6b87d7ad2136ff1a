// GraphQL adapter for todos: the Todo type, a user's todos, and the todo mutations (a new todo
// is the caller's), each one service call.
import type { GraphQLResolveInfo } from 'graphql'
import { requireSignedIn } from '../core/caller.js'
import { WINDOW_ARGS_SDL } from '../graphql/collection-args.js'
import type { GraphQLContext, Reference, WindowArgs } from '../graphql/context.js'
import { type ConnectionArgs, connectionTypesSdl, NESTED_CONNECTION_ARGS_SDL, nestedConnection } from '../graphql/connections.js'
import { parseId } from '../core/ids.js'
import type { User } from '../users/users.public.js'
import { mutation, mutationWithoutInput } from '../graphql/validated.js'
import { described } from '../graphql/error-codes.js'
import { CreateTodoBody, type Todo, TodosCollection, UpdateTodoBody } from './todos.schemas.js'
import type { TodosService } from './todos.service.js'

export const todosTypeDefs = /* GraphQL */ `
"Something a user means to do. Anyone reads todos; only their owner or an admin writes them."
type Todo {
  id: ID!
  text: String!
  completed: Boolean!
  createdAt: DateTime!
  updatedAt: DateTime!
  user: User!
}

${connectionTypesSdl('Todo')}

"Only the fields given change."
input UpdateTodoInput {
  text: String
  completed: Boolean
}

extend type User {
  ${described('Their todos in id order.', { BAD_REQUEST: 'limit below 1, or a page past the offset window' })}
  todos${WINDOW_ARGS_SDL}: [Todo!]!
  ${described("The same todos as a cursor connection, in id order; the first page (and totalCount) of every user is read in one batch; after, last and before page one user's todos at a time.", { BAD_REQUEST: 'first, last, after or before is not valid, or a pair reads both ways, one detail each' })}
  todosConnection${NESTED_CONNECTION_ARGS_SDL}: TodoConnection!
}

extend type Mutation {
  ${described('A new, open todo for the caller.', {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the text breaks the rules of a todo, one detail',
    NOT_FOUND: 'the caller was deleted while the operation ran',
  })}
  addTodo(text: String!): Todo!
  ${described('The owner or an admin changes a todo; only the fields given change.', {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the input breaks the rules of a todo, one detail per field',
    NOT_FOUND: 'no todo with this id',
    FORBIDDEN: 'the caller is neither its owner nor an admin',
  })}
  updateTodo(id: ID!, input: UpdateTodoInput!): Todo!
  ${described('Answers the id of the deleted todo.', {
    UNAUTHENTICATED: 'anonymous caller',
    NOT_FOUND: 'no todo with this id',
    FORBIDDEN: 'the caller is neither its owner nor an admin',
  })}
  deleteTodo(id: ID!): ID!
}
`

export function todosResolvers(todos: TodosService, userById: Reference<User>) {
  return {
    User: {
      todos: (user: User, args: WindowArgs, context: GraphQLContext) =>
        context.loaders.list('User.todos', args, user.id, (caller, ids, window) => todos.listOfUsers(caller, ids, window)),
      todosConnection: (user: User, args: ConnectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        nestedConnection(
          {
            spec: TodosCollection,
            field: 'User.todosConnection',
            parentId: user.id,
            scope: `user:${user.id}`,
            readWindow: (caller, ids, window) => todos.listOfUsers(caller, ids, window),
            readCounts: (caller, ids, atMost) => todos.countOfUsers(caller, ids, atMost),
            readPage: (caller, query) => todos.list(caller, user.id, query),
          },
          args,
          context,
          info,
        ),
    },
    Todo: {
      user: (todo: Todo, _args: unknown, context: GraphQLContext, info: GraphQLResolveInfo) => userById(context, todo.userId, info),
    },
    Mutation: {
      // The text comes as an argument of its own, not in an input object.
      addTodo: mutation({ input: CreateTodoBody, from: (args: { text: string }) => ({ text: args.text }) }, (input, _args, context) =>
        todos.create(context.caller, requireSignedIn(context.caller).userId, input),
      ),
      updateTodo: mutation({ input: UpdateTodoBody }, (input, args: { id: string }, context) => todos.update(context.caller, undefined, args.id, input)),
      deleteTodo: mutationWithoutInput(async (args: { id: string }, context) => {
        await todos.remove(context.caller, undefined, args.id)
        return String(parseId(args.id))
      }),
    },
  }
}
