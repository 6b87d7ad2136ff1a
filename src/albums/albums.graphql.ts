// GraphQL adapter for albums: the Album type, one album and every album (a list, a page and a
// connection, as todos have them), a user's albums, and the album mutations (a new album is the
// caller's), each one service call; and the batched reference photos resolve their album with.
import { AGGREGATE_REFUSAL, aggregateArgsSdl, aggregateResolvers, aggregateTypesSdl } from '../graphql/aggregates.js'
import type { GraphQLResolveInfo } from 'graphql'
import { requireSignedIn } from '../core/caller.js'
import { notFound } from '../errors.js'
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
import { type Album, AlbumsCollection, CreateAlbumBody, UpdateAlbumBody } from './albums.schemas.js'
import type { AlbumsService } from './albums.service.js'

export const albumsTypeDefs = /* GraphQL */ `
"A user's photo album. Anyone reads albums; only their owner or an admin writes them."
type Album {
  id: ID!
  title: String!
  createdAt: DateTime!
  updatedAt: DateTime!
  user: User!
}

${connectionTypesSdl('Album')}

${filterInputSdl('AlbumFilter', AlbumsCollection)}

${whereInputSdl('AlbumWhere', AlbumsCollection)}

"A page of albums and where it sits."
type AlbumPage {
  items: [Album!]!
  pageInfo: PageInfo!
}

"A new album of the caller's."
input CreateAlbumInput {
  title: String!
}

"Only the fields given change."
input UpdateAlbumInput {
  title: String
}

extend type User {
  ${fieldDescription('Their albums in id order.', { BAD_REQUEST: 'limit below 1, or a page past the offset window' })}
  albums${WINDOW_ARGS_SDL}: [Album!]!
  ${fieldDescription("The same albums as a cursor connection, in id order; the first page (and totalCount) of every user is read in one batch; after, last and before page one user's albums at a time.", { BAD_REQUEST: 'first, last, after or before is not valid, or a pair reads both ways, one detail each' })}
  albumsConnection${NESTED_CONNECTION_ARGS_SDL}: AlbumConnection!
}

${aggregateTypesSdl('Album', AlbumsCollection)}

extend type Query {
  ${fieldDescription('The album with this id; null, with a NOT_FOUND error, when there is none.', { NOT_FOUND: 'no album with this id' })}
  album(id: ID!): Album
  ${fieldDescription(`Every album, of every user (the first ${DEFAULT_PAGE_LIMIT} in id order without arguments): the REST collection query language as arguments (where: {userId: {eq: "3"}} for one user's).`, { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  albums${collectionArgsSdl('AlbumFilter', 'AlbumWhere')}: [Album!]!
  ${fieldDescription("Aggregates over what albums would list, with the same arguments (no page): count, and min, max, sum and avg of the fields they fit, of every row and of each group of groupBy; as REST's select=count().", { BAD_REQUEST: AGGREGATE_REFUSAL })}
  albumsAggregate${aggregateArgsSdl('Album', 'AlbumFilter', 'AlbumWhere')}: AlbumAggregate!
  ${fieldDescription('The same page as albums, with its pageInfo (nextCursor to go on; total only when selected).', { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  albumsPage${collectionArgsSdl('AlbumFilter', 'AlbumWhere')}: AlbumPage!
  ${fieldDescription("The same albums as a Relay cursor connection (first/after, last/before), on the same keyset as albumsPage's cursor; totalCount only when selected.", { BAD_REQUEST: CONNECTION_ARGS_REFUSAL })}
  albumsConnection${connectionArgsSdl('AlbumFilter', 'AlbumWhere')}: AlbumConnection!
}

extend type Mutation {
  ${fieldDescription("A new album of the caller's.", {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the input breaks the rules of an album, one detail per field',
    NOT_FOUND: 'the caller was deleted while the operation ran',
  })}
  createAlbum(input: CreateAlbumInput!): Album!
  ${fieldDescription(
    "Albums of the caller's, 1 to 1000, in one transaction: all or none, in the order given. One point per album; an item's errors named by its index.",
    {
      UNAUTHENTICATED: 'anonymous caller',
      BAD_REQUEST: 'an empty list',
      PAYLOAD_TOO_LARGE: 'more than 1000 items',
      VALIDATION_ERROR: 'an item breaks the rules of an album, one detail per field of each item',
      NOT_FOUND: 'the caller was deleted while the operation ran',
    },
  )}
  createAlbums(input: [CreateAlbumInput!]!): [Album!]!
  ${fieldDescription('The owner or an admin changes an album; only the fields given change.', {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the input breaks the rules of an album, one detail per field',
    NOT_FOUND: 'no album with this id',
    FORBIDDEN: 'the caller is neither its owner nor an admin',
  })}
  updateAlbum(id: ID!, input: UpdateAlbumInput!): Album!
  ${fieldDescription('Deletes the album with its photos; answers the id.', {
    UNAUTHENTICATED: 'anonymous caller',
    NOT_FOUND: 'no album with this id',
    FORBIDDEN: 'the caller is neither its owner nor an admin',
  })}
  deleteAlbum(id: ID!): ID!
}
`

/** An Album by id, in the operation's batch; NOT_FOUND at its field when there is none. */
export const albumReference =
  (albums: AlbumsService): Reference<Album> =>
  (context, id) =>
    context.loaders.one(
      'Album',
      id,
      (caller, ids) => albums.getMany(caller, ids),
      () => notFound('Album'),
    )

export function albumsResolvers(albums: AlbumsService, userById: Reference<User>) {
  const aggregate = aggregateResolvers('Album', AlbumsCollection, (caller, request) => albums.aggregate(caller, undefined, request))
  return {
    ...aggregate.typeResolvers,
    Query: {
      albumsAggregate: aggregate.field,
      album: (_: unknown, args: { id: string }, context: GraphQLContext) => albums.get(context.caller, undefined, args.id),
      albums: async (_: unknown, args: CollectionArgs, context: GraphQLContext) =>
        (await albums.listAll(context.caller, toCollectionQuery(AlbumsCollection, args, { withTotal: false }))).items,
      albumsPage: async (_: unknown, args: CollectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        toPageResult(await albums.listAll(context.caller, toCollectionQuery(AlbumsCollection, args, { withTotal: selectsPageTotal(info) }))),
      albumsConnection: async (_: unknown, args: CollectionConnectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) => {
        const plan = toConnectionPlan(AlbumsCollection, args, { withTotal: selectsTotalCount(info) })
        return toConnection(plan, await albums.listAll(context.caller, plan.query))
      },
    },
    User: {
      albums: (user: User, args: WindowArgs, context: GraphQLContext) =>
        context.loaders.list('User.albums', args, user.id, (caller, ids, window) => albums.listOfUsers(caller, ids, window)),
      albumsConnection: (user: User, args: ConnectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        nestedConnection(
          {
            spec: AlbumsCollection,
            field: 'User.albumsConnection',
            parentId: user.id,
            scope: `user:${user.id}`,
            readWindow: (caller, ids, window) => albums.listOfUsers(caller, ids, window),
            readCounts: (caller, ids, atMost) => albums.countOfUsers(caller, ids, atMost),
            readPage: (caller, query) => albums.list(caller, user.id, query),
          },
          args,
          context,
          info,
        ),
    },
    Album: {
      user: (album: Album, _args: unknown, context: GraphQLContext, info: GraphQLResolveInfo) => userById(context, album.userId, info),
    },
    Mutation: {
      createAlbums: bulkMutation({ item: CreateAlbumBody }, (items, _args, context) => {
        const { userId } = requireSignedIn(context.caller)
        return albums.createMany(
          context.caller,
          items.map((input) => ({ userId, input })),
        )
      }),
      createAlbum: mutation({ input: CreateAlbumBody }, (input, _args, context) =>
        albums.create(context.caller, requireSignedIn(context.caller).userId, input),
      ),
      updateAlbum: mutation({ input: UpdateAlbumBody }, (input, args: { id: string }, context) => albums.update(context.caller, undefined, args.id, input)),
      deleteAlbum: mutationWithoutInput(async (args: { id: string }, context) => {
        await albums.remove(context.caller, undefined, args.id)
        return String(parseId(args.id))
      }),
    },
  }
}
