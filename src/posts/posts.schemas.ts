// A post as the API shows it and as its owner may write it.
import { type Static, Type } from 'typebox'
import { defineCollection } from '../collections/collection-spec.js'
import { Id, Line, Nullable, Prose, StringEnum, Timestamp } from '../core/schema-types.js'

export const POST_STATUSES = ['draft', 'published'] as const

const Title = Line({ maxLength: 200 })
const Content = Prose({ maxLength: 100_000, mayBeEmpty: true })
const Status = StringEnum(POST_STATUSES, { description: 'Drafts are seen only by their owner and admins.' })

export const Post = Type.Object({
  id: Id,
  userId: Id,
  title: Title,
  content: Content,
  status: Status,
  publishedAt: Nullable(Type.String({ format: 'date-time', description: 'Set when the post is published; null for drafts.' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Post = Static<typeof Post>

export const CreatePostBody = Type.Object({ title: Title, content: Content, status: Type.Optional(Status) }, { additionalProperties: false })
export type CreatePostInput = Static<typeof CreatePostBody>

/** PUT: the whole post; status left out is the default, published. */
export const ReplacePostBody = CreatePostBody

/** PATCH: only the fields given change. */
export const UpdatePostBody = Type.Partial(CreatePostBody, { additionalProperties: false })
export type UpdatePostInput = Static<typeof UpdatePostBody>

export const PostsCollection = defineCollection('posts', {
  id: { column: 'id', type: 'integer' },
  userId: { column: 'user_id', type: 'integer', sortable: false },
  title: { column: 'title', type: 'string', searchable: true },
  content: { column: 'content', type: 'string', searchable: true, filterable: false, sortable: false },
  status: { column: 'status', type: 'string', values: POST_STATUSES },
  publishedAt: { column: 'published_at', type: 'timestamp', nullable: true },
  createdAt: { column: 'created_at', type: 'timestamp' },
  updatedAt: { column: 'updated_at', type: 'timestamp' },
})
