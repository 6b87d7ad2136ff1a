// What an album's GET answers may embed (`include`): its owner, and what other features offer (its
// newest photos, src/features.ts wires them in); and the item schema those answers are written
// with. A user's albums are offered to users' answers from here.
import { Type } from 'typebox'
import { type Embeddable, embedList, embedOne, newestOf } from '../collections/embedding.js'
import { type EmbeddedRelations, embeddedRelations, embeddedSchemas } from '../feature.js'
import { Represented } from '../http/representation.js'
import { User, type UsersService } from '../users/users.public.js'
import { Album } from './albums.schemas.js'
import type { AlbumsService } from './albums.service.js'

/** An album in a GET answer: the fields `select` keeps, `user` and each embedded relation when included. */
export const representedAlbum = (embedded: EmbeddedRelations) =>
  Represented(Album, {
    user: Type.Object(User.properties, { description: 'With `include=user`: the user whose album it is.' }),
    ...embeddedSchemas(embedded),
  })

/** The relations of an album: its owner, read through the users' service, and what other features offer. */
export const albumEmbeds = (users: UsersService, embedded: EmbeddedRelations): Embeddable<Album> => ({
  fields: Object.keys(Album.properties),
  relations: {
    user: embedOne<Album>('userId', 'users', (caller, ids) => users.getMany(caller, ids)),
    ...embeddedRelations(embedded),
  },
})

/** `include=albums` on a user: their newest albums. */
export const albumsOfUser = {
  in: 'users',
  name: 'albums',
  schema: Type.Array(Album, { description: `With \`include=albums\`: their newest albums, ${newestOf('albums')}.` }),
  relation: ({ albums }: { albums: AlbumsService }) =>
    embedList<{ readonly id: number }>(
      (user) => user.id,
      (caller, ids, window) => albums.listOfUsers(caller, ids, window),
    ),
}
