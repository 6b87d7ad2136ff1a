// What a comment's GET answers may embed (`include`): its author as a whole user (in place of the
// `{id, name}` every comment carries), and its post; and the item schema those answers are written with.
import { Type } from 'typebox'
import { type Embeddable, embedOne } from '../collections/embedding.js'
import { Represented } from '../http/representation.js'
import type { PostsService } from '../posts/posts.service.js'
import { Post } from '../posts/posts.schemas.js'
import type { UsersService } from '../users/users.service.js'
import { User } from '../users/users.schemas.js'
import { Comment } from './comments.schemas.js'

/** `{id, name}`, or with `include=author` the whole user: one schema both fit (the rest optional). */
const Author = Type.Unsafe<Comment['author'] & Partial<User>>(
  Type.Object(
    Object.fromEntries(Object.entries(User.properties).map(([name, schema]) => [name, name === 'id' || name === 'name' ? schema : Type.Optional(schema)])),
    { description: 'The author: `{id, name}`; with `include=author`, the whole user.' },
  ),
)

/** A comment in a GET answer: the fields `select` keeps, the whole `author` and the `post` when included. */
export const RepresentedComment = Represented(Comment, {
  author: Author,
  post: Type.Object(Post.properties, { description: 'With `include=post`: the post it is on.' }),
})

/** The relations of a comment, read through the users' and posts' services (their visibility rules). */
export const commentEmbeds = ({ users, posts }: { users: UsersService; posts: PostsService }): Embeddable<Comment> => ({
  fields: Object.keys(Comment.properties),
  relations: {
    author: embedOne(
      (comment) => comment.authorId,
      (caller, ids) => users.getMany(caller, ids),
    ),
    post: embedOne(
      (comment) => comment.postId,
      (caller, ids) => posts.getMany(caller, ids),
    ),
  },
})
