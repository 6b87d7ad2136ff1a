// A todo as the API shows it and as its owner may write it.
import { type Static, Type } from 'typebox'
import { defineCollection } from '../collections/collection-spec.js'
import { Id, Line, Timestamp } from '../core/schema-types.js'

const Text = Line({ maxLength: 500 })

export const Todo = Type.Object({
  id: Id,
  userId: Id,
  text: Text,
  completed: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Todo = Static<typeof Todo>

/** A new todo is never completed. */
export const CreateTodoBody = Type.Object({ text: Text }, { additionalProperties: false })
export type CreateTodoInput = Static<typeof CreateTodoBody>

export const UpdateTodoBody = Type.Object({ text: Type.Optional(Text), completed: Type.Optional(Type.Boolean()) }, { additionalProperties: false })
export type UpdateTodoInput = Static<typeof UpdateTodoBody>

export const TodosCollection = defineCollection('todos', {
  id: { column: 'id', type: 'integer' },
  userId: { column: 'user_id', type: 'integer', sortable: false },
  text: { column: 'text', type: 'string', searchable: true },
  completed: { column: 'completed', type: 'boolean' },
  createdAt: { column: 'created_at', type: 'timestamp' },
  updatedAt: { column: 'updated_at', type: 'timestamp' },
})
