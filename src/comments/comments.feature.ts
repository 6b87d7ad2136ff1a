// The comments feature: the comments on a post, and the commentAdded topic and subscription.
import type { Feature } from '../feature.js'
import { countRows } from '../db/list-page.js'
import { ANONYMOUS_VISIBILITY, postReference, type PostsService, visible } from '../posts/posts.public.js'
import { userReference, type UsersService } from '../users/users.public.js'
import { commentsOfPost } from './comments.embeds.js'
import { COMMENTS_TOPICS } from './comments.events.js'
import { commentsResolvers, commentsSubscriptions, commentsTypeDefs } from './comments.graphql.js'
import { commentsRoutes } from './comments.routes.js'
import { type CommentsService, createCommentsService } from './comments.service.js'
import { commentsData } from './comments.data.js'
import { commentsSeed } from './comments.seed.js'

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
  embeds: [commentsOfPost],
  apiIndex: {
    post_comments_url: { path: '/users/{user_id}/posts/{post_id}/comments', query: 'collection' },
    post_comment_url: { path: '/users/{user_id}/posts/{post_id}/comments/{comment_id}', query: 'item' },
  },
  landingCount: {
    label: 'Comments',
    // The comments on the posts an anonymous caller may see.
    count: (db) => countRows(db, db.selectFrom('comments').innerJoin('posts', 'posts.id', 'comments.post_id').where(visible('posts', ANONYMOUS_VISIBILITY))),
  },
  data: commentsData,
  seed: commentsSeed,
} satisfies Feature<{ comments: CommentsService; users: UsersService; posts: PostsService }>
