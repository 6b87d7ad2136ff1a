// GraphQL adapter for comments: the Comment type, one comment and every comment (a list, a page and
// a connection, as users have them), the comments of a post and of a user, and the comment
// mutations (the author is always the caller), each one service call.
import { AGGREGATE_REFUSAL, aggregateArgsSdl, aggregateResolvers, aggregateTypesSdl } from '../graphql/aggregates.js'
import type { GraphQLResolveInfo } from 'graphql'
import { AppError } from '../errors.js'
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
import type { Post } from '../posts/posts.public.js'
import type { User } from '../users/users.public.js'
import { bulkMutation, mutation, mutationWithoutInput } from '../graphql/validated.js'
import { fieldDescription } from '../graphql/error-codes.js'
import { type Comment, CommentsCollection, CreateCommentBody, UpdateCommentBody } from './comments.schemas.js'
import type { CommentsService } from './comments.service.js'
import type { AddedComment } from './comments.stream.js'

export const commentsTypeDefs = /* GraphQL */ `
"A comment on a post, by a signed-in user; or a guest comment, imported, by someone who is no user (author null, email set)."
type Comment {
  id: ID!
  content: String!
  createdAt: DateTime!
  updatedAt: DateTime!
  "The user who wrote it; null for a guest comment."
  author: User
  "A guest comment's commenter's e-mail; null for a user's comment."
  email: String
  post: Post!
}

${connectionTypesSdl('Comment')}

${filterInputSdl('CommentFilter', CommentsCollection)}

${whereInputSdl('CommentWhere', CommentsCollection)}

"A page of comments and where it sits."
type CommentPage {
  items: [Comment!]!
  pageInfo: PageInfo!
}

"A comment by the caller on a post they may see."
input AddCommentInput {
  postId: ID!
  content: String!
}

input UpdateCommentInput {
  content: String!
}

extend type Post {
  ${fieldDescription('Its comments in id order.', { BAD_REQUEST: 'limit below 1, or a page past the offset window' })}
  comments${WINDOW_ARGS_SDL}: [Comment!]!
  ${fieldDescription("The same comments as a cursor connection, in id order; the first page (and totalCount) of every post is read in one batch; after, last and before page one post's comments at a time.", { BAD_REQUEST: 'first, last, after or before is not valid, or a pair reads both ways, one detail each' })}
  commentsConnection${NESTED_CONNECTION_ARGS_SDL}: CommentConnection!
}

extend type User {
  ${fieldDescription('Their comments in id order, on posts the caller may see.', { BAD_REQUEST: 'limit below 1, or a page past the offset window' })}
  comments${WINDOW_ARGS_SDL}: [Comment!]!
}

${aggregateTypesSdl('Comment', CommentsCollection)}

extend type Query {
  ${fieldDescription('The comment with this id; null, with a NOT_FOUND error, when there is none or it is on a draft the caller may not see.', {
    NOT_FOUND: 'no comment with this id, or on a draft the caller may not see',
  })}
  comment(id: ID!): Comment
  ${fieldDescription(`Every comment the caller may see, on every post (the first ${DEFAULT_PAGE_LIMIT} in id order without arguments): those on published posts, and on drafts when the caller is the post's author or an admin; the REST collection query language as arguments (where: {postId: {eq: "3"}} for one post's, authorId for one author's).`, { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  comments${collectionArgsSdl('CommentFilter', 'CommentWhere')}: [Comment!]!
  ${fieldDescription("Aggregates over what comments would list, with the same arguments (no page): count, and min, max, sum and avg of the fields they fit, of every row and of each group of groupBy; as REST's select=count().", { BAD_REQUEST: AGGREGATE_REFUSAL })}
  commentsAggregate${aggregateArgsSdl('Comment', 'CommentFilter', 'CommentWhere')}: CommentAggregate!
  ${fieldDescription('The same page as comments, with its pageInfo (nextCursor to go on; total only when selected).', { BAD_REQUEST: COLLECTION_ARGS_REFUSAL })}
  commentsPage${collectionArgsSdl('CommentFilter', 'CommentWhere')}: CommentPage!
  ${fieldDescription("The same comments as a Relay cursor connection (first/after, last/before), on the same keyset as commentsPage's cursor; totalCount only when selected.", { BAD_REQUEST: CONNECTION_ARGS_REFUSAL })}
  commentsConnection${connectionArgsSdl('CommentFilter', 'CommentWhere')}: CommentConnection!
}

