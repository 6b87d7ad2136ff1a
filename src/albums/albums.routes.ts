// REST adapter for albums: schema, access, one service call; the GET answers represented as
// `select` and `include` ask (albums.embeds.ts). Each route is served under its owner
// (`/users/{userId}/albums/{albumId}`) and at the top level (`/albums/{albumId}`, JSONPlaceholder's address), where the owner is a filter
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
import { Album, AlbumsCollection, CreateAlbumBody, type CreateAlbumInput, UpdateAlbumBody } from './albums.schemas.js'
import { albumRequestExamples, albumsOpenApi } from './albums.openapi.js'
import type { RoutesOptions } from '../feature.js'
import type { UsersService } from '../users/users.public.js'
import { albumEmbeds, representedAlbum } from './albums.embeds.js'
import type { AlbumsService } from './albums.service.js'

const OneAlbum = ResourceEnvelope(Album)

/** An album created at the top level names its owner; left out, the caller. */
const CreateAlbumForUserBody = Type.Object(
  { ...CreateAlbumBody.properties, userId: Type.Optional({ ...Id, description: 'The owner; left out, the caller.' }) },
  { additionalProperties: false },
)

const UNDER_OWNER: Place = {
  collection: '/users/:userId/albums',
  item: '/users/:userId/albums/:albumId',
  collectionParams: Type.Object({ userId: IdParam }),
  itemParams: Type.Object({ userId: IdParam, albumId: IdParam }),
  operations: { list: 'listAlbums', get: 'getAlbum', create: 'createAlbum', update: 'updateAlbum', remove: 'deleteAlbum' },
  listed: "List a user's albums",
}

const TOP_LEVEL: Place = {
  collection: '/albums',
  item: '/albums/:albumId',
  itemParams: Type.Object({ albumId: IdParam }),
  operations: { list: 'listAllAlbums', get: 'getAlbumById', create: 'createAlbumForUser', update: 'updateAlbumById', remove: 'deleteAlbumById' },
  listed: "List every user's albums (`userId` filters by owner)",
}

