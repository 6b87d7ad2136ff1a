// REST adapter for the comments on a post: schema, access, one service call; the GET answers
// represented as `select` and `include` ask (comments.embeds.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { CollectionEnvelope, readCollectionQuery, representedCollectionBody } from '../http/collection-reply.js'
import { ifMatchOf } from '../http/caching.js'
import { readRepresentation, representationShapeOf } from '../http/representation.js'
import { representedResourceBody, ResourceEnvelope, resourceBody } from '../http/resource-reply.js'
import { IdParam } from '../core/schema-types.js'
import { Comment, CommentsCollection, CreateCommentBody, UpdateCommentBody } from './comments.schemas.js'
import { commentRequestExamples, commentsOpenApi } from './comments.openapi.js'
import type { RoutesOptions } from '../feature.js'
import type { PostsService } from '../posts/posts.public.js'
import type { UsersService } from '../users/users.public.js'
import { commentEmbeds, representedComment } from './comments.embeds.js'
import type { CommentsService } from './comments.service.js'

const PostParams = Type.Object({ userId: IdParam, postId: IdParam })
const CommentParams = Type.Object({ userId: IdParam, postId: IdParam, commentId: IdParam })
const OneComment = ResourceEnvelope(Comment)

/** `users` and `posts` are read for what a comment embeds, with what other features offer (`embedded`). */
export const commentsRoutes: FastifyPluginAsyncTypebox<{ comments: CommentsService; users: UsersService; posts: PostsService } & RoutesOptions> = async (
  app,
  { comments, users, posts, embedded, chargeRateLimit },
) => {
  const embeds = commentEmbeds({ users, posts }, embedded)
  const RepresentedComment = representedComment(embedded)
  const representation = representationShapeOf(embeds)

  app.get(
    '/users/:userId/posts/:postId/comments',
    {
      config: {
        access: 'public',
        reads: ['comments', 'posts', 'users'],
        collection: CommentsCollection,
        representation,
        openapi: { resource: commentsOpenApi },
      },
      schema: {
        operationId: 'listComments',
        summary: "List a post's comments",
        description: 'Anyone who may see the post.',
        tags: [commentsOpenApi.tag.name],
        params: PostParams,
        response: { 200: CollectionEnvelope(RepresentedComment) },
      },
    },
    async (request, reply) => {
      const { params } = request
      const query = readCollectionQuery(request, CommentsCollection, `user:${params.userId}/post:${params.postId}`)
      const shown = readRepresentation(request, embeds)
      return representedCollectionBody(request, reply, await comments.list(request.caller, params, query), shown, chargeRateLimit)
    },
  )

  app.get(
    '/users/:userId/posts/:postId/comments/:commentId',
    // The author's name is in the answer, but not in the comment's updatedAt.
    {
      config: { access: 'public', reads: ['comments', 'posts', 'users'], lastModifiedCoversAll: false, representation, openapi: { resource: commentsOpenApi } },
      schema: {
        operationId: 'getComment',
        summary: 'Get a comment',
        description: 'Anyone who may see the post.',
        tags: [commentsOpenApi.tag.name],
        params: CommentParams,
        response: { 200: ResourceEnvelope(RepresentedComment) },
      },
    },
    async (request, reply) => {
      const shown = readRepresentation(request, embeds)
      return representedResourceBody(request, reply, shown, await comments.get(request.caller, request.params, request.params.commentId), chargeRateLimit)
    },
  )

  app.post(
    '/users/:userId/posts/:postId/comments',
    {
      config: { access: 'signed-in', openapi: { resource: commentsOpenApi, requestExample: commentRequestExamples.create } },
      schema: {
        operationId: 'createComment',
        summary: 'Comment on a post',
        description: 'Signed in; the author is the caller.',
        tags: [commentsOpenApi.tag.name],
        params: PostParams,
        body: CreateCommentBody,
        response: { 201: OneComment },
      },
    },
    async (request, reply) => {
      const { params } = request
      const comment = await comments.create(request.caller, params, request.body)
      return reply
        .code(201)
        .header('location', `${app.prefix}/users/${params.userId}/posts/${comment.postId}/comments/${comment.id}`)
        .send(resourceBody(comment))
    },
  )

  app.patch(
    '/users/:userId/posts/:postId/comments/:commentId',
    {
      config: { access: 'signed-in', openapi: { resource: commentsOpenApi, requestExample: commentRequestExamples.update } },
      schema: {
        operationId: 'updateComment',
        summary: 'Change a comment',
        description: 'The author, or an admin.',
        tags: [commentsOpenApi.tag.name],
        params: CommentParams,
        body: UpdateCommentBody,
        response: { 200: OneComment },
      },
    },
    async (request, reply) =>
      resourceBody(
        await comments.update(request.caller, request.params, request.params.commentId, request.body, {
          ifMatch: ifMatchOf(request, reply, OneComment),
        }),
      ),
  )

  app.delete(
    '/users/:userId/posts/:postId/comments/:commentId',
    {
      config: { access: 'signed-in', openapi: { resource: commentsOpenApi } },
      schema: {
        operationId: 'deleteComment',
        summary: 'Delete a comment',
        description: "The author, the post's owner, or an admin.",
        tags: [commentsOpenApi.tag.name],
        params: CommentParams,
      },
    },
    async (request, reply) => {
      await comments.remove(request.caller, request.params, request.params.commentId, {
        ifMatch: ifMatchOf(request, reply, OneComment),
      })
      return reply.code(204).send()
    },
  )
}
