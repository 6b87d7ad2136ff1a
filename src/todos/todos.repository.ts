// SQL for todos. Every function takes the executor first: the database or a transaction.
import type { AggregatePayment, AggregateQuery } from '../collections/aggregation.js'
import { aggregatePage } from '../db/aggregate-page.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { rowById, rowInsert, rowUpdate, rowUpdateIfChanged, type RowChangeConditions } from '../db/compiled-statements.js'
import type { RowPage } from '../collections/collection-page.js'
import { countPerParent, listPage, listWindowPerParent } from '../db/list-page.js'
import type { NewTodoRow, TodoRow, TodoRowChanges } from './todos.table.js'
import type { ListWindow } from '../collections/pagination.js'

export const findTodoById: (db: Db, id: number) => Promise<TodoRow | undefined> = rowById((db) => db.selectFrom('todos').selectAll())

export function listTodosOfUser(db: Db, userId: number, query: CollectionQuery): Promise<RowPage<TodoRow>> {
  return listPage<TodoRow>(db, { from: todosOfUser, parentId: userId, select: (q) => q.selectAll(), query, shape: 'todos of a user' })
}

/** The rows listTodosOfUser lists, aggregated; or, without a user, listTodos's. */
export function aggregateTodos(db: Db, userId: number | undefined, request: AggregateQuery, pay?: AggregatePayment) {
  return aggregatePage(db, { from: userId === undefined ? everyTodo : (executor) => todosOfUser(executor, userId), request, pay })
}

const todosOfUser = (executor: Db, userId: number) => executor.selectFrom('todos').where('user_id', '=', userId)
const everyTodo = (executor: Db) => executor.selectFrom('todos')

/** Every todo, across users, in the query's order; the query's filters narrow it (`userId` to one user's, by the (user_id, id) index). */
export function listTodos(db: Db, query: CollectionQuery): Promise<RowPage<TodoRow>> {
  return listPage<TodoRow>(db, {
    from: (executor) => executor.selectFrom('todos'),
    select: (q) => q.selectAll(),
    query,
    shape: 'todos',
  })
}

/** How many todos each user has, by user id, each counted up to `atMost` (by the (user_id, id) index), in one statement. */
export function countTodosOfUsers(db: Db, userIds: readonly number[], atMost: number): Promise<Map<number, number>> {
  if (userIds.length === 0) return Promise.resolve(new Map<number, number>())
  return countPerParent(
    db.selectFrom('users as parent').where('parent.id', 'in', userIds),
    (eb) => eb.selectFrom('todos as t').whereRef('t.user_id', '=', 'parent.id'),
    atMost,
  )
}

/** The same window of each user's todos, in the window's id order, in one statement (see listPostsOfUsers). */
export function listTodosOfUsers(db: Db, userIds: readonly number[], window: ListWindow): Promise<TodoRow[]> {
  if (userIds.length === 0) return Promise.resolve([])
  return listWindowPerParent(db, db.selectFrom('users as parent'), { table: 'todos', parentColumn: 'user_id', ...window })
    .selectAll('todos')
    .where('parent.id', 'in', userIds)
    .execute() as Promise<TodoRow[]>
}

export const insertTodo: (db: Db, row: NewTodoRow) => Promise<TodoRow> = rowInsert('todos')

/** Many todos in one statement, as their rows (RETURNING's order is the store's: see inInsertOrder). */
export function insertTodos(db: Db, rows: readonly NewTodoRow[]): Promise<TodoRow[]> {
  return db.insertInto('todos').values(rows).returningAll().execute()
}

export const updateTodo: (db: Db, id: number, changes: TodoRowChanges) => Promise<TodoRow> = rowUpdate('todos')

/** The todo's row with `changes` set, where one of them is new to it and it holds `matched` (rowUpdateIfChanged); undefined when nothing was written. */
export const updateTodoIfChanged: (
  db: Db,
  id: number,
  changes: TodoRowChanges,
  conditions: RowChangeConditions<TodoRowChanges>,
) => Promise<TodoRow | undefined> = rowUpdateIfChanged('todos')

export async function deleteTodo(db: Db, id: number): Promise<void> {
  await db.deleteFrom('todos').where('id', '=', id).execute()
}
