// GraphQL adapter for posts: the Post type, every post (a list, a page and a connection, as users
// have them), a user's posts (a list and a connection), and the post mutations (the author is
// always the caller), each one service call; nested lists and references read in batches.
import { AGGREGATE_REFUSAL, aggregateArgsSdl, aggregateResolvers, aggregateTypesSdl } from '../graphql/aggregates.js'
import type { GraphQLResolveInfo } from 'graphql'
import { requireSignedIn } from '../core/caller.js'
import {
  COLLECTION_ARGS_REFUSAL,
  collectionArgsSdl,
  type CollectionArgs,
  enumFilterSdl,
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
import { notFound } from '../errors.js'
import { parseId } from '../core/ids.js'
import type { User } from '../users/users.public.js'
import { bulkMutation, mutation, mutationWithoutInput } from '../graphql/validated.js'
import { fieldDescription } from '../graphql/error-codes.js'
import { CreatePostBody, type Post, PostsCollection, UpdatePostBody } from './posts.schemas.js'
import { type PostsService, postFields } from './posts.service.js'
import type { Columns } from '../db/projection.js'
import type { PostRow } from './posts.table.js'
import { selectionOf, type Selector } from '../graphql/selection.js'

export const postsTypeDefs = /* GraphQL */ `
"A post by a user. Drafts are seen only by their author and admins."
type Post {
  id: ID!
  title: String!
  content: String!
  status: PostStatus!
  "When the post was published; null for a draft."
  publishedAt: DateTime
  createdAt: DateTime!
  updatedAt: DateTime!
  author: User!
}

${connectionTypesSdl('Post')}

enum PostStatus {
  draft
  published
}

${enumFilterSdl('PostStatus')}

${filterInputSdl('PostFilter', PostsCollection, { status: 'PostStatus' })}

${whereInputSdl('PostWhere', PostsCollection, { status: 'PostStatus' })}

"A page of posts and where it sits."
type PostPage {
  items: [Post!]!
  pageInfo: PageInfo!
}

"A new post by the caller; status defaults to published."
input CreatePostInput {
  title: String!
  content: String!
  status: PostStatus
}

"Only the fields given change."
input UpdatePostInput {
  title: String
  content: String
  status: PostStatus
}

extend type User {
  ${fieldDescription('Their posts in id order: published ones, and drafts when the caller is the author or an admin.', { BAD_REQUEST: 'limit below 1, or a page past the offset window' })}
  posts${WINDOW_ARGS_SDL}: [Post!]!
  ${fieldDescription("The same posts as a cursor connection, in id order; the first page (and totalCount) of every user is read in one batch; after, last and before page one user's posts at a time.", { BAD_REQUEST: 'first, last, after or before is not valid, or a pair reads both ways, one detail each' })}
  postsConnection${NESTED_CONNECTION_ARGS_SDL}: PostConnection!
}

${aggregateTypesSdl('Post', PostsCollection, { status: 'PostStatus' })}

extend type Query {
  ${fieldDescription('The post with this id; null, with a NOT_FOUND error, when there is none or it is a draft the caller may not see.', {
    NOT_FOUND: 'no post with this id, or a draft the caller may not see',
  })}
  post(id: ID!): Post
  ${fieldDescription(`Every post the caller may see, of every user (the first ${DEFAULT_PAGE_LIMIT} in id order without arguments): the published ones, and drafts when the caller is their author or an admin; the REST collection query language as arguments (where: {userId: {eq: "3"}} for one user's).`, { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  posts${collectionArgsSdl('PostFilter', 'PostWhere')}: [Post!]!
  ${fieldDescription("Aggregates over what posts would list, with the same arguments (no page): count, and min, max, sum and avg of the fields they fit, of every row and of each group of groupBy; as REST's select=count().", { BAD_REQUEST: AGGREGATE_REFUSAL })}
  postsAggregate${aggregateArgsSdl('Post', 'PostFilter', 'PostWhere')}: PostAggregate!
  ${fieldDescription('The same page as posts, with its pageInfo (nextCursor to go on; total only when selected).', { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  postsPage${collectionArgsSdl('PostFilter', 'PostWhere')}: PostPage!
  ${fieldDescription("The same posts as a Relay cursor connection (first/after, last/before), on the same keyset as postsPage's cursor; totalCount only when selected.", { BAD_REQUEST: CONNECTION_ARGS_REFUSAL })}
  postsConnection${connectionArgsSdl('PostFilter', 'PostWhere')}: PostConnection!
}

extend type Mutation {
  ${fieldDescription('A post by the caller.', {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the input breaks the rules of a post, one detail per field',
    NOT_FOUND: 'the caller was deleted while the operation ran',
  })}
  createPost(input: CreatePostInput!): Post!
  ${fieldDescription(
    "Posts by the caller, 1 to 1000, in one transaction: all or none, in the order given. One point per post; an item's errors named by its index ([17].title).",
    {
      UNAUTHENTICATED: 'anonymous caller',
      BAD_REQUEST: 'an empty list',
      PAYLOAD_TOO_LARGE: 'more than 1000 items',
      VALIDATION_ERROR: 'an item breaks the rules of a post, one detail per field of each item',
      NOT_FOUND: 'the caller was deleted while the operation ran',
    },
  )}
  createPosts(input: [CreatePostInput!]!): [Post!]!
  ${fieldDescription('The author or an admin changes a post.', {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the input breaks the rules of a post, one detail per field',
    NOT_FOUND: 'no post with this id, or a draft the caller may not see',
    FORBIDDEN: 'the caller is neither its author nor an admin',
  })}
  updatePost(id: ID!, input: UpdatePostInput!): Post!
  ${fieldDescription('Deletes the post with its comments; answers the id.', {
    UNAUTHENTICATED: 'anonymous caller',
    NOT_FOUND: 'no post with this id, or a draft the caller may not see',
    FORBIDDEN: 'the caller is neither its author nor an admin',
  })}
  deletePost(id: ID!): ID!
}
`

/** The columns of the fields a Post field selects, and of a page's items. */
const selected: Selector<Columns<PostRow>> = { path: [], select: (fields) => postFields.columnsFor(fields) }
const selectedItems: Selector<Columns<PostRow>> = { path: ['items'], select: (fields) => postFields.columnsFor(fields) }

/** A Post by id, in the operation's batch (of the same columns), if the caller may see it; else NOT_FOUND at its field. */
export const postReference =
  (posts: PostsService): Reference<Post> =>
  (context, id, info) => {
    const columns = info === undefined ? postFields.all : selectionOf(info, selected)
    return context.loaders.one(
      `Post:${columns.key}`,
      id,
      (caller, ids) => posts.getMany(caller, ids, columns),
      () => notFound('Post'),
    )
  }

export function postsResolvers(posts: PostsService, userById: Reference<User>) {
  const aggregate = aggregateResolvers('Post', PostsCollection, (caller, request) => posts.aggregate(caller, undefined, request))
  return {
    ...aggregate.typeResolvers,
    Query: {
      postsAggregate: aggregate.field,
      post: (_: unknown, args: { id: string }, context: GraphQLContext, info: GraphQLResolveInfo) =>
        posts.get(context.caller, undefined, args.id, selectionOf(info, selected)),
      posts: async (_: unknown, args: CollectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        (await posts.listAll(context.caller, toCollectionQuery(PostsCollection, args, { withTotal: false }), selectionOf(info, selected))).items,
      postsPage: async (_: unknown, args: CollectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        toPageResult(
          await posts.listAll(
            context.caller,
            toCollectionQuery(PostsCollection, args, { withTotal: selectsPageTotal(info) }),
            selectionOf(info, selectedItems),
          ),
        ),
      postsConnection: async (_: unknown, args: CollectionConnectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) => {
        const plan = toConnectionPlan(PostsCollection, args, { withTotal: selectsTotalCount(info) })
        return toConnection(plan, await posts.listAll(context.caller, plan.query))
      },
    },
    User: {
      posts: (user: User, args: WindowArgs, context: GraphQLContext, info: GraphQLResolveInfo) => {
        const columns = selectionOf(info, selected)
        return context.loaders.list(`User.posts:${columns.key}`, args, user.id, (caller, ids, window) => posts.listOfUsers(caller, ids, window, columns))
      },
      postsConnection: (user: User, args: ConnectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        nestedConnection(
          {
            spec: PostsCollection,
            field: 'User.postsConnection',
            parentId: user.id,
            scope: `user:${user.id}`,
            readWindow: (caller, ids, window) => posts.listOfUsers(caller, ids, window),
            readCounts: (caller, ids, atMost) => posts.countOfUsers(caller, ids, atMost),
            readPage: (caller, query) => posts.list(caller, user.id, query),
          },
          args,
          context,
          info,
        ),
    },
    Post: {
      author: (post: Post, _args: unknown, context: GraphQLContext, info: GraphQLResolveInfo) => userById(context, post.userId, info),
    },
    Mutation: {
      createPost: mutation({ input: CreatePostBody }, (input, _args, context) => posts.create(context.caller, requireSignedIn(context.caller).userId, input)),
      createPosts: bulkMutation({ item: CreatePostBody }, (items, _args, context) => {
        const { userId } = requireSignedIn(context.caller)
        return posts.createMany(
          context.caller,
          items.map((input) => ({ userId, input })),
        )
      }),
      updatePost: mutation({ input: UpdatePostBody }, (input, args: { id: string }, context) => posts.update(context.caller, undefined, args.id, input)),
      deletePost: mutationWithoutInput(async (args: { id: string }, context) => {
        await posts.remove(context.caller, undefined, args.id)
        return String(parseId(args.id))
      }),
    },
  }
}
