// The rules for todos: everyone reads them; only their owner or an admin writes.
import { type Caller, ownerToMatch, requireOwnerOrAdmin } from '../core/caller.js'
import { type CollectionPage, groupByParent, toCollectionPage } from '../collections/collection-page.js'
import type { AggregatePayment, AggregateQuery, AggregateResult } from '../collections/aggregation.js'
import type { CollectionQuery } from '../collections/collection-query.js'
import type { Db } from '../db/create-database.js'
import { toIsoTimestamp } from '../db/tables.js'
import type { TodoRow, TodoRowChanges } from './todos.table.js'
import { notFound } from '../errors.js'
import { type IdInput, parseId } from '../core/ids.js'
import type { ListWindow } from '../collections/pagination.js'
import { checkPrecondition, type WriteOptions } from '../core/preconditions.js'
import { loadUser, loadUserId, pageOfUser } from '../users/users.public.js'
import * as repo from './todos.repository.js'
import type { CreateTodoInput, Todo, UpdateTodoInput } from './todos.schemas.js'
import { singleStatementWrite, writeTransaction } from '../db/write-transaction.js'
import { inInsertOrder, insertInChunks } from '../db/bulk-insert.js'
import { parentsOfItems } from '../core/bulk.js'

export type TodosService = ReturnType<typeof createTodosService>

export function createTodosService({ db }: { db: Db }) {
  return {
    async list(_caller: Caller | null, userId: IdInput, query: CollectionQuery): Promise<CollectionPage<Todo>> {
      return toCollectionPage(query, await pageOfUser(db, userId, (ownerId) => repo.listTodosOfUser(db, ownerId, query)), toTodo)
    },

    /** Every todo, across users (anyone reads todos). The query's filters narrow it (`userId` to one user's). */
    async listAll(_caller: Caller | null, query: CollectionQuery): Promise<CollectionPage<Todo>> {
      return toCollectionPage(query, await repo.listTodos(db, query), toTodo)
    },

    /** The todos `list` (with `userId`) or `listAll` would list, aggregated as asked; `pay` is charged for the rows read. */
    async aggregate(_caller: Caller | null, userId: IdInput | undefined, request: AggregateQuery, pay?: AggregatePayment): Promise<AggregateResult> {
      return repo.aggregateTodos(db, userId === undefined ? undefined : await loadUserId(db, userId), request, pay)
    },

    /** `userId` undefined: the todo is found by its id alone. */
    async get(_caller: Caller | null, userId: IdInput | undefined, todoId: IdInput): Promise<Todo> {
      return toTodo(await loadTodo(db, userId, todoId))
    },

    /** The same window of each user's todos, by user id, in one read. */
    async listOfUsers(_caller: Caller | null, userIds: readonly number[], window: ListWindow): Promise<Map<number, Todo[]>> {
      return groupByParent(await repo.listTodosOfUsers(db, userIds, window), (row) => row.user_id, toTodo)
    },

    /** How many todos each user has, by user id, each counted up to `atMost`, in one read. */
    async countOfUsers(_caller: Caller | null, userIds: readonly number[], atMost: number): Promise<Map<number, number>> {
      return repo.countTodosOfUsers(db, userIds, atMost)
    },

    async create(caller: Caller | null, userId: IdInput, input: CreateTodoInput): Promise<Todo> {
      return writeTransaction(db, async (trx) => {
        const owner = await loadOwner(trx, caller, userId)
        return toTodo(await repo.insertTodo(trx, newTodoRow(owner.id, input, new Date().toISOString())))
      })
    },

    /** A bulk write: every todo, each for its own owner, checked as create checks one, in one transaction, all or nothing, in the order given. */
    async createMany(caller: Caller | null, items: readonly NewTodo[]): Promise<Todo[]> {
      return writeTransaction(db, async (trx) => {
        const owners = await parentsOfItems(
          items.map((item) => item.userId),
          (userId) => loadOwner(trx, caller, userId),
        )
        const now = new Date().toISOString()
        const rows = items.map((item, i) => newTodoRow(owners[i]!.id, item.input, now))
        return (await insertInChunks(rows, async (chunk) => inInsertOrder(await repo.insertTodos(trx, chunk)))).map(toTodo)
      })
    },

    /** `userId` undefined: the todo is found by its id alone. */
    async update(caller: Caller | null, userId: IdInput | undefined, todoId: IdInput, input: UpdateTodoInput, options?: WriteOptions<Todo>): Promise<Todo> {
      // No If-Match to check: one statement, its owner a condition, made only if a field changes;
      // when it wrote nothing, the todo is read below to tell why.
      const id = parseId(todoId)
      const matched = options?.ifMatch === undefined ? ownerToMatch(caller, userId) : undefined
      if (id !== undefined && matched !== undefined) {
        const changes: TodoRowChanges = { text: input.text, completed: input.completed === undefined ? undefined : input.completed ? 1 : 0 }
        const stamp = { updated_at: new Date().toISOString() }
        const written = await singleStatementWrite(db, (trx) => repo.updateTodoIfChanged(trx, id, changes, { stamp, matched }))
        if (written !== undefined) return toTodo(written)
      }
      return writeTransaction(db, async (trx) => {
        const todo = await loadTodo(trx, userId, todoId)
        requireOwnerOrAdmin(caller, todo.user_id, 'change this todo')
        checkPrecondition(options, () => toTodo(todo))
        const changes: TodoRowChanges = {}
        if (input.text !== undefined && input.text !== todo.text) changes.text = input.text
        if (input.completed !== undefined && input.completed !== Boolean(todo.completed)) changes.completed = input.completed ? 1 : 0
        if (Object.keys(changes).length === 0) return toTodo(todo)
        changes.updated_at = new Date().toISOString()
        return toTodo(await repo.updateTodo(trx, todo.id, changes))
      })
    },

    async remove(caller: Caller | null, userId: IdInput | undefined, todoId: IdInput, options?: WriteOptions<Todo>): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const todo = await loadTodo(trx, userId, todoId)
        requireOwnerOrAdmin(caller, todo.user_id, 'delete this todo')
        checkPrecondition(options, () => toTodo(todo))
        await repo.deleteTodo(trx, todo.id)
      })
    },
  }
}

