// REST adapter for the comments on posts: schema, access, one service call; the GET answers
// represented as `select` and `include` ask (comments.embeds.ts). Each route is served under its
// post (`/users/{userId}/posts/{postId}/comments/{commentId}`) and at the top level
// (`/comments/{commentId}`, JSONPlaceholder's address, where the post is a filter, `?postId=`, or on a
// create the body's `postId`); a post's comments are listed at `/posts/{postId}/comments` too.
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
import { Comment, CommentsCollection, CreateCommentBody, type CreateCommentInput, UpdateCommentBody } from './comments.schemas.js'
import { commentRequestExamples, commentsOpenApi } from './comments.openapi.js'
import type { RoutesOptions } from '../feature.js'
import type { PostsService } from '../posts/posts.public.js'
import type { UsersService } from '../users/users.public.js'
import { commentEmbeds, representedComment } from './comments.embeds.js'
import type { CommentsService, PostPath } from './comments.service.js'

const OneComment = ResourceEnvelope(Comment)

/** A comment created at the top level names its post. */
const CreateCommentOnPostBody = Type.Object(
  { ...CreateCommentBody.properties, postId: { ...Id, description: 'The post commented on.' } },
  { additionalProperties: false },
)

const UNDER_POST: Place = {
  collection: '/users/:userId/posts/:postId/comments',
  item: '/users/:userId/posts/:postId/comments/:commentId',
  collectionParams: Type.Object({ userId: IdParam, postId: IdParam }),
  itemParams: Type.Object({ userId: IdParam, postId: IdParam, commentId: IdParam }),
  operations: { list: 'listComments', get: 'getComment', create: 'createComment', update: 'updateComment', remove: 'deleteComment' },
  listed: "List a post's comments",
}

const TOP_LEVEL: Place = {
  collection: '/comments',
  item: '/comments/:commentId',
  itemParams: Type.Object({ commentId: IdParam }),
  operations: { list: 'listAllComments', get: 'getCommentById', create: 'createCommentOnPost', update: 'updateCommentById', remove: 'deleteCommentById' },
  listed: 'List the comments on every post you may see (`postId` filters by post, `authorId` by author)',
}

/** The post a place's path names, if it names one. */
const postPathOf = (params: unknown): PostPath | undefined => {
  const postId = parentOf(params, 'postId')
  return postId === undefined ? undefined : { userId: parentOf(params, 'userId'), postId }
}

