// The posts feature: a user's posts; drafts are seen only by their owner and admins.
import type { Feature } from '../feature.js'
import { countRows } from '../db/list-page.js'
import { userReference, type UsersService } from '../users/users.public.js'
import { postsOfUser } from './posts.embeds.js'
import { postsResolvers, postsTypeDefs } from './posts.graphql.js'
import { postsRoutes } from './posts.routes.js'
import { ANONYMOUS_VISIBILITY, visible } from './post-visibility.js'
import { createPostsService, type PostsService } from './posts.service.js'
import { postsData } from './posts.data.js'
import { postsSeed } from './posts.seed.js'

export const postsFeature = {
  name: 'posts',
  createService: createPostsService,
  routes: postsRoutes,
  graphql: { typeDefs: postsTypeDefs, resolvers: ({ posts, users }) => postsResolvers(posts, userReference(users)) },
  embeds: [postsOfUser],
  apiIndex: {
    user_posts_url: { path: '/users/{user_id}/posts', query: 'collection' },
    user_post_url: { path: '/users/{user_id}/posts/{post_id}', query: 'item' },
  },
  landingCount: { label: 'Posts', count: (db) => countRows(db, db.selectFrom('posts').where(visible('posts', ANONYMOUS_VISIBILITY))) },
  data: postsData,
  seed: postsSeed,
} satisfies Feature<{ posts: PostsService; users: UsersService }>
