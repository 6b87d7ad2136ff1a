// REST adapter for the photos of albums: schema, access, one service call; the GET answers
// represented as `select` and `include` ask (photos.embeds.ts). Each route is served under its album
// (`/users/{userId}/albums/{albumId}/photos/{photoId}`) and at the top level (`/photos/{photoId}`,
// JSONPlaceholder's address, where the album is a filter, `?albumId=`, or on a create the body's
// `albumId`); an album's photos are listed at `/albums/{albumId}/photos` too.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { answerCollection, CollectionEnvelope } from '../http/collection-reply.js'
import type { AggregatePayment, AggregateQuery } from '../collections/aggregation.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import { ifMatchOf } from '../http/caching.js'
import { itemIdOf, parentNamedInBody, parentOf, type Place } from '../http/places.js'
import { readRepresentation, representationShapeOf } from '../http/representation.js'
import { representedResourceBody, ResourceEnvelope, resourceBody } from '../http/resource-reply.js'
import { bulkBody, bulkWriteNote, chargeItems, Created, isBulk, OneOrMany } from '../http/bulk-create.js'
import { Id, IdParam } from '../core/schema-types.js'
import { CreatePhotoBody, type CreatePhotoInput, Photo, PhotosCollection, UpdatePhotoBody } from './photos.schemas.js'
import { photoRequestExamples, photosOpenApi } from './photos.openapi.js'
import type { RoutesOptions } from '../feature.js'
import type { AlbumsService } from '../albums/albums.public.js'
import { photoEmbeds, representedPhoto } from './photos.embeds.js'
import type { AlbumPath, PhotosService } from './photos.service.js'

const OnePhoto = ResourceEnvelope(Photo)

/** A photo added at the top level names its album. */
const CreatePhotoInAlbumBody = Type.Object(
  { ...CreatePhotoBody.properties, albumId: { ...Id, description: 'The album it is added to.' } },
  { additionalProperties: false },
)

const UNDER_ALBUM: Place = {
  collection: '/users/:userId/albums/:albumId/photos',
  item: '/users/:userId/albums/:albumId/photos/:photoId',
  collectionParams: Type.Object({ userId: IdParam, albumId: IdParam }),
  itemParams: Type.Object({ userId: IdParam, albumId: IdParam, photoId: IdParam }),
  operations: { list: 'listPhotos', get: 'getPhoto', create: 'createPhoto', update: 'updatePhoto', remove: 'deletePhoto' },
  listed: "List an album's photos",
}

const TOP_LEVEL: Place = {
  collection: '/photos',
  item: '/photos/:photoId',
  itemParams: Type.Object({ photoId: IdParam }),
  operations: { list: 'listAllPhotos', get: 'getPhotoById', create: 'createPhotoInAlbum', update: 'updatePhotoById', remove: 'deletePhotoById' },
  listed: 'List the photos of every album (`albumId` filters by album)',
}

/** The album a place's path names, if it names one. */
const albumPathOf = (params: unknown): AlbumPath | undefined => {
  const albumId = parentOf(params, 'albumId')
  return albumId === undefined ? undefined : { userId: parentOf(params, 'userId'), albumId }
}

