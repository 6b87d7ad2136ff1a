// REST adapter for posts: schema, access, one service call; the GET answers represented as `select`
// and `include` ask (posts.embeds.ts). Each route is served in two places: under its author
// (`/users/{userId}/posts/{postId}`) and at the top level (`/posts/{postId}`, JSONPlaceholder's
// address), where the author is a filter (`?userId=`) or, on a create, the body's `userId`.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { answerCollection, CollectionEnvelope } from '../http/collection-reply.js'
import type { AggregatePayment, AggregateQuery } from '../collections/aggregation.js'
import { ifMatchOf } from '../http/caching.js'
import { itemIdOf, parentNamedInBody, parentOf, type Place } from '../http/places.js'
import { readRepresentation, representationShapeOf } from '../http/representation.js'
import { representedResourceBody, ResourceEnvelope, resourceBody } from '../http/resource-reply.js'
import { bulkBody, bulkWriteNote, chargeItems, Created, isBulk, OneOrMany } from '../http/bulk-create.js'
import { Id, IdParam } from '../core/schema-types.js'
import { requireSignedIn } from '../core/caller.js'
import { CreatePostBody, type CreatePostInput, Post, PostsCollection, ReplacePostBody, UpdatePostBody } from './posts.schemas.js'
import { postRequestExamples, postsOpenApi } from './posts.openapi.js'
import type { RoutesOptions } from '../feature.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { UsersService } from '../users/users.public.js'
import { postEmbeds, representedPost } from './posts.embeds.js'
import { type PostsService, postFields } from './posts.service.js'

const OnePost = ResourceEnvelope(Post)

/** A post created at the top level names its author; left out, the caller. */
const CreatePostForUserBody = Type.Object(
  { ...CreatePostBody.properties, userId: Type.Optional({ ...Id, description: 'The author; left out, the caller.' }) },
  { additionalProperties: false },
)

const UNDER_AUTHOR: Place = {
  collection: '/users/:userId/posts',
  item: '/users/:userId/posts/:postId',
  collectionParams: Type.Object({ userId: IdParam }),
  itemParams: Type.Object({ userId: IdParam, postId: IdParam }),
  operations: { list: 'listPosts', get: 'getPost', create: 'createPost', replace: 'replacePost', update: 'updatePost', remove: 'deletePost' },
  listed: "List a user's posts",
}