/** The todo at /users/{userId}/todos/{todoId} (or with this id, when `userId` is undefined), or NOT_FOUND. */
async function loadTodo(db: Db, userId: IdInput | undefined, todoId: IdInput): Promise<TodoRow> {
  const id = parseId(todoId)
  const todo = id === undefined ? undefined : await repo.findTodoById(db, id)
  if (todo === undefined || (userId !== undefined && todo.user_id !== parseId(userId))) throw notFound('Todo')
  return todo
}

export function toTodo(row: TodoRow): Todo {
  return {
    id: row.id,
    userId: row.user_id,
    text: row.text,
    completed: Boolean(row.completed),
    createdAt: toIsoTimestamp(row.created_at),
    updatedAt: toIsoTimestamp(row.updated_at),
  }
}

/** One todo of a bulk write, and its owner. */
export interface NewTodo {
  readonly userId: IdInput
  readonly input: CreateTodoInput
}

/** The owner of todos to be written: the user, when the caller may write their todos (checked in the insert's transaction). */
async function loadOwner(trx: Db, caller: Caller | null, userId: IdInput) {
  const owner = await loadUser(trx, userId)
  requireOwnerOrAdmin(caller, owner.id, "write this user's todos")
  return owner
}

/** A new todo's row: not completed. */
const newTodoRow = (userId: number, input: CreateTodoInput, now: string) => ({
  user_id: userId,
  text: input.text,
  completed: 0 as const,
  created_at: now,
  updated_at: now,
})
