// The photos table as Kysely sees it, added to the store's Tables (src/db/tables.ts) from here.
import type { Generated, Insertable, Selectable, Updateable } from 'kysely'
import type { Timestamp } from '../db/tables.js'

export interface PhotosTable {
  id: Generated<number>
  album_id: number
  title: string
  url: string
  thumbnail_url: string
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../db/tables.js' {
  interface Tables {
    photos: PhotosTable
  }
}

export type PhotoRow = Selectable<PhotosTable>
export type NewPhotoRow = Insertable<PhotosTable>
export type PhotoRowChanges = Updateable<PhotosTable>
