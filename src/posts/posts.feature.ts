// The posts feature: a user's posts; drafts are seen only by their owner and admins.
import type { Feature } from '../core/feature.js'
import { userReference } from '../users/users.feature.js'
import type { CommentsService } from '../comments/comments.service.js'
import type { UsersService } from '../users/users.service.js'
import { postReference, postsResolvers, postsTypeDefs } from './posts.graphql.js'
import { postsRoutes } from './posts.routes.js'
import { createPostsService, type PostsService } from './posts.service.js'
import { postsData } from './posts.data.js'

export const postsFeature = {
  name: 'posts',
  createService: createPostsService,
  routes: postsRoutes,
  graphql: { typeDefs: postsTypeDefs, resolvers: ({ posts, users }) => postsResolvers(posts, userReference(users)) },
  data: postsData,
} satisfies Feature<{ posts: PostsService; users: UsersService; comments: CommentsService }>

/** How other features' resolvers read a post by id (batched per operation, drafts only for those who may see them). */
export { postReference }
