// REST adapter for a user's posts: schema, access, one service call; the GET answers represented as
// `select` and `include` ask (posts.embeds.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { CollectionEnvelope, readCollectionQuery, representedCollectionBody } from '../http/collection-reply.js'
import { ifMatchOf } from '../http/caching.js'
import { readRepresentation, representationShapeOf } from '../http/representation.js'
import { representedResourceBody, ResourceEnvelope, resourceBody } from '../http/resource-reply.js'
import { IdParam } from '../core/schema-types.js'
import { CreatePostBody, Post, PostsCollection, ReplacePostBody, UpdatePostBody } from './posts.schemas.js'
import { postRequestExamples, postsOpenApi } from './posts.openapi.js'
import type { RoutesOptions } from '../feature.js'
import type { UsersService } from '../users/users.public.js'
import { postEmbeds, representedPost } from './posts.embeds.js'
import { type PostsService, postFields } from './posts.service.js'

const UserParams = Type.Object({ userId: IdParam })
const PostParams = Type.Object({ userId: IdParam, postId: IdParam })
const OnePost = ResourceEnvelope(Post)

/** With `select`, only the selected fields' columns are read (the representation shows no others). */
const columnsOf = (shown: { readonly select: ReadonlySet<string> | undefined } | undefined) =>
  shown?.select === undefined ? undefined : postFields.columnsFor(shown.select)

/** `users` is read for a post's author; `embedded`: what other features offer a post's answers (its comments). */
export const postsRoutes: FastifyPluginAsyncTypebox<{ posts: PostsService; users: UsersService } & RoutesOptions> = async (
  app,
  { posts, users, embedded, chargeRateLimit },
) => {
  const embeds = postEmbeds(users, embedded)
  const RepresentedPost = representedPost(embedded)
  const representation = representationShapeOf(embeds)

  app.get(
    '/users/:userId/posts',
    {
      config: { access: 'public', reads: ['posts'], collection: PostsCollection, representation, openapi: { resource: postsOpenApi } },
      schema: {
        operationId: 'listPosts',
        summary: "List a user's posts",
        description: 'Anyone; drafts only for their owner and admins.',
        tags: [postsOpenApi.tag.name],
        params: UserParams,
        response: { 200: CollectionEnvelope(RepresentedPost) },
      },
    },
    async (request, reply) => {
      const { userId } = request.params
      const query = readCollectionQuery(request, PostsCollection, `user:${userId}`)
      const shown = readRepresentation(request, embeds)
      return representedCollectionBody(request, reply, await posts.list(request.caller, userId, query, columnsOf(shown)), shown, chargeRateLimit)
    },
  )

  app.get(
    '/users/:userId/posts/:postId',
    {
      config: { access: 'public', reads: ['posts'], representation, openapi: { resource: postsOpenApi } },
      schema: {
        operationId: 'getPost',
        summary: 'Get a post',
        description: 'Anyone; a draft only for its owner and admins (404 for everyone else).',
        tags: [postsOpenApi.tag.name],
        params: PostParams,
        response: { 200: ResourceEnvelope(RepresentedPost) },
      },
    },
    async (request, reply) => {
      const shown = readRepresentation(request, embeds)
      return representedResourceBody(
        request,
        reply,
        shown,
        await posts.get(request.caller, request.params.userId, request.params.postId, columnsOf(shown)),
        chargeRateLimit,
      )
    },
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
      return reply.code(201).header('location', `${app.prefix}/users/${post.userId}/posts/${post.id}`).send(resourceBody(post))
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
      resourceBody(
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
      resourceBody(
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
