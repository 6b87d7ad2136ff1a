// REST adapter for a user's albums: schema, access, one service call; the GET answers represented as
// `select` and `include` ask (albums.embeds.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { CollectionEnvelope, readCollectionQuery, representedCollectionBody } from '../http/collection-reply.js'
import { ifMatchOf } from '../http/caching.js'
import { readRepresentation, representationShapeOf } from '../http/representation.js'
import { representedResourceBody, ResourceEnvelope, resourceBody } from '../http/resource-reply.js'
import { IdParam } from '../core/schema-types.js'
import { Album, AlbumsCollection, CreateAlbumBody, UpdateAlbumBody } from './albums.schemas.js'
import { albumRequestExamples, albumsOpenApi } from './albums.openapi.js'
import type { RoutesOptions } from '../feature.js'
import type { UsersService } from '../users/users.public.js'
import { albumEmbeds, representedAlbum } from './albums.embeds.js'
import type { AlbumsService } from './albums.service.js'

const UserParams = Type.Object({ userId: IdParam })
const AlbumParams = Type.Object({ userId: IdParam, albumId: IdParam })
const OneAlbum = ResourceEnvelope(Album)

/** `users` is read for an album's owner; `embedded`: what other features offer an album's answers (its photos). */
export const albumsRoutes: FastifyPluginAsyncTypebox<{ albums: AlbumsService; users: UsersService } & RoutesOptions> = async (
  app,
  { albums, users, embedded, chargeRateLimit },
) => {
  const embeds = albumEmbeds(users, embedded)
  const representation = representationShapeOf(embeds)
  const RepresentedAlbum = representedAlbum(embedded)

  app.get(
    '/users/:userId/albums',
    {
      config: { access: 'public', reads: ['albums'], collection: AlbumsCollection, representation, openapi: { resource: albumsOpenApi } },
      schema: {
        operationId: 'listAlbums',
        summary: "List a user's albums",
        description: 'Anyone.',
        tags: [albumsOpenApi.tag.name],
        params: UserParams,
        response: { 200: CollectionEnvelope(RepresentedAlbum) },
      },
    },
    async (request, reply) => {
      const { userId } = request.params
      const query = readCollectionQuery(request, AlbumsCollection, `user:${userId}`)
      const shown = readRepresentation(request, embeds)
      return representedCollectionBody(request, reply, await albums.list(request.caller, userId, query), shown, chargeRateLimit)
    },
  )

  app.get(
    '/users/:userId/albums/:albumId',
    {
      config: { access: 'public', reads: ['albums'], representation, openapi: { resource: albumsOpenApi } },
      schema: {
        operationId: 'getAlbum',
        summary: 'Get an album',
        description: 'Anyone.',
        tags: [albumsOpenApi.tag.name],
        params: AlbumParams,
        response: { 200: ResourceEnvelope(RepresentedAlbum) },
      },
    },
    async (request, reply) => {
      const shown = readRepresentation(request, embeds)
      return representedResourceBody(request, reply, shown, await albums.get(request.caller, request.params.userId, request.params.albumId), chargeRateLimit)
    },
  )

  app.post(
    '/users/:userId/albums',
    {
      config: { access: 'signed-in', openapi: { resource: albumsOpenApi, requestExample: albumRequestExamples.create } },
      schema: {
        operationId: 'createAlbum',
        summary: 'Create an album',
        description: 'The owner, or an admin.',
        tags: [albumsOpenApi.tag.name],
        params: UserParams,
        body: CreateAlbumBody,
        response: { 201: OneAlbum },
      },
    },
    async (request, reply) => {
      const album = await albums.create(request.caller, request.params.userId, request.body)
      return reply.code(201).header('location', `${app.prefix}/users/${album.userId}/albums/${album.id}`).send(resourceBody(album))
    },
  )

  app.patch(
    '/users/:userId/albums/:albumId',
    {
      config: { access: 'signed-in', openapi: { resource: albumsOpenApi, requestExample: albumRequestExamples.update } },
      schema: {
        operationId: 'updateAlbum',
        summary: 'Change an album',
        description: 'The owner, or an admin. Only the fields sent change (a JSON merge patch).',
        tags: [albumsOpenApi.tag.name],
        params: AlbumParams,
        body: UpdateAlbumBody,
        response: { 200: OneAlbum },
      },
    },
    async (request, reply) =>
      resourceBody(
        await albums.update(request.caller, request.params.userId, request.params.albumId, request.body, {
          ifMatch: ifMatchOf(request, reply, OneAlbum),
        }),
      ),
  )

  app.delete(
    '/users/:userId/albums/:albumId',
    {
      config: { access: 'signed-in', openapi: { resource: albumsOpenApi } },
      schema: {
        operationId: 'deleteAlbum',
        summary: 'Delete an album',
        description: 'The owner, or an admin. Its photos go too.',
        tags: [albumsOpenApi.tag.name],
        params: AlbumParams,
      },
    },
    async (request, reply) => {
      await albums.remove(request.caller, request.params.userId, request.params.albumId, {
        ifMatch: ifMatchOf(request, reply, OneAlbum),
      })
      return reply.code(204).send()
    },
  )
}
