// The todos' section of the data files (src/data-section.ts): in Threadline's format a todo as
// the API shows it; JSONPlaceholder's calls its text `title` and has no times.
import { Type } from 'typebox'
import { type DataSection, StoredId, storedInstant } from '../data-section.js'
import type { TodoRow } from './todos.table.js'
import { Todo } from './todos.schemas.js'
import { toTodo } from './todos.service.js'

const owner = [{ field: 'userId', section: 'users' }]

export const todosData: DataSection<TodoRow> = {
  name: 'todos',
  noun: 'todo',
  references: ['users'],
  formats: {
    threadline: {
      write: toTodo,
      schema: Type.Object({ ...Todo.properties, id: StoredId, userId: StoredId }, { additionalProperties: false }),
      references: owner,
      toColumns: (row) => ({
        id: row.id,
        user_id: row.userId,
        text: row.text,
        completed: row.completed ? 1 : 0,
        created_at: storedInstant(row.createdAt),
        updated_at: storedInstant(row.updatedAt),
      }),
    },
    jsonplaceholder: {
      write: (row) => ({ userId: row.user_id, id: row.id, title: row.text, completed: Boolean(row.completed) }),
      schema: Type.Object({ id: StoredId, userId: StoredId, title: Todo.properties.text, completed: Type.Boolean() }),
      references: owner,
      toColumns: (row, { now }) => ({ id: row.id, user_id: row.userId, text: row.title, completed: row.completed ? 1 : 0, created_at: now, updated_at: now }),
    },
  },
}
