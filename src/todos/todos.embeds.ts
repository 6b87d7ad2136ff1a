// What a todo's GET answers may embed: nothing yet, but `select` applies; and the item schema
// those answers are written with.
import type { Embeddable } from '../collections/embedding.js'
import { Represented } from '../http/representation.js'
import { Todo } from './todos.schemas.js'

/** A todo in a GET answer: the fields `select` keeps. */
export const RepresentedTodo = Represented(Todo, {})

/** A todo's fields for `select`; it has no relations to include. */
export const todoEmbeds: Embeddable<Todo> = { fields: Object.keys(Todo.properties), relations: {} }
