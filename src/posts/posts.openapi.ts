// The posts' part of the API description: their tag, an example post and the example request bodies
// posts.routes.ts declares. Module constants: both versions' operations show the same objects.
import { EXAMPLE_TIMESTAMP as AT, type ResourceOpenApi } from '../http/openapi/route-openapi.js'

export const postsOpenApi: ResourceOpenApi = {
  tag: { name: 'Posts', description: "A user's posts; drafts are seen only by their owner and admins." },
  noun: 'post',
  example: {
    id: 101,
    userId: 11,
    title: 'On compilers',
    content: 'A compiler translates programs.',
    status: 'published',
    publishedAt: AT,
    createdAt: AT,
    updatedAt: AT,
  },
}

export const postRequestExamples = {
  create: { title: 'On compilers', content: 'A compiler translates programs.', status: 'draft' },
  replace: { title: 'On compilers', content: 'A compiler translates programs into machine code.' },
  update: { status: 'published' },
}
