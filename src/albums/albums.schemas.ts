// An album as the API shows it and as its owner may write it.
import { type Static, Type } from 'typebox'
import { defineCollection } from '../collections/collection-spec.js'
import { Id, Line, Timestamp } from '../core/schema-types.js'

const Title = Line({ maxLength: 200 })

export const Album = Type.Object({
  id: Id,
  userId: Id,
  title: Title,
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Album = Static<typeof Album>

export const CreateAlbumBody = Type.Object({ title: Title }, { additionalProperties: false })
export type CreateAlbumInput = Static<typeof CreateAlbumBody>

export const UpdateAlbumBody = Type.Object({ title: Type.Optional(Title) }, { additionalProperties: false })
export type UpdateAlbumInput = Static<typeof UpdateAlbumBody>

export const AlbumsCollection = defineCollection('albums', {
  id: { column: 'id', type: 'integer' },
  userId: { column: 'user_id', type: 'integer', sortable: false },
  title: { column: 'title', type: 'string', searchable: true },
  createdAt: { column: 'created_at', type: 'timestamp' },
  updatedAt: { column: 'updated_at', type: 'timestamp' },
})
