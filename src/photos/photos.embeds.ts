// What a photo's GET answers may embed (`include`): its album, and what other features offer; and
// the item schema those answers are written with. An album's photos are offered to albums'
// answers from here.
import { Type } from 'typebox'
import { type Embeddable, embedList, embedOne, newestOf } from '../collections/embedding.js'
import { type EmbeddedRelations, embeddedRelations, embeddedSchemas } from '../feature.js'
import { Represented } from '../http/representation.js'
import { Album, type AlbumsService } from '../albums/albums.public.js'
import { Photo } from './photos.schemas.js'
import type { PhotosService } from './photos.service.js'

/** A photo in a GET answer: the fields `select` keeps, the `album` and each embedded relation when included. */
export const representedPhoto = (embedded: EmbeddedRelations) =>
  Represented(Photo, {
    album: Type.Object(Album.properties, { description: 'With `include=album`: the album it is in.' }),
    ...embeddedSchemas(embedded),
  })

/** The relations of a photo: its album, read through the albums' service, and what other features offer. */
export const photoEmbeds = (albums: AlbumsService, embedded: EmbeddedRelations): Embeddable<Photo> => ({
  fields: Object.keys(Photo.properties),
  relations: {
    album: embedOne<Photo>('albumId', 'albums', (caller, ids) => albums.getMany(caller, ids)),
    ...embeddedRelations(embedded),
  },
})

/** `include=photos` on an album: its newest photos. */
export const photosOfAlbum = {
  in: 'albums',
  name: 'photos',
  schema: Type.Array(Photo, { description: `With \`include=photos\`: its newest photos, ${newestOf('photos')}.` }),
  relation: ({ photos }: { photos: PhotosService }) =>
    embedList<{ readonly id: number }>(
      (album) => album.id,
      (caller, ids, window) => photos.listOfAlbums(caller, ids, window),
    ),
}
