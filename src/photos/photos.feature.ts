// The photos feature: the photos in a user's album, written by the album's owner.
import type { Feature } from '../feature.js'
import { countRows } from '../db/list-page.js'
import { albumReference, type AlbumsService } from '../albums/albums.public.js'
import { photosOfAlbum } from './photos.embeds.js'
import { photosResolvers, photosTypeDefs } from './photos.graphql.js'
import { photosRoutes } from './photos.routes.js'
import { createPhotosService, type PhotosService } from './photos.service.js'
import { photosData } from './photos.data.js'
import { photosSeed } from './photos.seed.js'

export const photosFeature = {
  name: 'photos',
  createService: createPhotosService,
  routes: photosRoutes,
  graphql: { typeDefs: photosTypeDefs, resolvers: ({ photos, albums }) => photosResolvers(photos, albumReference(albums)) },
  embeds: [photosOfAlbum],
  apiIndex: {
    album_photos_url: { path: '/users/{user_id}/albums/{album_id}/photos', query: 'collection' },
    album_photo_url: { path: '/users/{user_id}/albums/{album_id}/photos/{photo_id}', query: 'item' },
  },
  landingCount: { label: 'Photos', count: (db) => countRows(db, db.selectFrom('photos')) },
  data: photosData,
  seed: photosSeed,
} satisfies Feature<{ photos: PhotosService; albums: AlbumsService }>
