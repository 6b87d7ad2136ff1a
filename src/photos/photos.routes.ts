// REST adapter for the photos in an album: schema, access, one service call; the GET answers
// represented as `select` and `include` ask (photos.embeds.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { CollectionEnvelope, readCollectionQuery, representedCollectionBody } from '../http/collection-reply.js'
import { ifMatchOf } from '../http/caching.js'
import { readRepresentation, representationShapeOf } from '../http/representation.js'
import { representedResourceBody, ResourceEnvelope, resourceBody } from '../http/resource-reply.js'
import { IdParam } from '../core/schema-types.js'
import { CreatePhotoBody, Photo, PhotosCollection, UpdatePhotoBody } from './photos.schemas.js'
import { photoRequestExamples, photosOpenApi } from './photos.openapi.js'
import type { RoutesOptions } from '../feature.js'
import type { AlbumsService } from '../albums/albums.public.js'
import { photoEmbeds, representedPhoto } from './photos.embeds.js'
import type { PhotosService } from './photos.service.js'

const AlbumParams = Type.Object({ userId: IdParam, albumId: IdParam })
const PhotoParams = Type.Object({ userId: IdParam, albumId: IdParam, photoId: IdParam })
const OnePhoto = ResourceEnvelope(Photo)

/** `albums` is read for a photo's album, with what other features offer (`embedded`). */
export const photosRoutes: FastifyPluginAsyncTypebox<{ photos: PhotosService; albums: AlbumsService } & RoutesOptions> = async (
  app,
  { photos, albums, embedded, chargeRateLimit },
) => {
  const embeds = photoEmbeds(albums, embedded)
  const RepresentedPhoto = representedPhoto(embedded)
  const representation = representationShapeOf(embeds)

  app.get(
    '/users/:userId/albums/:albumId/photos',
    {
      // The album decides whether the list is there at all.
      config: { access: 'public', reads: ['photos', 'albums'], collection: PhotosCollection, representation, openapi: { resource: photosOpenApi } },
      schema: {
        operationId: 'listPhotos',
        summary: "List an album's photos",
        description: 'Anyone.',
        tags: [photosOpenApi.tag.name],
        params: AlbumParams,
        response: { 200: CollectionEnvelope(RepresentedPhoto) },
      },
    },
    async (request, reply) => {
      const { params } = request
      const query = readCollectionQuery(request, PhotosCollection, `user:${params.userId}/album:${params.albumId}`)
      const shown = readRepresentation(request, embeds)
      return representedCollectionBody(request, reply, await photos.list(request.caller, params, query), shown, chargeRateLimit)
    },
  )

  app.get(
    '/users/:userId/albums/:albumId/photos/:photoId',
    {
      config: { access: 'public', reads: ['photos', 'albums'], representation, openapi: { resource: photosOpenApi } },
      schema: {
        operationId: 'getPhoto',
        summary: 'Get a photo',
        description: 'Anyone.',
        tags: [photosOpenApi.tag.name],
        params: PhotoParams,
        response: { 200: ResourceEnvelope(RepresentedPhoto) },
      },
    },
    async (request, reply) => {
      const shown = readRepresentation(request, embeds)
      return representedResourceBody(request, reply, shown, await photos.get(request.caller, request.params, request.params.photoId), chargeRateLimit)
    },
  )

  app.post(
    '/users/:userId/albums/:albumId/photos',
    {
      config: { access: 'signed-in', openapi: { resource: photosOpenApi, requestExample: photoRequestExamples.create } },
      schema: {
        operationId: 'createPhoto',
        summary: 'Add a photo to an album',
        description: "The album's owner, or an admin.",
        tags: [photosOpenApi.tag.name],
        params: AlbumParams,
        body: CreatePhotoBody,
        response: { 201: OnePhoto },
      },
    },
    async (request, reply) => {
      const { params } = request
      const photo = await photos.create(request.caller, params, request.body)
      return reply.code(201).header('location', `${app.prefix}/users/${params.userId}/albums/${photo.albumId}/photos/${photo.id}`).send(resourceBody(photo))
    },
  )

  app.patch(
    '/users/:userId/albums/:albumId/photos/:photoId',
    {
      config: { access: 'signed-in', openapi: { resource: photosOpenApi, requestExample: photoRequestExamples.update } },
      schema: {
        operationId: 'updatePhoto',
        summary: 'Change a photo',
        description: "The album's owner, or an admin. Only the fields sent change (a JSON merge patch).",
        tags: [photosOpenApi.tag.name],
        params: PhotoParams,
        body: UpdatePhotoBody,
        response: { 200: OnePhoto },
      },
    },
    async (request, reply) =>
      resourceBody(
        await photos.update(request.caller, request.params, request.params.photoId, request.body, {
          ifMatch: ifMatchOf(request, reply, OnePhoto),
        }),
      ),
  )

  app.delete(
    '/users/:userId/albums/:albumId/photos/:photoId',
    {
      config: { access: 'signed-in', openapi: { resource: photosOpenApi } },
      schema: {
        operationId: 'deletePhoto',
        summary: 'Delete a photo',
        description: "The album's owner, or an admin.",
        tags: [photosOpenApi.tag.name],
        params: PhotoParams,
      },
    },
    async (request, reply) => {
      await photos.remove(request.caller, request.params, request.params.photoId, {
        ifMatch: ifMatchOf(request, reply, OnePhoto),
      })
      return reply.code(204).send()
    },
  )
}
