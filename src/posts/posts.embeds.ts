// What a post's GET answers may embed (`include`): its author, and what other features offer (its
// newest comments, src/features.ts wires them in); and the item schema those answers are written
// with. A user's posts are offered to users' answers from here.
import { Type } from 'typebox'
import { type Embeddable, embedList, embedOne, newestOf } from '../collections/embedding.js'
import { type EmbeddedRelations, embeddedRelations, embeddedSchemas } from '../feature.js'
import { Represented } from '../http/representation.js'
import { User, type UsersService } from '../users/users.public.js'
import { Post } from './posts.schemas.js'
import type { PostsService } from './posts.service.js'

/** A post in a GET answer: the fields `select` keeps, `author` and each embedded relation when included. */
export const representedPost = (embedded: EmbeddedRelations) =>
  Represented(Post, {
    author: Type.Object(User.properties, { description: 'With `include=author`: the user who wrote the post.' }),
    ...embeddedSchemas(embedded),
  })

/** The relations of a post, read through the users' service and the offering features' (their visibility rules). */
export const postEmbeds = (users: UsersService, embedded: EmbeddedRelations): Embeddable<Post> => ({
  fields: Object.keys(Post.properties),
  relations: {
    author: embedOne<Post>('userId', 'users', (caller, ids) => users.getMany(caller, ids)),
    ...embeddedRelations(embedded),
  },
})

/** `include=posts` on a user: their newest posts, drafts only for those who may see them. */
export const postsOfUser = {
  in: 'users',
  name: 'posts',
  schema: Type.Array(Post, { description: `With \`include=posts\`: their newest posts, ${newestOf('posts')}; drafts only for their author and admins.` }),
  relation: ({ posts }: { posts: PostsService }) =>
    embedList<{ readonly id: number }>(
      (user) => user.id,
      (caller, ids, window) => posts.listOfUsers(caller, ids, window),
    ),
}
