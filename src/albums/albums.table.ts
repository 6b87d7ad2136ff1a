// The albums table as Kysely sees it, added to the store's Tables (src/db/tables.ts) from here.
import type { Generated, Insertable, Selectable, Updateable } from 'kysely'
import type { Timestamp } from '../db/tables.js'

export interface AlbumsTable {
  id: Generated<number>
  user_id: number
  title: string
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../db/tables.js' {
  interface Tables {
    albums: AlbumsTable
  }
}

export type AlbumRow = Selectable<AlbumsTable>
export type NewAlbumRow = Insertable<AlbumsTable>
export type AlbumRowChanges = Updateable<AlbumsTable>
