// The tables as Kysely sees them. Row types (UserRow) are what the store returns; the API types
// (User) live with each feature and are mapped from rows in its service.
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'

/** Timestamps are ISO 8601 text on SQLite (sortable as text) and timestamptz on PostgreSQL. */
export type Timestamp = ColumnType<string | Date, string, string>
/** Booleans are 0/1 on SQLite and boolean on PostgreSQL; both accept 0/1 when written. */
export type BooleanColumn = ColumnType<boolean | number, number, number>

export interface UsersTable {
  id: Generated<number>
  name: string
  email: string
  age: number | null
  avatar: string | null
  role: 'user' | 'admin'
  password_hash: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

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

export interface CommentsTable {
  id: Generated<number>
  post_id: number
  author_id: number
  content: string
  created_at: Timestamp
  updated_at: Timestamp
}

export interface TodosTable {
  id: Generated<number>
  user_id: number
  text: string
  completed: BooleanColumn
  created_at: Timestamp
  updated_at: Timestamp
}

export interface TokensTable {
  id: Generated<number>
  user_id: number
  /** SHA-256 of the bearer token, hex. The token itself is never stored. */
  token_hash: string
  created_at: Timestamp
  expires_at: Timestamp
  revoked_at: Timestamp | null
}

export interface Tables {
  users: UsersTable
  posts: PostsTable
  comments: CommentsTable
  todos: TodosTable
  tokens: TokensTable
}

export type UserRow = Selectable<UsersTable>
export type NewUserRow = Insertable<UsersTable>
export type UserRowChanges = Updateable<UsersTable>
export type PostRow = Selectable<PostsTable>
export type NewPostRow = Insertable<PostsTable>
export type PostRowChanges = Updateable<PostsTable>
export type CommentRow = Selectable<CommentsTable>
export type NewCommentRow = Insertable<CommentsTable>
export type TodoRow = Selectable<TodosTable>
export type NewTodoRow = Insertable<TodosTable>
export type TodoRowChanges = Updateable<TodosTable>

/** Timestamps as the API shows them: ISO 8601 UTC with milliseconds, whatever the dialect returned. */
export function toIsoTimestamp(value: string | Date): string {
  return typeof value === 'string' ? value : value.toISOString()
}
