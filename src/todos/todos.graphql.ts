// GraphQL adapter for todos: the Todo type, one todo and every todo (a list, a page and a
// connection, as users have them), a user's todos, and the todo mutations (a new todo is the
// caller's), each one service call.
import { AGGREGATE_REFUSAL, aggregateArgsSdl, aggregateResolvers, aggregateTypesSdl } from '../graphql/aggregates.js'
import type { GraphQLResolveInfo } from 'graphql'
import { requireSignedIn } from '../core/caller.js'
import {
  COLLECTION_ARGS_REFUSAL,
  collectionArgsSdl,
  type CollectionArgs,
  filterInputSdl,
  toCollectionQuery,
  toPageResult,
  WINDOW_ARGS_SDL,
  whereInputSdl,
} from '../graphql/collection-args.js'
import { type GraphQLContext, type Reference, selectsPageTotal, type WindowArgs } from '../graphql/context.js'
import {
  CONNECTION_ARGS_REFUSAL,
  type CollectionConnectionArgs,
  type ConnectionArgs,
  connectionArgsSdl,
  connectionTypesSdl,
  NESTED_CONNECTION_ARGS_SDL,
  nestedConnection,
  selectsTotalCount,
  toConnection,
  toConnectionPlan,
} from '../graphql/connections.js'
import { DEFAULT_PAGE_LIMIT } from '../collections/pagination.js'
import { parseId } from '../core/ids.js'
import type { User } from '../users/users.public.js'
import { bulkMutation, mutation, mutationWithoutInput } from '../graphql/validated.js'
import { fieldDescription } from '../graphql/error-codes.js'
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

${filterInputSdl('TodoFilter', TodosCollection)}

${whereInputSdl('TodoWhere', TodosCollection)}

"A page of todos and where it sits."
type TodoPage {
  items: [Todo!]!
  pageInfo: PageInfo!
}

"Only the fields given change."
input UpdateTodoInput {
  text: String
  completed: Boolean
}

extend type User {
  ${fieldDescription('Their todos in id order.', { BAD_REQUEST: 'limit below 1, or a page past the offset window' })}
  todos${WINDOW_ARGS_SDL}: [Todo!]!
  ${fieldDescription("The same todos as a cursor connection, in id order; the first page (and totalCount) of every user is read in one batch; after, last and before page one user's todos at a time.", { BAD_REQUEST: 'first, last, after or before is not valid, or a pair reads both ways, one detail each' })}
  todosConnection${NESTED_CONNECTION_ARGS_SDL}: TodoConnection!
}

${aggregateTypesSdl('Todo', TodosCollection)}

extend type Query {
  ${fieldDescription('The todo with this id; null, with a NOT_FOUND error, when there is none.', { NOT_FOUND: 'no todo with this id' })}
  todo(id: ID!): Todo
  ${fieldDescription(`Every todo, of every user (the first ${DEFAULT_PAGE_LIMIT} in id order without arguments): the REST collection query language as arguments (where: {userId: {eq: "3"}} for one user's).`, { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  todos${collectionArgsSdl('TodoFilter', 'TodoWhere')}: [Todo!]!
  ${fieldDescription("Aggregates over what todos would list, with the same arguments (no page): count, and min, max, sum and avg of the fields they fit, of every row and of each group of groupBy; as REST's select=count().", { BAD_REQUEST: AGGREGATE_REFUSAL })}
  todosAggregate${aggregateArgsSdl('Todo', 'TodoFilter', 'TodoWhere')}: TodoAggregate!
  ${fieldDescription('The same page as todos, with its pageInfo (nextCursor to go on; total only when selected).', { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  todosPage${collectionArgsSdl('TodoFilter', 'TodoWhere')}: TodoPage!
  ${fieldDescription("The same todos as a Relay cursor connection (first/after, last/before), on the same keyset as todosPage's cursor; totalCount only when selected.", { BAD_REQUEST: CONNECTION_ARGS_REFUSAL })}
  todosConnection${connectionArgsSdl('TodoFilter', 'TodoWhere')}: TodoConnection!
}

extend type Mutation {
  ${fieldDescription('A new, open todo for the caller.', {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the text breaks the rules of a todo, one detail',
    NOT_FOUND: 'the caller was deleted while the operation ran',
  })}
  addTodo(text: String!): Todo!
  ${fieldDescription(
    "Open todos for the caller, one per text, 1 to 1000, in one transaction: all or none, in the order given. One point per todo; an item's errors named by its index ([3].text).",
    {
      UNAUTHENTICATED: 'anonymous caller',
      BAD_REQUEST: 'an empty list',
      PAYLOAD_TOO_LARGE: 'more than 1000 items',
      VALIDATION_ERROR: 'a text breaks the rules of a todo, one detail per item',
      NOT_FOUND: 'the caller was deleted while the operation ran',
    },
  )}
  addTodos(texts: [String!]!): [Todo!]!
  ${fieldDescription('The owner or an admin changes a todo; only the fields given change.', {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the input breaks the rules of a todo, one detail per field',
    NOT_FOUND: 'no todo with this id',
    FORBIDDEN: 'the caller is neither its owner nor an admin',
  })}
  updateTodo(id: ID!, input: UpdateTodoInput!): Todo!
  ${fieldDescription('Answers the id of the deleted todo.', {
    UNAUTHENTICATED: 'anonymous caller',
    NOT_FOUND: 'no todo with this id',
    FORBIDDEN: 'the caller is neither its owner nor an admin',
  })}
  deleteTodo(id: ID!): ID!
}
`

export function todosResolvers(todos: TodosService, userById: Reference<User>) {
  const aggregate = aggregateResolvers('Todo', TodosCollection, (caller, request) => todos.aggregate(caller, undefined, request))
  return {
    ...aggregate.typeResolvers,
    Query: {
      todosAggregate: aggregate.field,
      todo: (_: unknown, args: { id: string }, context: GraphQLContext) => todos.get(context.caller, undefined, args.id),
      todos: async (_: unknown, args: CollectionArgs, context: GraphQLContext) =>
        (await todos.listAll(context.caller, toCollectionQuery(TodosCollection, args, { withTotal: false }))).items,
      todosPage: async (_: unknown, args: CollectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        toPageResult(await todos.listAll(context.caller, toCollectionQuery(TodosCollection, args, { withTotal: selectsPageTotal(info) }))),
      todosConnection: async (_: unknown, args: CollectionConnectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) => {
        const plan = toConnectionPlan(TodosCollection, args, { withTotal: selectsTotalCount(info) })
        return toConnection(plan, await todos.listAll(context.caller, plan.query))
      },
    },
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
      addTodos: bulkMutation({ item: CreateTodoBody, from: (args: { texts: string[] }) => args.texts.map((text) => ({ text })) }, (items, _args, context) => {
        const { userId } = requireSignedIn(context.caller)
        return todos.createMany(
          context.caller,
          items.map((input) => ({ userId, input })),
        )
      }),
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
