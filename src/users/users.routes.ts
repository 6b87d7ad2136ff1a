// REST adapter for users: schema, access, one service call; the GET answers represented as `select`
// and `include` ask (users.embeds.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { answerCollection, CollectionEnvelope } from '../http/collection-reply.js'
import type { AggregatePayment, AggregateQuery } from '../collections/aggregation.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import { ifMatchOf } from '../http/caching.js'
import { readRepresentation, representationShapeOf } from '../http/representation.js'
import { representedResourceBody, ResourceEnvelope, resourceBody } from '../http/resource-reply.js'
import { IdParam } from '../core/schema-types.js'
import { CreateUserBody, ReplaceUserBody, UpdateUserBody, User, UsersCollection } from './users.schemas.js'
import { userRequestExamples, usersOpenApi } from './users.openapi.js'
import type { RoutesOptions } from '../feature.js'
import { representedUser, userEmbeds } from './users.embeds.js'
import { type UsersService, userFields } from './users.service.js'

const UserParams = Type.Object({ id: IdParam })
const OneUser = ResourceEnvelope(User)

/** With `select`, only the selected fields' columns are read (the representation shows no others). */
const columnsOf = (shown: { readonly select: ReadonlySet<string> | undefined } | undefined) =>
  shown?.select === undefined ? undefined : userFields.columnsFor(shown.select)

/** `embedded`: what other features offer a user's answers (their posts, their todos). */
export const usersRoutes: FastifyPluginAsyncTypebox<{ users: UsersService } & RoutesOptions> = async (app, { users, embedded, chargeRateLimit }) => {
  const embeds = userEmbeds(embedded)
  const RepresentedUser = representedUser(embedded)
  const representation = representationShapeOf(embeds)

  app.get(
    '/users',
    {
      config: { access: 'public', reads: ['users'], collection: UsersCollection, representation, openapi: { resource: usersOpenApi } },
      schema: {
        operationId: 'listUsers',
        summary: 'List users',
        description: 'Anyone.',
        tags: [usersOpenApi.tag.name],
        response: { 200: CollectionEnvelope(RepresentedUser) },
      },
    },
    async (request, reply) => {
      const aggregate = (query: AggregateQuery, pay: AggregatePayment) => users.aggregate(request.caller, query, pay)
      const read = (query: CollectionQuery, select: ReadonlySet<string> | undefined) => users.list(request.caller, query, columnsOf({ select }))
      return answerCollection(request, reply, { spec: UsersCollection, embeds, read, aggregate }, chargeRateLimit)
    },
  )

  app.get(
    '/users/:id',
    {
      config: { access: 'public', reads: ['users'], representation, openapi: { resource: usersOpenApi } },
      schema: {
        operationId: 'getUser',
        summary: 'Get a user',
        description: 'Anyone.',
        tags: [usersOpenApi.tag.name],
        params: UserParams,
        response: { 200: ResourceEnvelope(RepresentedUser) },
      },
    },
    async (request, reply) => {
      const shown = readRepresentation(request, embeds)
      return representedResourceBody(request, reply, shown, await users.get(request.caller, request.params.id, columnsOf(shown)), chargeRateLimit)
    },
  )

  app.post(
    '/users',
    {
      config: { access: 'signed-in', openapi: { resource: usersOpenApi, requestExample: userRequestExamples.create, errors: [409] } },
      schema: {
        operationId: 'createUser',
        summary: 'Create a user',
        description: 'Admins only. The answer says where the user is, in `Location`.',
        tags: [usersOpenApi.tag.name],
        body: CreateUserBody,
        response: { 201: OneUser },
      },
    },
    async (request, reply) => {
      const user = await users.create(request.caller, request.body)
      return reply.code(201).header('location', `${app.prefix}/users/${user.id}`).send(resourceBody(user))
    },
  )

  app.put(
    '/users/:id',
    {
      config: { access: 'signed-in', openapi: { resource: usersOpenApi, requestExample: userRequestExamples.replace, errors: [409] } },
      schema: {
        operationId: 'replaceUser',
        summary: 'Replace a user',
        description:
          'The user, or an admin. `name` and `email` are required; `age`, `avatar` and the profile (`username`, `phone`, `website`, `address`, `company`) left out become null; ' +
          '`role` (only an admin sets it) and `password` left out stay. The last admin cannot be demoted (409).',
        tags: [usersOpenApi.tag.name],
        params: UserParams,
        body: ReplaceUserBody,
        response: { 200: OneUser },
      },
    },
    async (request, reply) =>
      resourceBody(await users.replace(request.caller, request.params.id, request.body, { ifMatch: ifMatchOf(request, reply, OneUser) })),
  )

  app.patch(
    '/users/:id',
    {
      config: { access: 'signed-in', openapi: { resource: usersOpenApi, requestExample: userRequestExamples.update, errors: [409] } },
      schema: {
        operationId: 'updateUser',
        summary: 'Change part of a user',
        description:
          'The user, or an admin. Only the fields sent change (a JSON merge patch); null clears an optional field. `address` and `company` are written whole: one sent replaces the one there.',
        tags: [usersOpenApi.tag.name],
        params: UserParams,
        body: UpdateUserBody,
        response: { 200: OneUser },
      },
    },
    async (request, reply) =>
      resourceBody(await users.update(request.caller, request.params.id, request.body, { ifMatch: ifMatchOf(request, reply, OneUser) })),
  )

  app.delete(
    '/users/:id',
    {
      config: { access: 'signed-in', openapi: { resource: usersOpenApi, errors: [409] } },
      schema: {
        operationId: 'deleteUser',
        summary: 'Delete a user',
        description: 'The user, or an admin. Their posts, comments, todos and tokens go too. The last admin cannot be deleted (409).',
        tags: [usersOpenApi.tag.name],
        params: UserParams,
      },
    },
    async (request, reply) => {
      await users.remove(request.caller, request.params.id, { ifMatch: ifMatchOf(request, reply, OneUser) })
      return reply.code(204).send()
    },
  )
}
