// REST adapter for a user's todos: schema, access, one service call; the GET answers represented as
// `select` asks (todos.embeds.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { CollectionEnvelope, readCollectionQuery, representedCollectionBody } from '../http/collection-reply.js'
import { ifMatchOf } from '../http/caching.js'
import { readRepresentation, representationShapeOf } from '../http/representation.js'
import { representedResourceBody, ResourceEnvelope, resourceBody } from '../http/resource-reply.js'
import { IdParam } from '../core/schema-types.js'
import { CreateTodoBody, Todo, TodosCollection, UpdateTodoBody } from './todos.schemas.js'
import { todoRequestExamples, todosOpenApi } from './todos.openapi.js'
import type { RoutesOptions } from '../feature.js'
import { representedTodo, todoEmbeds } from './todos.embeds.js'
import type { TodosService } from './todos.service.js'

const UserParams = Type.Object({ userId: IdParam })
const TodoParams = Type.Object({ userId: IdParam, todoId: IdParam })
const OneTodo = ResourceEnvelope(Todo)

/** `embedded`: what other features offer a todo's answers (nothing yet). */
export const todosRoutes: FastifyPluginAsyncTypebox<{ todos: TodosService } & RoutesOptions> = async (app, { todos, embedded, chargeRateLimit }) => {
  const embeds = todoEmbeds(embedded)
  const representation = representationShapeOf(embeds)
  const RepresentedTodo = representedTodo(embedded)
  app.get(
    '/users/:userId/todos',
    {
      config: { access: 'public', reads: ['todos'], collection: TodosCollection, representation, openapi: { resource: todosOpenApi } },
      schema: {
        operationId: 'listTodos',
        summary: "List a user's todos",
        description: 'Anyone.',
        tags: [todosOpenApi.tag.name],
        params: UserParams,
        response: { 200: CollectionEnvelope(RepresentedTodo) },
      },
    },
    async (request, reply) => {
      const { userId } = request.params
      const query = readCollectionQuery(request, TodosCollection, `user:${userId}`)
      const shown = readRepresentation(request, embeds)
      return representedCollectionBody(request, reply, await todos.list(request.caller, userId, query), shown, chargeRateLimit)
    },
  )

  app.get(
    '/users/:userId/todos/:todoId',
    {
      config: { access: 'public', reads: ['todos'], representation, openapi: { resource: todosOpenApi } },
      schema: {
        operationId: 'getTodo',
        summary: 'Get a todo',
        description: 'Anyone.',
        tags: [todosOpenApi.tag.name],
        params: TodoParams,
        response: { 200: ResourceEnvelope(RepresentedTodo) },
      },
    },
    async (request, reply) => {
      const shown = readRepresentation(request, embeds)
      return representedResourceBody(request, reply, shown, await todos.get(request.caller, request.params.userId, request.params.todoId), chargeRateLimit)
    },
  )

  app.post(
    '/users/:userId/todos',
    {
      config: { access: 'signed-in', openapi: { resource: todosOpenApi, requestExample: todoRequestExamples.create } },
      schema: {
        operationId: 'createTodo',
        summary: 'Create a todo',
        description: 'The owner, or an admin. A new todo is not completed.',
        tags: [todosOpenApi.tag.name],
        params: UserParams,
        body: CreateTodoBody,
        response: { 201: OneTodo },
      },
    },
    async (request, reply) => {
      const todo = await todos.create(request.caller, request.params.userId, request.body)
      return reply.code(201).header('location', `${app.prefix}/users/${todo.userId}/todos/${todo.id}`).send(resourceBody(todo))
    },
  )

  app.patch(
    '/users/:userId/todos/:todoId',
    {
      config: { access: 'signed-in', openapi: { resource: todosOpenApi, requestExample: todoRequestExamples.update } },
      schema: {
        operationId: 'updateTodo',
        summary: 'Change a todo',
        description: 'The owner, or an admin. Only the fields sent change (a JSON merge patch).',
        tags: [todosOpenApi.tag.name],
        params: TodoParams,
        body: UpdateTodoBody,
        response: { 200: OneTodo },
      },
    },
    async (request, reply) =>
      resourceBody(
        await todos.update(request.caller, request.params.userId, request.params.todoId, request.body, {
          ifMatch: ifMatchOf(request, reply, OneTodo),
        }),
      ),
  )

  app.delete(
    '/users/:userId/todos/:todoId',
    {
      config: { access: 'signed-in', openapi: { resource: todosOpenApi } },
      schema: {
        operationId: 'deleteTodo',
        summary: 'Delete a todo',
        description: 'The owner, or an admin.',
        tags: [todosOpenApi.tag.name],
        params: TodoParams,
      },
    },
    async (request, reply) => {
      await todos.remove(request.caller, request.params.userId, request.params.todoId, {
        ifMatch: ifMatchOf(request, reply, OneTodo),
      })
      return reply.code(204).send()
    },
  )
}
