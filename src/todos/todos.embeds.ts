// What a todo's GET answers may embed: what other features offer (nothing yet), but `select`
// applies; and the item schema those answers are written with. A user's todos are offered to
// users' answers from here.
import { Type } from 'typebox'
import { type Embeddable, embedList, newestOf } from '../collections/embedding.js'
import { type EmbeddedRelations, embeddedRelations, embeddedSchemas } from '../feature.js'
import { Represented } from '../http/representation.js'
import { Todo } from './todos.schemas.js'
import type { TodosService } from './todos.service.js'

/** A todo in a GET answer: the fields `select` keeps. */
export const representedTodo = (embedded: EmbeddedRelations) => Represented(Todo, embeddedSchemas(embedded))

/** A todo's fields for `select`, and what others embed in it. */
export const todoEmbeds = (embedded: EmbeddedRelations): Embeddable<Todo> => ({ fields: Object.keys(Todo.properties), relations: embeddedRelations(embedded) })

/** `include=todos` on a user: their newest todos. */
export const todosOfUser = {
  in: 'users',
  name: 'todos',
  schema: Type.Array(Todo, { description: `With \`include=todos\`: their newest todos, ${newestOf('todos')}.` }),
  relation: ({ todos }: { todos: TodosService }) =>
    embedList<{ readonly id: number }>(
      (user) => user.id,
      (caller, ids, window) => todos.listOfUsers(caller, ids, window),
    ),
}
