// The albums' part of the API description: their tag, an example album and the example request
// bodies albums.routes.ts declares. Module constants: both versions' operations show the same objects.
import { EXAMPLE_TIMESTAMP as AT, type ResourceOpenApi } from '../http/openapi/route-openapi.js'

export const albumsOpenApi: ResourceOpenApi = {
  tag: { name: 'Albums', description: "A user's photo albums." },
  noun: 'album',
  example: { id: 11, userId: 2, title: 'Harwell, the first winter', createdAt: AT, updatedAt: AT },
}

export const albumRequestExamples = {
  create: { title: 'Harwell, the first winter' },
  update: { title: 'Harwell, winter 1951' },
}
