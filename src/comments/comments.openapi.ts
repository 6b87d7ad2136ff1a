// The comments' part of the API description: their tag, an example comment and the example request
// bodies comments.routes.ts declares. Module constants: both versions' operations show the same objects.
import { EXAMPLE_TIMESTAMP as AT, type ResourceOpenApi } from '../http/openapi/route-openapi.js'

export const commentsOpenApi: ResourceOpenApi = {
  tag: { name: 'Comments', description: 'The comments on a post; the author is whoever is signed in.' },
  noun: 'comment',
  example: { id: 501, postId: 101, authorId: 1, author: { id: 1, name: 'Leanne Graham' }, email: null, content: 'Nicely put.', createdAt: AT, updatedAt: AT },
}

export const commentRequestExamples = {
  create: { content: 'Nicely put.' },
  update: { content: 'Nicely put, indeed.' },
}
