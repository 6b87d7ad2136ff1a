// The todos table as Kysely sees it, added to the store's Tables (src/db/tables.ts) from here.
import type { Generated, Insertable, Selectable, Updateable } from 'kysely'
import type { Timestamp, BooleanColumn } from '../db/tables.js'

export interface TodosTable {
  id: Generated<number>
  user_id: number
  text: string
  completed: BooleanColumn
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../db/tables.js' {
  interface Tables {
    todos: TodosTable
  }
}

export type TodoRow = Selectable<TodosTable>
export type NewTodoRow = Insertable<TodosTable>
export type TodoRowChanges = Updateable<TodosTable>
