// The albums feature: a user's photo albums (their photos are the photos feature's).
import type { Feature } from '../feature.js'
import { countRows } from '../db/list-page.js'
import { userReference, type UsersService } from '../users/users.public.js'
import { albumsOfUser } from './albums.embeds.js'
import { albumsResolvers, albumsTypeDefs } from './albums.graphql.js'
import { albumsRoutes } from './albums.routes.js'
import { type AlbumsService, createAlbumsService } from './albums.service.js'
import { albumsData } from './albums.data.js'
import { albumsSeed } from './albums.seed.js'

export const albumsFeature = {
  name: 'albums',
  createService: createAlbumsService,
  routes: albumsRoutes,
  graphql: { typeDefs: albumsTypeDefs, resolvers: ({ albums, users }) => albumsResolvers(albums, userReference(users)) },
  embeds: [albumsOfUser],
  apiIndex: {
    user_albums_url: { path: '/users/{user_id}/albums', query: 'collection' },
    user_album_url: { path: '/users/{user_id}/albums/{album_id}', query: 'item' },
  },
  landingCount: { label: 'Albums', count: (db) => countRows(db, db.selectFrom('albums')) },
  data: albumsData,
  seed: albumsSeed,
} satisfies Feature<{ albums: AlbumsService; users: UsersService }>
