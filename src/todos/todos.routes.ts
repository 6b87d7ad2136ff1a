// REST adapter for todos: schema, access, one service call; the GET answers represented as `select`
// asks (todos.embeds.ts). Each route is served under its owner (`/users/{userId}/todos/{todoId}`)
// and at the top level (`/todos/{todoId}`, JSONPlaceholder's address), where the owner is a filter
// (`?userId=`) or, on a create, the body's `userId`.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { answerCollection, CollectionEnvelope } from '../http/collection-reply.js'
import type { AggregatePayment, AggregateQuery } from '../collections/aggregation.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import { ifMatchOf } from '../http/caching.js'
import { itemIdOf, parentNamedInBody, parentOf, type Place } from '../http/places.js'
import { readRepresentation, representationShapeOf } from '../http/representation.js'
import { representedResourceBody, ResourceEnvelope, resourceBody } from '../http/resource-reply.js'
import { bulkBody, bulkWriteNote, chargeItems, Created, isBulk, OneOrMany } from '../http/bulk-create.js'
import { requireSignedIn } from '../core/caller.js'
import { Id, IdParam } from '../core/schema-types.js'
import { CreateTodoBody, type CreateTodoInput, Todo, TodosCollection, UpdateTodoBody } from './todos.schemas.js'
import { todoRequestExamples, todosOpenApi } from './todos.openapi.js'
import type { RoutesOptions } from '../feature.js'
import { representedTodo, todoEmbeds } from './todos.embeds.js'
import type { TodosService } from './todos.service.js'

const OneTodo = ResourceEnvelope(Todo)

/** A todo created at the top level names its owner; left out, the caller. */
const CreateTodoForUserBody = Type.Object(
  { ...CreateTodoBody.properties, userId: Type.Optional({ ...Id, description: 'The owner; left out, the caller.' }) },
  { additionalProperties: false },
)

const UNDER_OWNER: Place = {
  collection: '/users/:userId/todos',
  item: '/users/:userId/todos/:todoId',
  collectionParams: Type.Object({ userId: IdParam }),
  itemParams: Type.Object({ userId: IdParam, todoId: IdParam }),
  operations: { list: 'listTodos', get: 'getTodo', create: 'createTodo', update: 'updateTodo', remove: 'deleteTodo' },
  listed: "List a user's todos",
}

const TOP_LEVEL: Place = {
  collection: '/todos',
  item: '/todos/:todoId',
  itemParams: Type.Object({ todoId: IdParam }),
  operations: { list: 'listAllTodos', get: 'getTodoById', create: 'createTodoForUser', update: 'updateTodoById', remove: 'deleteTodoById' },
  listed: "List every user's todos (`userId` filters by owner)",
}

