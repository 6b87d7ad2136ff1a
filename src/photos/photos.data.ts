// The photos' section of the data files (src/data-section.ts): in Threadline's format a photo as
// the API shows it; JSONPlaceholder's has no times, so its photos are made at the moment of the import.
import { Type } from 'typebox'
import { type DataSection, StoredId, storedInstant } from '../data-section.js'
import type { PhotoRow } from './photos.table.js'
import { Photo } from './photos.schemas.js'
import { toPhoto } from './photos.service.js'

const album = [{ field: 'albumId', section: 'albums' }]

export const photosData: DataSection<PhotoRow> = {
  name: 'photos',
  noun: 'photo',
  references: ['albums'],
  formats: {
    threadline: {
      write: toPhoto,
      schema: Type.Object({ ...Photo.properties, id: StoredId, albumId: StoredId }, { additionalProperties: false }),
      references: album,
      toColumns: (row) => ({
        id: row.id,
        album_id: row.albumId,
        title: row.title,
        url: row.url,
        thumbnail_url: row.thumbnailUrl,
        created_at: storedInstant(row.createdAt),
        updated_at: storedInstant(row.updatedAt),
      }),
    },
    jsonplaceholder: {
      write: (row) => ({ albumId: row.album_id, id: row.id, title: row.title, url: row.url, thumbnailUrl: row.thumbnail_url }),
      schema: Type.Object({
        id: StoredId,
        albumId: StoredId,
        title: Photo.properties.title,
        url: Photo.properties.url,
        thumbnailUrl: Photo.properties.thumbnailUrl,
      }),
      references: album,
      toColumns: (row, { now }) => ({
        id: row.id,
        album_id: row.albumId,
        title: row.title,
        url: row.url,
        thumbnail_url: row.thumbnailUrl,
        created_at: now,
        updated_at: now,
      }),
    },
  },
}