const TOP_LEVEL: Place = {
  collection: '/posts',
  item: '/posts/:postId',
  itemParams: Type.Object({ postId: IdParam }),
  operations: {
    list: 'listAllPosts',
    get: 'getPostById',
    create: 'createPostForUser',
    replace: 'replacePostById',
    update: 'updatePostById',
    remove: 'deletePostById',
  },
  listed: "List every user's posts (`userId` filters by author)",
}

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

  for (const place of [UNDER_AUTHOR, TOP_LEVEL]) {
    const topLevel = place === TOP_LEVEL

    app.get(
      place.collection,
      {
        config: { access: 'public', reads: ['posts'], collection: PostsCollection, representation, openapi: { resource: postsOpenApi } },
        schema: {
          operationId: place.operations.list,
          summary: place.listed,
          description: 'Anyone; drafts only for their owner and admins.',
          tags: [postsOpenApi.tag.name],
          ...(place.collectionParams === undefined ? {} : { params: place.collectionParams }),
          response: { 200: CollectionEnvelope(RepresentedPost) },
        },
      },
      async (request, reply) => {
        const userId = parentOf(request.params, 'userId')
        const aggregate = (query: AggregateQuery, pay: AggregatePayment) => posts.aggregate(request.caller, userId, query, pay)
        const read = (query: CollectionQuery, select: ReadonlySet<string> | undefined) =>
          userId === undefined ? posts.listAll(request.caller, query, columnsOf({ select })) : posts.list(request.caller, userId, query, columnsOf({ select }))
        return answerCollection(
          request,
          reply,
          { spec: PostsCollection, scope: userId === undefined ? '' : `user:${userId}`, embeds, read, aggregate },
          chargeRateLimit,
        )
      },
    )

    app.get(
      place.item,
      {
        config: { access: 'public', reads: ['posts'], representation, openapi: { resource: postsOpenApi } },
        schema: {
          operationId: place.operations.get,
          summary: 'Get a post',
          description: 'Anyone; a draft only for its owner and admins (404 for everyone else).',
          tags: [postsOpenApi.tag.name],
          params: place.itemParams,
          response: { 200: ResourceEnvelope(RepresentedPost) },
        },
      },
      async (request, reply) => {
        const shown = readRepresentation(request, embeds)
        const post = await posts.get(request.caller, parentOf(request.params, 'userId'), itemIdOf(request.params, 'postId'), columnsOf(shown))
        return representedResourceBody(request, reply, shown, post, chargeRateLimit)
      },
    )

    app.post(
      place.collection,
      {
        config: {
          access: 'signed-in',
          openapi: {
            ...(topLevel ? { body: 'PostCreateForUser' } : {}),
            resource: postsOpenApi,
            requestExample: topLevel ? { ...postRequestExamples.create, userId: postsOpenApi.example.userId } : postRequestExamples.create,
          },
        },
        schema: {
          operationId: place.operations.create,
          summary: 'Create a post (or many)',
          description:
            (topLevel
              ? 'The author (`userId`, the caller when left out), or an admin. `status` defaults to `published`. A `userId` no user has is a 422.'
              : 'The owner, or an admin. `status` defaults to `published`.') + bulkWriteNote('posts'),
          tags: [postsOpenApi.tag.name],
          ...(place.collectionParams === undefined ? {} : { params: place.collectionParams }),
          body: OneOrMany(topLevel ? CreatePostForUserBody : CreatePostBody),
          response: { 201: Created(Post) },
        },
      },
      async (request, reply) => {
        const userId = parentOf(request.params, 'userId')
        if (isBulk(request.body)) {
          const items = request.body as readonly (CreatePostInput & { userId?: number })[]
          await chargeItems(chargeRateLimit, request, reply, items.length)
          const created = posts.createMany(
            request.caller,
            items.map(({ userId: named, ...input }) => ({ userId: userId ?? named ?? requireSignedIn(request.caller).userId, input })),
          )
          return reply.code(201).send(bulkBody(userId === undefined ? await parentNamedInBody('userId', 'user', created) : await created))
        }
        const { userId: named, ...input } = request.body as CreatePostInput & { userId?: number }
        const post =
          userId === undefined
            ? await parentNamedInBody('userId', 'user', posts.create(request.caller, named ?? requireSignedIn(request.caller).userId, input))
            : await posts.create(request.caller, userId, input)
        const location = topLevel ? `${app.prefix}/posts/${post.id}` : `${app.prefix}/users/${post.userId}/posts/${post.id}`
        return reply.code(201).header('location', location).send(resourceBody(post))
      },
    )

    app.put(
      place.item,
      {
        config: { access: 'signed-in', openapi: { resource: postsOpenApi, requestExample: postRequestExamples.replace } },
        schema: {
          operationId: place.operations.replace,
          summary: 'Replace a post',
          description: 'The owner, or an admin. `title` and `content` are required; `status` left out is `published`.',
          tags: [postsOpenApi.tag.name],
          params: place.itemParams,
          body: ReplacePostBody,
          response: { 200: OnePost },
        },
      },
      async (request, reply) =>
        resourceBody(
          await posts.replace(request.caller, parentOf(request.params, 'userId'), itemIdOf(request.params, 'postId'), request.body, {
            ifMatch: ifMatchOf(request, reply, OnePost),
          }),
        ),
    )

    app.patch(
      place.item,
      {
        config: { access: 'signed-in', openapi: { resource: postsOpenApi, requestExample: postRequestExamples.update } },
        schema: {
          operationId: place.operations.update,
          summary: 'Change part of a post',
          description: 'The owner, or an admin. Only the fields sent change (a JSON merge patch).',
          tags: [postsOpenApi.tag.name],
          params: place.itemParams,
          body: UpdatePostBody,
          response: { 200: OnePost },
        },
      },
      async (request, reply) =>
        resourceBody(
          await posts.update(request.caller, parentOf(request.params, 'userId'), itemIdOf(request.params, 'postId'), request.body, {
            ifMatch: ifMatchOf(request, reply, OnePost),
          }),
        ),
    )

    app.delete(
      place.item,
      {
        config: { access: 'signed-in', openapi: { resource: postsOpenApi } },
        schema: {
          operationId: place.operations.remove,
          summary: 'Delete a post',
          description: 'The owner, or an admin. Its comments go too.',
          tags: [postsOpenApi.tag.name],
          params: place.itemParams,
        },
      },
      async (request, reply) => {
        await posts.remove(request.caller, parentOf(request.params, 'userId'), itemIdOf(request.params, 'postId'), {
          ifMatch: ifMatchOf(request, reply, OnePost),
        })
        return reply.code(204).send()
      },
    )
  }
}