extend type Subscription {
  ${fieldDescription(
    'Each comment created from now on (over REST or GraphQL) on the post postId, or, without postId, on any post the caller may see. With after (a comment id: the last one received), the comments created after it come first, in id order, then the live ones, none missed and none twice; an event stream resumed with Last-Event-ID does the same. Over WebSocket at /graphql or Server-Sent Events at /graphql/stream.',
    {
      BAD_REQUEST: 'sent to POST or GET /graphql instead of a stream; after is not an id; more than 1,000 comments were created after it (read the list first)',
      NOT_FOUND: 'no post postId, or a draft the caller may not see',
      RATE_LIMITED: "in a result: the caller's deliveries are past their allowance, events are skipped until extensions.retryAfter",
      SERVICE_UNAVAILABLE: "in a result: live events were interrupted, or an event's deliveries reached their ceiling; the subscription goes on",
    },
  )}
  commentAdded(postId: ID, after: ID): Comment!
}

extend type Mutation {
  ${fieldDescription('A comment by the caller on a post they may see.', {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the content breaks the rules of a comment, one detail',
    NOT_FOUND: 'no post postId, or a draft the caller may not see',
  })}
  addComment(input: AddCommentInput!): Comment!
  ${fieldDescription(
    "Comments by the caller, 1 to 1000, each on a post they may see, in one transaction: all or none, in the order given; commentAdded tells each once committed. One point per comment; an item's errors named by its index.",
    {
      UNAUTHENTICATED: 'anonymous caller',
      BAD_REQUEST: 'an empty list',
      PAYLOAD_TOO_LARGE: 'more than 1000 items',
      VALIDATION_ERROR: 'an item breaks the rules of a comment, one detail per item',
      NOT_FOUND: 'no post postId, or a draft the caller may not see (the first item naming it in details)',
    },
  )}
  addComments(input: [AddCommentInput!]!): [Comment!]!
  ${fieldDescription('The author or an admin edits a comment; only an admin edits a guest comment.', {
    UNAUTHENTICATED: 'anonymous caller',
    VALIDATION_ERROR: 'the content breaks the rules of a comment, one detail',
    NOT_FOUND: 'no comment with this id, or on a draft the caller may not see',
    FORBIDDEN: 'the caller is neither its author nor an admin',
  })}
  updateComment(id: ID!, input: UpdateCommentInput!): Comment!
  ${fieldDescription("The author, the post's author or an admin deletes a comment; answers the id.", {
    UNAUTHENTICATED: 'anonymous caller',
    NOT_FOUND: 'no comment with this id, or on a draft the caller may not see',
    FORBIDDEN: "the caller is neither its author, the post's author nor an admin",
  })}
  deleteComment(id: ID!): ID!
}
`

/** A Comment as resolvers see it: as the service returns it, or as an event carries it (with its author and post). */
type CommentSource = Comment & { authorUser?: User; postObject?: Post }

export function commentsResolvers(comments: CommentsService, userById: Reference<User>, postById: Reference<Post>) {
  const aggregate = aggregateResolvers('Comment', CommentsCollection, (caller, request) => comments.aggregate(caller, undefined, request))
  return {
    ...aggregate.typeResolvers,
    Query: {
      commentsAggregate: aggregate.field,
      comment: (_: unknown, args: { id: string }, context: GraphQLContext) => comments.get(context.caller, undefined, args.id),
      comments: async (_: unknown, args: CollectionArgs, context: GraphQLContext) =>
        (await comments.listAll(context.caller, toCollectionQuery(CommentsCollection, args, { withTotal: false }))).items,
      commentsPage: async (_: unknown, args: CollectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        toPageResult(await comments.listAll(context.caller, toCollectionQuery(CommentsCollection, args, { withTotal: selectsPageTotal(info) }))),
      commentsConnection: async (_: unknown, args: CollectionConnectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) => {
        const plan = toConnectionPlan(CommentsCollection, args, { withTotal: selectsTotalCount(info) })
        return toConnection(plan, await comments.listAll(context.caller, plan.query))
      },
    },
    Post: {
      comments: (post: Post, args: WindowArgs, context: GraphQLContext) =>
        context.loaders.list('Post.comments', args, post.id, (caller, ids, window) => comments.listOfPosts(caller, ids, window)),
      commentsConnection: (post: Post, args: ConnectionArgs, context: GraphQLContext, info: GraphQLResolveInfo) =>
        nestedConnection(
          {
            spec: CommentsCollection,
            field: 'Post.commentsConnection',
            parentId: post.id,
            scope: `user:${post.userId}/post:${post.id}`,
            readWindow: (caller, ids, window) => comments.listOfPosts(caller, ids, window),
            readCounts: (caller, ids, atMost) => comments.countOfPosts(caller, ids, atMost),
            readPage: (caller, query) => comments.list(caller, { userId: post.userId, postId: post.id }, query),
          },
          args,
          context,
          info,
        ),
    },
    User: {
      comments: (user: User, args: WindowArgs, context: GraphQLContext) =>
        context.loaders.list('User.comments', args, user.id, (caller, ids, window) => comments.listOfAuthors(caller, ids, window)),
    },
    Comment: {
      // A comment delivered by a subscription carries its author and post, read when it was made;
      // a guest comment has no author.
      author: (comment: CommentSource, _args: unknown, context: GraphQLContext, info: GraphQLResolveInfo) =>
        comment.authorUser ?? (comment.authorId === null ? null : userById(context, comment.authorId, info)),
      post: (comment: CommentSource, _args: unknown, context: GraphQLContext, info: GraphQLResolveInfo) =>
        comment.postObject ?? postById(context, comment.postId, info),
    },
    Mutation: {
      addComments: bulkMutation(
        { item: CreateCommentBody, from: (args: { input: { postId: string; content: string }[] }) => args.input.map(({ content }) => ({ content })) },
        (items, args, context) =>
          comments.createMany(
            context.caller,
            items.map((input, i) => ({ path: { postId: args.input[i]!.postId }, input })),
          ),
      ),
      // The post is in the input here, in the path over REST: the body schema checks the rest.
      addComment: mutation(
        { input: CreateCommentBody, from: (args: { input: { postId: string; content: string } }) => ({ content: args.input.content }) },
        (input, args, context) => comments.create(context.caller, { postId: args.input.postId }, input),
      ),
      updateComment: mutation({ input: UpdateCommentBody }, (input, args: { id: string }, context) =>
        comments.update(context.caller, undefined, args.id, input),
      ),
      deleteComment: mutationWithoutInput(async (args: { id: string }, context) => {
        await comments.remove(context.caller, undefined, args.id)
        return String(parseId(args.id))
      }),
    },
  }
}

/** Subscription fields: a source stream of events (`subscribe`), and each event as the field's value (`resolve`). */
export function commentsSubscriptions(comments: CommentsService) {
  return {
    commentAdded: {
      subscribe: (_: unknown, args: { postId?: string | null; after?: string | null }, context: GraphQLContext) => {
        if (context.stream === undefined)
          throw new AppError('BAD_REQUEST', 'Subscriptions are served over WebSocket at /graphql or Server-Sent Events at /graphql/stream')
        return comments.streamAdded(() => context.caller, args.postId ?? undefined, context.stream, args.after ?? undefined)
      },
      // The comment's id is the event's: a client resumes after the last one it received.
      resolve: (event: AddedComment, context: GraphQLContext): CommentSource => {
        context.stream?.identify?.(String(event.comment.id))
        // A replayed comment has no post and author with it: its fields read them as a query's do.
        return event.post === undefined ? event.comment : { ...event.comment, authorUser: event.author, postObject: event.post }
      },
    },
  }
}
