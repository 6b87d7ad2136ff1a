// The todos' part of the API description: their tag, an example todo and the example request bodies
// todos.routes.ts declares. Module constants: both versions' operations show the same objects.
import { EXAMPLE_TIMESTAMP as AT, type ResourceOpenApi } from '../http/openapi/route-openapi.js'

export const todosOpenApi: ResourceOpenApi = {
  tag: { name: 'Todos', description: "A user's todos." },
  noun: 'todo',
  example: { id: 201, userId: 11, text: 'Write the A-0 manual', completed: false, createdAt: AT, updatedAt: AT },
}

export const todoRequestExamples = {
  create: { text: 'Write the A-0 manual' },
  update: { completed: true },
}
