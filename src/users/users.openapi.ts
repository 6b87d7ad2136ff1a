// The users' part of the API description: their tag, an example user and the example request bodies
// users.routes.ts declares. Module constants: both versions' operations show the same objects.
import { EXAMPLE_TIMESTAMP as AT, type ResourceOpenApi } from '../http/openapi/route-openapi.js'

export const usersOpenApi: ResourceOpenApi = {
  tag: { name: 'Users', description: 'People, and who may administer the service.' },
  noun: 'user',
  example: {
    id: 11,
    name: 'Grace Hopper',
    email: 'grace@example.com',
    age: 85,
    avatar: null,
    role: 'user',
    username: 'amazing-grace',
    phone: '+1-202-555-0143',
    website: 'https://grace.example.com',
    address: { street: '1 Navy Yard', suite: 'Room 3', city: 'Arlington', zipcode: '22202', geo: { lat: '38.8719', lng: '-77.0563' } },
    company: { name: 'Remington Rand', catchPhrase: 'It is easier to ask forgiveness', bs: 'compile business logic' },
    createdAt: AT,
    updatedAt: AT,
  },
}

export const userRequestExamples = {
  create: { name: 'Grace Hopper', email: 'grace@example.com', age: 85, password: 'cobol-forever', username: 'amazing-grace' },
  replace: { name: 'Grace B. Hopper', email: 'grace@example.com', username: 'amazing-grace', phone: '+1-202-555-0143' },
  update: { company: { name: 'Remington Rand', catchPhrase: 'It is easier to ask forgiveness', bs: 'compile business logic' } },
}
