// What a comment's GET answers may embed (`include`): its author as a whole user (in place of the
// `{id, name}` every comment carries), its post, and what other features offer; and the item
// schema those answers are written with. A post's comments are offered to posts' answers from here.
import { Type } from 'typebox'
import { type Embeddable, embedList, embedOne, newestOf } from '../collections/embedding.js'
import { type EmbeddedRelations, embeddedRelations, embeddedSchemas } from '../feature.js'
import { Represented } from '../http/representation.js'
import { Post, type PostsService } from '../posts/posts.public.js'
import { User, type UsersService } from '../users/users.public.js'
import { Comment } from './comments.schemas.js'
import type { CommentsService } from './comments.service.js'

/** `{id, name}`, or with `include=author` the whole user: one schema both fit (the rest optional); null for a guest comment. */
const Author = Type.Unsafe<(NonNullable<Comment['author']> & Partial<User>) | null>({
  ...Type.Object(
    Object.fromEntries(Object.entries(User.properties).map(([name, schema]) => [name, name === 'id' || name === 'name' ? schema : Type.Optional(schema)])),
    { description: 'The author: `{id, name}`; with `include=author`, the whole user; null for a guest comment (it has none).' },
  ),
  type: ['object', 'null'],
})

/** A comment in a GET answer: the fields `select` keeps, the whole `author`, the `post` and each embedded relation when included. */
export const representedComment = (embedded: EmbeddedRelations) =>
  Represented(Comment, {
    author: Author,
    post: Type.Object(Post.properties, { description: 'With `include=post`: the post it is on.' }),
    ...embeddedSchemas(embedded),
  })

/** The relations of a comment, read through the users' and posts' services (their visibility rules). */
export const commentEmbeds = ({ users, posts }: { users: UsersService; posts: PostsService }, embedded: EmbeddedRelations): Embeddable<Comment> => ({
  fields: Object.keys(Comment.properties),
  relations: {
    author: embedOne<Comment>('authorId', 'users', (caller, ids) => users.getMany(caller, ids)),
    post: embedOne<Comment>('postId', 'posts', (caller, ids) => posts.getMany(caller, ids)),
    ...embeddedRelations(embedded),
  },
})

/** `include=comments` on a post: its newest comments; none on a draft the caller may not see. */
export const commentsOfPost = {
  in: 'posts',
  name: 'comments',
  schema: Type.Array(Comment, {
    description: `With \`include=comments\`: its newest comments, ${newestOf('comments')}; none on a draft the caller may not see.`,
  }),
  relation: ({ comments }: { comments: CommentsService }) =>
    embedList<{ readonly id: number }>(
      (post) => post.id,
      (caller, ids, window) => comments.listOfPosts(caller, ids, window),
    ),
}