/** `users` and `posts` are read for what a comment embeds, with what other features offer (`embedded`). */
export const commentsRoutes: FastifyPluginAsyncTypebox<{ comments: CommentsService; users: UsersService; posts: PostsService } & RoutesOptions> = async (
  app,
  { comments, users, posts, embedded, chargeRateLimit },
) => {
  const embeds = commentEmbeds({ users, posts }, embedded)
  const RepresentedComment = representedComment(embedded)
  const representation = representationShapeOf(embeds)

  const listOptions = (operationId: string, summary: string, params: Place['collectionParams']) => ({
    config: {
      access: 'public' as const,
      reads: ['comments', 'posts', 'users'],
      collection: CommentsCollection,
      representation,
      openapi: { resource: commentsOpenApi },
    },
    schema: {
      operationId,
      summary,
      description: 'Anyone who may see the post.',
      tags: [commentsOpenApi.tag.name],
      ...(params === undefined ? {} : { params }),
      response: { 200: CollectionEnvelope(RepresentedComment) },
    },
  })

  /** A page of a post's comments, or (no post in the path) of every comment the caller may see. */
  const list = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = postPathOf(request.params)
    const scope = path === undefined ? '' : `${path.userId === undefined ? '' : `user:${path.userId}/`}post:${path.postId}`
    const aggregate = (query: AggregateQuery, pay: AggregatePayment) => comments.aggregate(request.caller, path, query, pay)
    const read = (query: CollectionQuery) => (path === undefined ? comments.listAll(request.caller, query) : comments.list(request.caller, path, query))
    return answerCollection(request, reply, { spec: CommentsCollection, scope, embeds, read, aggregate }, chargeRateLimit)
  }

  // JSONPlaceholder's shortcut: a post's comments without its author's id.
  app.get('/posts/:postId/comments', listOptions('listCommentsOfPost', "List a post's comments", Type.Object({ postId: IdParam })), list)

  for (const place of [UNDER_POST, TOP_LEVEL]) {
    const topLevel = place === TOP_LEVEL

    app.get(place.collection, listOptions(place.operations.list, place.listed, place.collectionParams), list)

    app.get(
      place.item,
      // The author's name is in the answer, but not in the comment's updatedAt.
      {
        config: {
          access: 'public',
          reads: ['comments', 'posts', 'users'],
          lastModifiedCoversAll: false,
          representation,
          openapi: { resource: commentsOpenApi },
        },
        schema: {
          operationId: place.operations.get,
          summary: 'Get a comment',
          description: 'Anyone who may see the post.',
          tags: [commentsOpenApi.tag.name],
          params: place.itemParams,
          response: { 200: ResourceEnvelope(RepresentedComment) },
        },
      },
      async (request, reply) => {
        const shown = readRepresentation(request, embeds)
        const comment = await comments.get(request.caller, postPathOf(request.params), itemIdOf(request.params, 'commentId'))
        return representedResourceBody(request, reply, shown, comment, chargeRateLimit)
      },
    )

    app.post(
      place.collection,
      {
        config: {
          access: 'signed-in',
          openapi: {
            ...(topLevel ? { body: 'CommentCreateOnPost' } : {}),
            resource: commentsOpenApi,
            requestExample: topLevel ? { ...commentRequestExamples.create, postId: commentsOpenApi.example.postId } : commentRequestExamples.create,
          },
        },
        schema: {
          operationId: place.operations.create,
          summary: 'Comment on a post',
          description:
            (topLevel ? 'Signed in; the author is the caller. A `postId` no post you may see has is a 422.' : 'Signed in; the author is the caller.') +
            bulkWriteNote('comments') +
            ' Each comment is told to `commentAdded` subscribers once the write has committed.',
          tags: [commentsOpenApi.tag.name],
          ...(place.collectionParams === undefined ? {} : { params: place.collectionParams }),
          body: OneOrMany(topLevel ? CreateCommentOnPostBody : CreateCommentBody),
          response: { 201: Created(Comment) },
        },
      },
      async (request, reply) => {
        const path = postPathOf(request.params)
        if (isBulk(request.body)) {
          const items = request.body as readonly (CreateCommentInput & { postId?: number })[]
          await chargeItems(chargeRateLimit, request, reply, items.length)
          const created = comments.createMany(
            request.caller,
            items.map(({ postId: named, ...input }) => ({ path: path ?? { postId: named ?? 0 }, input })),
          )
          return reply.code(201).send(bulkBody(path === undefined ? await parentNamedInBody('postId', 'post', created) : await created))
        }
        const { postId: named, ...input } = request.body as CreateCommentInput & { postId?: number }
        const comment =
          path === undefined
            ? await parentNamedInBody('postId', 'post', comments.create(request.caller, { postId: named ?? 0 }, input))
            : await comments.create(request.caller, path, input)
        const location =
          path?.userId === undefined
            ? `${app.prefix}/comments/${comment.id}`
            : `${app.prefix}/users/${path.userId}/posts/${comment.postId}/comments/${comment.id}`
        return reply.code(201).header('location', location).send(resourceBody(comment))
      },
    )

    app.patch(
      place.item,
      {
        config: { access: 'signed-in', openapi: { resource: commentsOpenApi, requestExample: commentRequestExamples.update } },
        schema: {
          operationId: place.operations.update,
          summary: 'Change a comment',
          description: 'The author, or an admin.',
          tags: [commentsOpenApi.tag.name],
          params: place.itemParams,
          body: UpdateCommentBody,
          response: { 200: OneComment },
        },
      },
      async (request, reply) =>
        resourceBody(
          await comments.update(request.caller, postPathOf(request.params), itemIdOf(request.params, 'commentId'), request.body, {
            ifMatch: ifMatchOf(request, reply, OneComment),
          }),
        ),
    )

    app.delete(
      place.item,
      {
        config: { access: 'signed-in', openapi: { resource: commentsOpenApi } },
        schema: {
          operationId: place.operations.remove,
          summary: 'Delete a comment',
          description: "The author, the post's owner, or an admin.",
          tags: [commentsOpenApi.tag.name],
          params: place.itemParams,
        },
      },
      async (request, reply) => {
        await comments.remove(request.caller, postPathOf(request.params), itemIdOf(request.params, 'commentId'), {
          ifMatch: ifMatchOf(request, reply, OneComment),
        })
        return reply.code(204).send()
      },
    )
  }
}
