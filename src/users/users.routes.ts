// REST adapter for users: schema, access, one service call.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { CollectionEnvelope, collectionBody, readCollectionQuery } from '../http/collection-reply.js'
import { ifMatchOf } from '../http/caching.js'
import { SingleEnvelope, single } from '../http/envelope.js'
import { IdParam } from '../core/schema-types.js'
import { CreateUserBody, ReplaceUserBody, UpdateUserBody, User, UsersCollection } from './users.schemas.js'
import type { UsersService } from './users.service.js'

const UserParams = Type.Object({ id: IdParam })
const OneUser = SingleEnvelope(User)

export const usersRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  app.get(
    '/users',
    {
      config: { access: 'public', collection: UsersCollection },
      schema: { response: { 200: CollectionEnvelope(User) } },
    },
    async (request, reply) =>
      collectionBody(request, reply, await users.list(request.caller, readCollectionQuery(request, UsersCollection))),
  )

  app.get(
    '/users/:id',
    { config: { access: 'public' }, schema: { params: UserParams, response: { 200: OneUser } } },
    async (request) => single(await users.get(request.caller, request.params.id)),
  )

  app.post(
    '/users',
    { config: { access: 'signed-in' }, schema: { body: CreateUserBody, response: { 201: OneUser } } },
    async (request, reply) => {
      const user = await users.create(request.caller, request.body)
      return reply.code(201).header('location', `${app.prefix}/users/${user.id}`).send(single(user))
    },
  )

  app.put(
    '/users/:id',
    { config: { access: 'signed-in' }, schema: { params: UserParams, body: ReplaceUserBody, response: { 200: OneUser } } },
    async (request, reply) =>
      single(await users.replace(request.caller, request.params.id, request.body, { ifMatch: ifMatchOf(request, reply, OneUser) })),
  )

  app.patch(
    '/users/:id',
    { config: { access: 'signed-in' }, schema: { params: UserParams, body: UpdateUserBody, response: { 200: OneUser } } },
    async (request, reply) =>
      single(await users.update(request.caller, request.params.id, request.body, { ifMatch: ifMatchOf(request, reply, OneUser) })),
  )

  app.delete(
    '/users/:id',
    { config: { access: 'signed-in' }, schema: { params: UserParams} },
    async (request, reply) => {
      await users.remove(request.caller, request.params.id, { ifMatch: ifMatchOf(request, reply, OneUser) })
      return reply.code(204).send()
    },
  )
}
