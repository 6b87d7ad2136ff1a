// The users' part of the API description: their tag, an example user and the example request bodies
// users.routes.ts declares. Module constants: both versions' operations show the same objects.
import { EXAMPLE_TIMESTAMP as AT, type ResourceOpenApi } from '../http/openapi/route-openapi.js'

export const usersOpenApi: ResourceOpenApi = {
  tag: { name: 'Users', description: 'People, and who may administer the service.' },
  noun: 'user',
  example: { id: 11, name: 'Grace Hopper', email: 'grace@example.com', age: 85, avatar: null, role: 'user', createdAt: AT, updatedAt: AT },
}

export const userRequestExamples = {
  create: { name: 'Grace Hopper', email: 'grace@example.com', age: 85, password: 'cobol-forever' },
  replace: { name: 'Grace B. Hopper', email: 'grace@example.com' },
  update: { age: 86 },
}
