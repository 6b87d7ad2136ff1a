// What a user's GET answers may embed (`include`): their newest posts and todos; and the item
// schema those answers are written with.
import { Type } from 'typebox'
import { type Embeddable, embedList } from '../collections/embedding.js'
import { Represented } from '../http/representation.js'
import type { PostsService } from '../posts/posts.service.js'
import { Post } from '../posts/posts.schemas.js'
import type { TodosService } from '../todos/todos.service.js'
import { Todo } from '../todos/todos.schemas.js'
import { User } from './users.schemas.js'

const newest = (relation: string) => `newest first (20, or \`${relation}.limit\` up to 100)`

/** A user in a GET answer: the fields `select` keeps, `posts` and `todos` when included. */
export const RepresentedUser = Represented(User, {
  posts: Type.Array(Post, { description: `With \`include=posts\`: their newest posts, ${newest('posts')}; drafts only for their author and admins.` }),
  todos: Type.Array(Todo, { description: `With \`include=todos\`: their newest todos, ${newest('todos')}.` }),
})

/** The relations of a user, read through the posts' and todos' services (their visibility rules). */
export const userEmbeds = ({ posts, todos }: { posts: PostsService; todos: TodosService }): Embeddable<User> => ({
  fields: Object.keys(User.properties),
  relations: {
    posts: embedList(
      (user) => user.id,
      (caller, ids, window) => posts.listOfUsers(caller, ids, window),
    ),
    todos: embedList(
      (user) => user.id,
      (caller, ids, window) => todos.listOfUsers(caller, ids, window),
    ),
  },
})
