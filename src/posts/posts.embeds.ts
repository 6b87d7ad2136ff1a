// What a post's GET answers may embed (`include`): its author, and its newest comments; and the
// item schema those answers are written with.
import { Type } from 'typebox'
import { type Embeddable, embedList, embedOne } from '../collections/embedding.js'
import type { CommentsService } from '../comments/comments.service.js'
import { Comment } from '../comments/comments.schemas.js'
import { Represented } from '../http/representation.js'
import type { UsersService } from '../users/users.service.js'
import { User } from '../users/users.schemas.js'
import { Post } from './posts.schemas.js'

/** A post in a GET answer: the fields `select` keeps, `author` and `comments` when included. */
export const RepresentedPost = Represented(Post, {
  author: Type.Object(User.properties, { description: 'With `include=author`: the user who wrote the post.' }),
  comments: Type.Array(Comment, {
    description: 'With `include=comments`: its newest comments, newest first (20, or `comments.limit` up to 100); none on a draft the caller may not see.',
  }),
})

/** The relations of a post, read through the users' and comments' services (their visibility rules). */
export const postEmbeds = ({ users, comments }: { users: UsersService; comments: CommentsService }): Embeddable<Post> => ({
  fields: Object.keys(Post.properties),
  relations: {
    author: embedOne(
      (post) => post.userId,
      (caller, ids) => users.getMany(caller, ids),
    ),
    comments: embedList(
      (post) => post.id,
      (caller, ids, window) => comments.listOfPosts(caller, ids, window),
    ),
  },
})
