// The photos' part of the API description: their tag, an example photo and the example request
// bodies photos.routes.ts declares. Module constants: both versions' operations show the same objects.
import { EXAMPLE_TIMESTAMP as AT, type ResourceOpenApi } from '../http/openapi/route-openapi.js'

export const photosOpenApi: ResourceOpenApi = {
  tag: { name: 'Photos', description: "The photos in a user's album: a title, and the addresses of the image and its thumbnail." },
  noun: 'photo',
  example: {
    id: 501,
    albumId: 11,
    title: 'The Pilot ACE, front panel',
    url: 'https://picsum.photos/seed/501/600/600',
    thumbnailUrl: 'https://picsum.photos/seed/501/150/150',
    createdAt: AT,
    updatedAt: AT,
  },
}

export const photoRequestExamples = {
  create: { title: 'The Pilot ACE, front panel', url: 'https://picsum.photos/seed/501/600/600', thumbnailUrl: 'https://picsum.photos/seed/501/150/150' },
  update: { title: 'The Pilot ACE, 1950' },
}
