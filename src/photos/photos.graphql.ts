// GraphQL adapter for photos: the Photo type, one photo and every photo (a list, a page and a
// connection, as todos have them), an album's photos, and the photo mutations (in an album of the
// caller's, or any album for an admin), each one service call.
import { AGGREGATE_REFUSAL, aggregateArgsSdl, aggregateResolvers, aggregateTypesSdl } from '../graphql/aggregates.js'
import type { GraphQLResolveInfo } from 'graphql'
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
import type { Album } from '../albums/albums.public.js'
import { bulkMutation, mutation, mutationWithoutInput } from '../graphql/validated.js'
import { fieldDescription } from '../graphql/error-codes.js'
import { CreatePhotoBody, type CreatePhotoInput, type Photo, PhotosCollection, UpdatePhotoBody } from './photos.schemas.js'
import type { PhotosService } from './photos.service.js'

export const photosTypeDefs = /* GraphQL */ `
"A photo in a user's album: its title and the addresses of the image and its thumbnail. Anyone reads photos; only the album's owner or an admin writes them."
type Photo {
  id: ID!
  title: String!
  "The image (https)."
  url: String!
  "A small version of the image (https)."
  thumbnailUrl: String!
  createdAt: DateTime!
  updatedAt: DateTime!
  album: Album!
}

${connectionTypesSdl('Photo')}

${filterInputSdl('PhotoFilter', PhotosCollection)}

${whereInputSdl('PhotoWhere', PhotosCollection)}

"A page of photos and where it sits."
type PhotoPage {
  items: [Photo!]!
  pageInfo: PageInfo!
}

"A new photo in an album of the caller's (any album, for an admin)."
input CreatePhotoInput {
  albumId: ID!
  title: String!
  url: String!
  thumbnailUrl: String!
}

"Only the fields given change."
input UpdatePhotoInput {
  title: String
  url: String
  thumbnailUrl: String
}

extend type Album {
  ${fieldDescription('Its photos in id order.', { BAD_REQUEST: 'limit below 1, or a page past the offset window' })}
  photos${WINDOW_ARGS_SDL}: [Photo!]!
  ${fieldDescription("The same photos as a cursor connection, in id order; the first page (and totalCount) of every album is read in one batch; after, last and before page one album's photos at a time.", { BAD_REQUEST: 'first, last, after or before is not valid, or a pair reads both ways, one detail each' })}
  photosConnection${NESTED_CONNECTION_ARGS_SDL}: PhotoConnection!
}

${aggregateTypesSdl('Photo', PhotosCollection)}

extend type Query {
  ${fieldDescription('The photo with this id; null, with a NOT_FOUND error, when there is none.', { NOT_FOUND: 'no photo with this id' })}
  photo(id: ID!): Photo
  ${fieldDescription(`Every photo, of every album (the first ${DEFAULT_PAGE_LIMIT} in id order without arguments): the REST collection query language as arguments (where: {albumId: {eq: "3"}} for one album's).`, { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  photos${collectionArgsSdl('PhotoFilter', 'PhotoWhere')}: [Photo!]!
  ${fieldDescription("Aggregates over what photos would list, with the same arguments (no page): count, and min, max, sum and avg of the fields they fit, of every row and of each group of groupBy; as REST's select=count().", { BAD_REQUEST: AGGREGATE_REFUSAL })}
  photosAggregate${aggregateArgsSdl('Photo', 'PhotoFilter', 'PhotoWhere')}: PhotoAggregate!
  ${fieldDescription('The same page as photos, with its pageInfo (nextCursor to go on; total only when selected).', { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  photosPage${collectionArgsSdl('PhotoFilter', 'PhotoWhere')}: PhotoPage!
  ${fieldDescription("The same photos as a Relay cursor connection (first/after, last/before), on the same keyset as photosPage's cursor; totalCount only when selected.", { BAD_REQUEST: CONNECTION_ARGS_REFUSAL })}
  photosConnection${connectionArgsSdl('PhotoFilter', 'PhotoWhere')}: PhotoConnection!
}

extend type Mutation {
  ${fieldDescription(
    "Photos, 1 to 1000, each in its album, in one transaction: all or none, in the order given; the albums' owner or an admin. One point per photo; an item's errors named by its index.",
    {
      UNAUTHENTICATED: 'anonymous caller',
      BAD_REQUEST: 'an empty list',
      PAYLOAD_TOO_LARGE: 'more than 1000 items',
      VALIDATION_ERROR: 'an item breaks the rules of a photo, one detail per field of each item',
      NOT_FOUND: 'no album albumId (the first item naming it in details)',
      FORBIDDEN: "the caller is neither an album's owner nor an admin",
    },
  )}
  createPhotos(input: [CreatePhotoInput!]!): [Photo!]!
  ${fieldDescription("A new photo in an album; the album's owner or an admin.", {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the input breaks the rules of a photo, one detail per field',
    NOT_FOUND: 'no album albumId',
    FORBIDDEN: "the caller is neither the album's owner nor an admin",
  })}
  createPhoto(input: CreatePhotoInput!): Photo!
  ${fieldDescription("The album's owner or an admin changes a photo; only the fields given change.", {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the input breaks the rules of a photo, one detail per field',
    NOT_FOUND: 'no photo with this id',
    FORBIDDEN: "the caller is neither the album's owner nor an admin",
  })}
  updatePhoto(id: ID!, input: UpdatePhotoInput!): Photo!
  ${fieldDescription('Answers the id of the deleted photo.', {
    UNAUTHENTICATED: 'anonymous caller',
    NOT_FOUND: 'no photo with this id',
    FORBIDDEN: "the caller is neither the album's owner nor an admin",
  })}
  deletePhoto(id: ID!): ID!
}
`

export function photosResolvers(photos: PhotosService, albumById: Reference<Album>) {
  const aggregate = aggregateResolvers('Photo', PhotosCollection, (caller, request) => photos.aggregate(caller, undefined, request))
  return {
    ...aggregate.typeResolvers,
    Query: {
      photosAggregate: aggregate.field,
      photo: (_: unknown, args: { id: string }, context: GraphQLContext) => photos.get(context.caller, undefined, args.id),
      photos: async (_: unknown, args: CollectionArgs, context: GraphQLContext) =>
        (await photos.listAll(context.caller, toCollectionQuery(PhotosCollection, args, { withTotal: false }))).items,
      photosPage: async (_: unknown, args: CollectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        toPageResult(await photos.listAll(context.caller, toCollectionQuery(PhotosCollection, args, { withTotal: selectsPageTotal(info) }))),
      photosConnection: async (_: unknown, args: CollectionConnectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) => {
        const plan = toConnectionPlan(PhotosCollection, args, { withTotal: selectsTotalCount(info) })
        return toConnection(plan, await photos.listAll(context.caller, plan.query))
      },
    },
    Album: {
      photos: (album: Album, args: WindowArgs, context: GraphQLContext) =>
        context.loaders.list('Album.photos', args, album.id, (caller, ids, window) => photos.listOfAlbums(caller, ids, window)),
      photosConnection: (album: Album, args: ConnectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        nestedConnection(
          {
            spec: PhotosCollection,
            field: 'Album.photosConnection',
            parentId: album.id,
            scope: `user:${album.userId}/album:${album.id}`,
            readWindow: (caller, ids, window) => photos.listOfAlbums(caller, ids, window),
            readCounts: (caller, ids, atMost) => photos.countOfAlbums(caller, ids, atMost),
            readPage: (caller, query) => photos.list(caller, { userId: album.userId, albumId: album.id }, query),
          },
          args,
          context,
          info,
        ),
    },
    Photo: {
      album: (photo: Photo, _args: unknown, context: GraphQLContext) => albumById(context, photo.albumId),
    },
    Mutation: {
      createPhotos: bulkMutation(
        {
          item: CreatePhotoBody,
          from: (args: { input: (CreatePhotoInput & { albumId: string })[] }) => args.input.map(({ albumId: _, ...photo }) => photo),
        },
        (items, args, context) =>
          photos.createMany(
            context.caller,
            items.map((input, i) => ({ path: { albumId: args.input[i]!.albumId }, input })),
          ),
      ),
      // The album is in the input here, in the path over REST: the body schema checks the rest.
      createPhoto: mutation(
        {
          input: CreatePhotoBody,
          from: (args: { input: CreatePhotoInput & { albumId: string } }) => ({
            title: args.input.title,
            url: args.input.url,
            thumbnailUrl: args.input.thumbnailUrl,
          }),
        },
        (input, args, context) => photos.create(context.caller, { albumId: args.input.albumId }, input),
      ),
      updatePhoto: mutation({ input: UpdatePhotoBody }, (input, args: { id: string }, context) => photos.update(context.caller, undefined, args.id, input)),
      deletePhoto: mutationWithoutInput(async (args: { id: string }, context) => {
        await photos.remove(context.caller, undefined, args.id)
        return String(parseId(args.id))
      }),
    },
  }
}
