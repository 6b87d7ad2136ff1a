// What other features may use of albums: the item schema, the service's type, how to load an album
// (a photo's rights are its album's owner's), and the batched reference resolvers use. The lint
// refuses other features' imports of anything else in this folder.
export { Album } from './albums.schemas.js'
export { loadAlbum, toAlbum, type AlbumsService } from './albums.service.js'
export { albumReference } from './albums.graphql.js'
export type { AlbumRow } from './albums.table.js'
