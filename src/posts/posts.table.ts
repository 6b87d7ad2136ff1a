// The posts table as Kysely sees it, added to the store's Tables (src/db/tables.ts) from here.
import type { Generated, Insertable, Selectable, Updateable } from 'kysely'
import type { Timestamp } from '../db/tables.js'

export interface PostsTable {
  id: Generated<number>
  user_id: number
  title: string
  content: string
  status: 'draft' | 'published'
  published_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../db/tables.js' {
  interface Tables {
    posts: PostsTable
  }
}

export type PostRow = Selectable<PostsTable>
export type NewPostRow = Insertable<PostsTable>
export type PostRowChanges = Updateable<PostsTable>
