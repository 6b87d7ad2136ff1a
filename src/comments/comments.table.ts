// The comments table as Kysely sees it, added to the store's Tables (src/db/tables.ts) from here.
import type { Generated, Insertable, Selectable } from 'kysely'
import type { Timestamp } from '../db/tables.js'

export interface CommentsTable {
  id: Generated<number>
  post_id: number
  /** Null for a guest comment: one written by someone who is no user (an imported JSONPlaceholder comment). */
  author_id: number | null
  content: string
  created_at: Timestamp
  updated_at: Timestamp
  /** A guest comment's commenter's e-mail; null for a user's comment. */
  email: string | null
}

declare module '../db/tables.js' {
  interface Tables {
    comments: CommentsTable
  }
}

export type CommentRow = Selectable<CommentsTable>
export type NewCommentRow = Insertable<CommentsTable>