/** `embedded`: what other features offer a todo's answers (nothing yet). */
export const todosRoutes: FastifyPluginAsyncTypebox<{ todos: TodosService } & RoutesOptions> = async (app, { todos, embedded, chargeRateLimit }) => {
  const embeds = todoEmbeds(embedded)
  const representation = representationShapeOf(embeds)
  const RepresentedTodo = representedTodo(embedded)

  for (const place of [UNDER_OWNER, TOP_LEVEL]) {
    const topLevel = place === TOP_LEVEL

    app.get(
      place.collection,
      {
        config: { access: 'public', reads: ['todos'], collection: TodosCollection, representation, openapi: { resource: todosOpenApi } },
        schema: {
          operationId: place.operations.list,
          summary: place.listed,
          description: 'Anyone.',
          tags: [todosOpenApi.tag.name],
          ...(place.collectionParams === undefined ? {} : { params: place.collectionParams }),
          response: { 200: CollectionEnvelope(RepresentedTodo) },
        },
      },
      async (request, reply) => {
        const userId = parentOf(request.params, 'userId')
        const aggregate = (query: AggregateQuery, pay: AggregatePayment) => todos.aggregate(request.caller, userId, query, pay)
        const read = (query: CollectionQuery) => (userId === undefined ? todos.listAll(request.caller, query) : todos.list(request.caller, userId, query))
        return answerCollection(
          request,
          reply,
          { spec: TodosCollection, scope: userId === undefined ? '' : `user:${userId}`, embeds, read, aggregate },
          chargeRateLimit,
        )
      },
    )

    app.get(
      place.item,
      {
        config: { access: 'public', reads: ['todos'], representation, openapi: { resource: todosOpenApi } },
        schema: {
          operationId: place.operations.get,
          summary: 'Get a todo',
          description: 'Anyone.',
          tags: [todosOpenApi.tag.name],
          params: place.itemParams,
          response: { 200: ResourceEnvelope(RepresentedTodo) },
        },
      },
      async (request, reply) => {
        const shown = readRepresentation(request, embeds)
        const todo = await todos.get(request.caller, parentOf(request.params, 'userId'), itemIdOf(request.params, 'todoId'))
        return representedResourceBody(request, reply, shown, todo, chargeRateLimit)
      },
    )

    app.post(
      place.collection,
      {
        config: {
          access: 'signed-in',
          openapi: {
            ...(topLevel ? { body: 'TodoCreateForUser' } : {}),
            resource: todosOpenApi,
            requestExample: topLevel ? { ...todoRequestExamples.create, userId: todosOpenApi.example.userId } : todoRequestExamples.create,
          },
        },
        schema: {
          operationId: place.operations.create,
          summary: 'Create a todo',
          description: topLevel
            ? 'The owner (`userId`, the caller when left out), or an admin. A new todo is not completed. A `userId` no user has is a 422.' +
              bulkWriteNote('todos')
            : 'The owner, or an admin. A new todo is not completed.' + bulkWriteNote('todos'),
          tags: [todosOpenApi.tag.name],
          ...(place.collectionParams === undefined ? {} : { params: place.collectionParams }),
          body: OneOrMany(topLevel ? CreateTodoForUserBody : CreateTodoBody),
          response: { 201: Created(Todo) },
        },
      },
      async (request, reply) => {
        const userId = parentOf(request.params, 'userId')
        if (isBulk(request.body)) {
          const items = request.body as readonly (CreateTodoInput & { userId?: number })[]
          await chargeItems(chargeRateLimit, request, reply, items.length)
          const created = todos.createMany(
            request.caller,
            items.map(({ userId: named, ...input }) => ({ userId: userId ?? named ?? requireSignedIn(request.caller).userId, input })),
          )
          return reply.code(201).send(bulkBody(userId === undefined ? await parentNamedInBody('userId', 'user', created) : await created))
        }
        const { userId: named, ...input } = request.body as CreateTodoInput & { userId?: number }
        const todo =
          userId === undefined
            ? await parentNamedInBody('userId', 'user', todos.create(request.caller, named ?? requireSignedIn(request.caller).userId, input))
            : await todos.create(request.caller, userId, input)
        const location = topLevel ? `${app.prefix}/todos/${todo.id}` : `${app.prefix}/users/${todo.userId}/todos/${todo.id}`
        return reply.code(201).header('location', location).send(resourceBody(todo))
      },
    )

    app.patch(
      place.item,
      {
        config: { access: 'signed-in', openapi: { resource: todosOpenApi, requestExample: todoRequestExamples.update } },
        schema: {
          operationId: place.operations.update,
          summary: 'Change a todo',
          description: 'The owner, or an admin. Only the fields sent change (a JSON merge patch).',
          tags: [todosOpenApi.tag.name],
          params: place.itemParams,
          body: UpdateTodoBody,
          response: { 200: OneTodo },
        },
      },
      async (request, reply) =>
        resourceBody(
          await todos.update(request.caller, parentOf(request.params, 'userId'), itemIdOf(request.params, 'todoId'), request.body, {
            ifMatch: ifMatchOf(request, reply, OneTodo),
          }),
        ),
    )

    app.delete(
      place.item,
      {
        config: { access: 'signed-in', openapi: { resource: todosOpenApi } },
        schema: {
          operationId: place.operations.remove,
          summary: 'Delete a todo',
          description: 'The owner, or an admin.',
          tags: [todosOpenApi.tag.name],
          params: place.itemParams,
        },
      },
      async (request, reply) => {
        await todos.remove(request.caller, parentOf(request.params, 'userId'), itemIdOf(request.params, 'todoId'), {
          ifMatch: ifMatchOf(request, reply, OneTodo),
        })
        return reply.code(204).send()
      },
    )
  }
}
