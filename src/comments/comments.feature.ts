// The comments feature: the comments on a post, and the commentAdded topic and subscription.
import type { Feature } from '../core/feature.js'
import { postReference } from '../posts/posts.feature.js'
import type { PostsService } from '../posts/posts.service.js'
import { userReference } from '../users/users.feature.js'
import type { UsersService } from '../users/users.service.js'
import { COMMENTS_TOPICS } from './comments.events.js'
import { commentsResolvers, commentsSubscriptions, commentsTypeDefs } from './comments.graphql.js'
import { commentsRoutes } from './comments.routes.js'
import { type CommentsService, createCommentsService } from './comments.service.js'
import { commentsData } from './comments.data.js'

export const commentsFeature = {
  name: 'comments',
  createService: createCommentsService,
  routes: commentsRoutes,
  graphql: {
    typeDefs: commentsTypeDefs,
    resolvers: ({ comments, users, posts }) => commentsResolvers(comments, userReference(users), postReference(posts)),
    subscriptions: ({ comments }) => commentsSubscriptions(comments),
  },
  topics: COMMENTS_TOPICS,
  data: commentsData,
} satisfies Feature<{ comments: CommentsService; users: UsersService; posts: PostsService }>
