// The albums' section of the data files (src/data-section.ts): in Threadline's format an album as
// the API shows it; JSONPlaceholder's has no times, so its albums are made at the moment of the import.
import { Type } from 'typebox'
import { type DataSection, StoredId, storedInstant } from '../data-section.js'
import type { AlbumRow } from './albums.table.js'
import { Album } from './albums.schemas.js'
import { toAlbum } from './albums.service.js'

const owner = [{ field: 'userId', section: 'users' }]

export const albumsData: DataSection<AlbumRow> = {
  name: 'albums',
  noun: 'album',
  references: ['users'],
  formats: {
    threadline: {
      write: toAlbum,
      schema: Type.Object({ ...Album.properties, id: StoredId, userId: StoredId }, { additionalProperties: false }),
      references: owner,
      toColumns: (row) => ({
        id: row.id,
        user_id: row.userId,
        title: row.title,
        created_at: storedInstant(row.createdAt),
        updated_at: storedInstant(row.updatedAt),
      }),
    },
    jsonplaceholder: {
      write: (row) => ({ userId: row.user_id, id: row.id, title: row.title }),
      schema: Type.Object({ id: StoredId, userId: StoredId, title: Album.properties.title }),
      references: owner,
      toColumns: (row, { now }) => ({ id: row.id, user_id: row.userId, title: row.title, created_at: now, updated_at: now }),
    },
  },
}