/** `albums` is read for a photo's album, with what other features offer (`embedded`). */
export const photosRoutes: FastifyPluginAsyncTypebox<{ photos: PhotosService; albums: AlbumsService } & RoutesOptions> = async (
  app,
  { photos, albums, embedded, chargeRateLimit },
) => {
  const embeds = photoEmbeds(albums, embedded)
  const RepresentedPhoto = representedPhoto(embedded)
  const representation = representationShapeOf(embeds)

  const listOptions = (operationId: string, summary: string, params: Place['collectionParams']) => ({
    config: {
      access: 'public' as const,
      reads: ['photos', 'albums'],
      collection: PhotosCollection,
      representation,
      openapi: { resource: photosOpenApi },
    },
    schema: {
      operationId,
      summary,
      description: 'Anyone.',
      tags: [photosOpenApi.tag.name],
      ...(params === undefined ? {} : { params }),
      response: { 200: CollectionEnvelope(RepresentedPhoto) },
    },
  })

  /** A page of an album's photos, or (no album in the path) of every photo. */
  const list = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = albumPathOf(request.params)
    const scope = path === undefined ? '' : `${path.userId === undefined ? '' : `user:${path.userId}/`}album:${path.albumId}`
    const aggregate = (query: AggregateQuery, pay: AggregatePayment) => photos.aggregate(request.caller, path, query, pay)
    const read = (query: CollectionQuery) => (path === undefined ? photos.listAll(request.caller, query) : photos.list(request.caller, path, query))
    return answerCollection(request, reply, { spec: PhotosCollection, scope, embeds, read, aggregate }, chargeRateLimit)
  }

  // JSONPlaceholder's shortcut: an album's photos without its owner's id.
  app.get('/albums/:albumId/photos', listOptions('listPhotosOfAlbum', "List an album's photos", Type.Object({ albumId: IdParam })), list)

  for (const place of [UNDER_ALBUM, TOP_LEVEL]) {
    const topLevel = place === TOP_LEVEL

    app.get(place.collection, listOptions(place.operations.list, place.listed, place.collectionParams), list)

    app.get(
      place.item,
      {
        config: { access: 'public', reads: ['photos', 'albums'], representation, openapi: { resource: photosOpenApi } },
        schema: {
          operationId: place.operations.get,
          summary: 'Get a photo',
          description: 'Anyone.',
          tags: [photosOpenApi.tag.name],
          params: place.itemParams,
          response: { 200: ResourceEnvelope(RepresentedPhoto) },
        },
      },
      async (request, reply) => {
        const shown = readRepresentation(request, embeds)
        const photo = await photos.get(request.caller, albumPathOf(request.params), itemIdOf(request.params, 'photoId'))
        return representedResourceBody(request, reply, shown, photo, chargeRateLimit)
      },
    )

    app.post(
      place.collection,
      {
        config: {
          access: 'signed-in',
          openapi: {
            ...(topLevel ? { body: 'PhotoCreateInAlbum' } : {}),
            resource: photosOpenApi,
            requestExample: topLevel ? { ...photoRequestExamples.create, albumId: photosOpenApi.example.albumId } : photoRequestExamples.create,
          },
        },
        schema: {
          operationId: place.operations.create,
          summary: 'Add a photo to an album',
          description:
            (topLevel ? "The album's owner, or an admin. An `albumId` no album has is a 422." : "The album's owner, or an admin.") + bulkWriteNote('photos'),
          tags: [photosOpenApi.tag.name],
          ...(place.collectionParams === undefined ? {} : { params: place.collectionParams }),
          body: OneOrMany(topLevel ? CreatePhotoInAlbumBody : CreatePhotoBody),
          response: { 201: Created(Photo) },
        },
      },
      async (request, reply) => {
        const path = albumPathOf(request.params)
        if (isBulk(request.body)) {
          const items = request.body as readonly (CreatePhotoInput & { albumId?: number })[]
          await chargeItems(chargeRateLimit, request, reply, items.length)
          const created = photos.createMany(
            request.caller,
            items.map(({ albumId: named, ...input }) => ({ path: path ?? { albumId: named ?? 0 }, input })),
          )
          return reply.code(201).send(bulkBody(path === undefined ? await parentNamedInBody('albumId', 'album', created) : await created))
        }
        const { albumId: named, ...input } = request.body as CreatePhotoInput & { albumId?: number }
        const photo =
          path === undefined
            ? await parentNamedInBody('albumId', 'album', photos.create(request.caller, { albumId: named ?? 0 }, input))
            : await photos.create(request.caller, path, input)
        const location =
          path?.userId === undefined ? `${app.prefix}/photos/${photo.id}` : `${app.prefix}/users/${path.userId}/albums/${photo.albumId}/photos/${photo.id}`
        return reply.code(201).header('location', location).send(resourceBody(photo))
      },
    )

    app.patch(
      place.item,
      {
        config: { access: 'signed-in', openapi: { resource: photosOpenApi, requestExample: photoRequestExamples.update } },
        schema: {
          operationId: place.operations.update,
          summary: 'Change a photo',
          description: "The album's owner, or an admin. Only the fields sent change (a JSON merge patch).",
          tags: [photosOpenApi.tag.name],
          params: place.itemParams,
          body: UpdatePhotoBody,
          response: { 200: OnePhoto },
        },
      },
      async (request, reply) =>
        resourceBody(
          await photos.update(request.caller, albumPathOf(request.params), itemIdOf(request.params, 'photoId'), request.body, {
            ifMatch: ifMatchOf(request, reply, OnePhoto),
          }),
        ),
    )

    app.delete(
      place.item,
      {
        config: { access: 'signed-in', openapi: { resource: photosOpenApi } },
        schema: {
          operationId: place.operations.remove,
          summary: 'Delete a photo',
          description: "The album's owner, or an admin.",
          tags: [photosOpenApi.tag.name],
          params: place.itemParams,
        },
      },
      async (request, reply) => {
        await photos.remove(request.caller, albumPathOf(request.params), itemIdOf(request.params, 'photoId'), {
          ifMatch: ifMatchOf(request, reply, OnePhoto),
        })
        return reply.code(204).send()
      },
    )
  }
}
