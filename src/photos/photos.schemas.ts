// A photo as the API shows it and as its album's owner may write it. The service keeps no image:
// a photo is its title and the addresses of the image and of its thumbnail, as JSONPlaceholder's.
import { type Static, Type } from 'typebox'
import { defineCollection } from '../collections/collection-spec.js'
import { Id, Line, Timestamp } from '../core/schema-types.js'
import { MESSAGE_KEYWORD } from '../core/validation.js'

const Title = Line({ maxLength: 200 })
/** Only https: a page showing the photo loads it without mixed content, and no other scheme (javascript:, data:) gets in. */
const ImageUrl = (description: string) =>
  Type.String({ format: 'uri', maxLength: 2048, pattern: '^https://', [MESSAGE_KEYWORD]: 'must be an https URL', description })

export const Photo = Type.Object({
  id: Id,
  albumId: Id,
  title: Title,
  url: ImageUrl('The image.'),
  thumbnailUrl: ImageUrl('A small version of the image.'),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type Photo = Static<typeof Photo>

export const CreatePhotoBody = Type.Object(
  { title: Photo.properties.title, url: Photo.properties.url, thumbnailUrl: Photo.properties.thumbnailUrl },
  { additionalProperties: false },
)
export type CreatePhotoInput = Static<typeof CreatePhotoBody>

export const UpdatePhotoBody = Type.Object(
  { title: Type.Optional(Photo.properties.title), url: Type.Optional(Photo.properties.url), thumbnailUrl: Type.Optional(Photo.properties.thumbnailUrl) },
  { additionalProperties: false },
)
export type UpdatePhotoInput = Static<typeof UpdatePhotoBody>

// The addresses are neither filters nor sorts: no reader looks a photo up by its URL, and each
// would cost an index.
export const PhotosCollection = defineCollection('photos', {
  id: { column: 'id', type: 'integer' },
  albumId: { column: 'album_id', type: 'integer', sortable: false },
  title: { column: 'title', type: 'string', searchable: true },
  url: { column: 'url', type: 'string', filterable: false, sortable: false },
  thumbnailUrl: { column: 'thumbnail_url', type: 'string', filterable: false, sortable: false },
  createdAt: { column: 'created_at', type: 'timestamp' },
  updatedAt: { column: 'updated_at', type: 'timestamp' },
})
