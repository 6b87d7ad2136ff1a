// REST adapter for a user's posts: schema, access, one service call.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { CollectionEnvelope, collectionBody, readCollectionQuery } from '../http/collection-reply.js'
import { ifMatchOf } from '../http/caching.js'
import { SingleEnvelope, single } from '../http/envelope.js'
import { IdParam } from '../core/schema-types.js'
import { CreatePostBody, Post, PostsCollection, ReplacePostBody, UpdatePostBody } from './posts.schemas.js'
import { postRequestExamples, postsOpenApi } from './posts.openapi.js'
import type { PostsService } from './posts.service.js'

const UserParams = Type.Object({ userId: IdParam })
const PostParams = Type.Object({ userId: IdParam, postId: IdParam })
const OnePost = SingleEnvelope(Post)

export const postsRoutes: FastifyPluginAsyncTypebox<{ posts: PostsService }> = async (app, { posts }) => {
  app.get(
    '/users/:userId/posts',
    {
      config: { access: 'public', collection: PostsCollection, openapi: { resource: postsOpenApi } },
      schema: {
        operationId: 'listPosts',
        summary: "List a user's posts",
        description: 'Anyone; drafts only for their owner and admins.',
        tags: [postsOpenApi.tag.name],
        params: UserParams,
        response: { 200: CollectionEnvelope(Post) },
      },
    },
    async (request, reply) => {
      const { userId } = request.params
      const query = readCollectionQuery(request, PostsCollection, `user:${userId}`)
      return collectionBody(request, reply, await posts.list(request.caller, userId, query))
    },
  )

  app.get(
    '/users/:userId/posts/:postId',
    {
      config: { access: 'public', openapi: { resource: postsOpenApi } },
      schema: {
        operationId: 'getPost',
        summary: 'Get a post',
        description: 'Anyone; a draft only for its owner and admins (404 for everyone else).',
        tags: [postsOpenApi.tag.name],
        params: PostParams,
        response: { 200: OnePost },
      },
    },
    async (request) => single(await posts.get(request.caller, request.params.userId, request.params.postId)),
  )

  app.post(
    '/users/:userId/posts',
    {
      config: { access: 'signed-in', openapi: { resource: postsOpenApi, requestExample: postRequestExamples.create } },
      schema: {
        operationId: 'createPost',
        summary: 'Create a post',
        description: 'The owner, or an admin. `status` defaults to `published`.',
        tags: [postsOpenApi.tag.name],
        params: UserParams,
        body: CreatePostBody,
        response: { 201: OnePost },
      },
    },
    async (request, reply) => {
      const post = await posts.create(request.caller, request.params.userId, request.body)
      return reply.code(201).header('location', `${app.prefix}/users/${post.userId}/posts/${post.id}`).send(single(post))
    },
  )

  app.put(
    '/users/:userId/posts/:postId',
    {
      config: { access: 'signed-in', openapi: { resource: postsOpenApi, requestExample: postRequestExamples.replace } },
      schema: {
        operationId: 'replacePost',
        summary: 'Replace a post',
        description: 'The owner, or an admin. `title` and `content` are required; `status` left out is `published`.',
        tags: [postsOpenApi.tag.name],
        params: PostParams,
        body: ReplacePostBody,
        response: { 200: OnePost },
      },
    },
    async (request, reply) =>
      single(
        await posts.replace(request.caller, request.params.userId, request.params.postId, request.body, {
          ifMatch: ifMatchOf(request, reply, OnePost),
        }),
      ),
  )

  app.patch(
    '/users/:userId/posts/:postId',
    {
      config: { access: 'signed-in', openapi: { resource: postsOpenApi, requestExample: postRequestExamples.update } },
      schema: {
        operationId: 'updatePost',
        summary: 'Change part of a post',
        description: 'The owner, or an admin. Only the fields sent change (a JSON merge patch).',
        tags: [postsOpenApi.tag.name],
        params: PostParams,
        body: UpdatePostBody,
        response: { 200: OnePost },
      },
    },
    async (request, reply) =>
      single(
        await posts.update(request.caller, request.params.userId, request.params.postId, request.body, {
          ifMatch: ifMatchOf(request, reply, OnePost),
        }),
      ),
  )

  app.delete(
    '/users/:userId/posts/:postId',
    {
      config: { access: 'signed-in', openapi: { resource: postsOpenApi } },
      schema: {
        operationId: 'deletePost',
        summary: 'Delete a post',
        description: 'The owner, or an admin. Its comments go too.',
        tags: [postsOpenApi.tag.name],
        params: PostParams,
      },
    },
    async (request, reply) => {
      await posts.remove(request.caller, request.params.userId, request.params.postId, {
        ifMatch: ifMatchOf(request, reply, OnePost),
      })
      return reply.code(204).send()
    },
  )
}