/** `users` is read for an album's owner; `embedded`: what other features offer an album's answers (its photos). */
export const albumsRoutes: FastifyPluginAsyncTypebox<{ albums: AlbumsService; users: UsersService } & RoutesOptions> = async (
  app,
  { albums, users, embedded, chargeRateLimit },
) => {
  const embeds = albumEmbeds(users, embedded)
  const representation = representationShapeOf(embeds)
  const RepresentedAlbum = representedAlbum(embedded)

  for (const place of [UNDER_OWNER, TOP_LEVEL]) {
    const topLevel = place === TOP_LEVEL

    app.get(
      place.collection,
      {
        config: { access: 'public', reads: ['albums'], collection: AlbumsCollection, representation, openapi: { resource: albumsOpenApi } },
        schema: {
          operationId: place.operations.list,
          summary: place.listed,
          description: 'Anyone.',
          tags: [albumsOpenApi.tag.name],
          ...(place.collectionParams === undefined ? {} : { params: place.collectionParams }),
          response: { 200: CollectionEnvelope(RepresentedAlbum) },
        },
      },
      async (request, reply) => {
        const userId = parentOf(request.params, 'userId')
        const aggregate = (query: AggregateQuery, pay: AggregatePayment) => albums.aggregate(request.caller, userId, query, pay)
        const read = (query: CollectionQuery) => (userId === undefined ? albums.listAll(request.caller, query) : albums.list(request.caller, userId, query))
        return answerCollection(
          request,
          reply,
          { spec: AlbumsCollection, scope: userId === undefined ? '' : `user:${userId}`, embeds, read, aggregate },
          chargeRateLimit,
        )
      },
    )

    app.get(
      place.item,
      {
        config: { access: 'public', reads: ['albums'], representation, openapi: { resource: albumsOpenApi } },
        schema: {
          operationId: place.operations.get,
          summary: 'Get an album',
          description: 'Anyone.',
          tags: [albumsOpenApi.tag.name],
          params: place.itemParams,
          response: { 200: ResourceEnvelope(RepresentedAlbum) },
        },
      },
      async (request, reply) => {
        const shown = readRepresentation(request, embeds)
        const album = await albums.get(request.caller, parentOf(request.params, 'userId'), itemIdOf(request.params, 'albumId'))
        return representedResourceBody(request, reply, shown, album, chargeRateLimit)
      },
    )

    app.post(
      place.collection,
      {
        config: {
          access: 'signed-in',
          openapi: {
            ...(topLevel ? { body: 'AlbumCreateForUser' } : {}),
            resource: albumsOpenApi,
            requestExample: topLevel ? { ...albumRequestExamples.create, userId: albumsOpenApi.example.userId } : albumRequestExamples.create,
          },
        },
        schema: {
          operationId: place.operations.create,
          summary: 'Create an album',
          description:
            (topLevel ? 'The owner (`userId`, the caller when left out), or an admin. A `userId` no user has is a 422.' : 'The owner, or an admin.') +
            bulkWriteNote('albums'),
          tags: [albumsOpenApi.tag.name],
          ...(place.collectionParams === undefined ? {} : { params: place.collectionParams }),
          body: OneOrMany(topLevel ? CreateAlbumForUserBody : CreateAlbumBody),
          response: { 201: Created(Album) },
        },
      },
      async (request, reply) => {
        const userId = parentOf(request.params, 'userId')
        if (isBulk(request.body)) {
          const items = request.body as readonly (CreateAlbumInput & { userId?: number })[]
          await chargeItems(chargeRateLimit, request, reply, items.length)
          const created = albums.createMany(
            request.caller,
            items.map(({ userId: named, ...input }) => ({ userId: userId ?? named ?? requireSignedIn(request.caller).userId, input })),
          )
          return reply.code(201).send(bulkBody(userId === undefined ? await parentNamedInBody('userId', 'user', created) : await created))
        }
        const { userId: named, ...input } = request.body as CreateAlbumInput & { userId?: number }
        const album =
          userId === undefined
            ? await parentNamedInBody('userId', 'user', albums.create(request.caller, named ?? requireSignedIn(request.caller).userId, input))
            : await albums.create(request.caller, userId, input)
        const location = topLevel ? `${app.prefix}/albums/${album.id}` : `${app.prefix}/users/${album.userId}/albums/${album.id}`
        return reply.code(201).header('location', location).send(resourceBody(album))
      },
    )

    app.patch(
      place.item,
      {
        config: { access: 'signed-in', openapi: { resource: albumsOpenApi, requestExample: albumRequestExamples.update } },
        schema: {
          operationId: place.operations.update,
          summary: 'Change an album',
          description: 'The owner, or an admin. Only the fields sent change (a JSON merge patch).',
          tags: [albumsOpenApi.tag.name],
          params: place.itemParams,
          body: UpdateAlbumBody,
          response: { 200: OneAlbum },
        },
      },
      async (request, reply) =>
        resourceBody(
          await albums.update(request.caller, parentOf(request.params, 'userId'), itemIdOf(request.params, 'albumId'), request.body, {
            ifMatch: ifMatchOf(request, reply, OneAlbum),
          }),
        ),
    )

    app.delete(
      place.item,
      {
        config: { access: 'signed-in', openapi: { resource: albumsOpenApi } },
        schema: {
          operationId: place.operations.remove,
          summary: 'Delete an album',
          description: 'The owner, or an admin. Its photos go too.',
          tags: [albumsOpenApi.tag.name],
          params: place.itemParams,
        },
      },
      async (request, reply) => {
        await albums.remove(request.caller, parentOf(request.params, 'userId'), itemIdOf(request.params, 'albumId'), {
          ifMatch: ifMatchOf(request, reply, OneAlbum),
        })
        return reply.code(204).send()
      },
    )
  }
}
