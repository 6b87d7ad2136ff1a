// What a statement changed, as the database handle tells it once the change is committed: the rows
// of a table (an UPDATE by id), rows added (an INSERT), any row of a table (an UPDATE by anything
// else, an upsert), or everything (a DELETE, whose foreign keys may cascade; a schema change; a raw
// statement that is not a read; another process's commit on SQLite). Read from the statement's
// Kysely node, so the services and repositories say nothing: a cache of answers
// (src/http/representation-cache.ts) keeps what a write did not touch.
//
// A change is told after the commit that makes it visible, never before: a reader that began after
// it was told reads the new rows. On PostgreSQL each write transaction also sends its changes to
// the other instances (NOTIFY, in the transaction, so they are delivered at its commit and only if
// it commits); each instance that keeps answers listens on a connection of its own.
import type { OperationNode, RootOperationNode } from 'kysely'

export type Change =
  /** Those rows of `table` changed in place (none added, none removed). */
  | { readonly kind: 'rows'; readonly table: string; readonly ids: readonly number[] }
  /** Rows were added to `table`; none that was there changed. */
  | { readonly kind: 'added'; readonly table: string }
  /** Any row of `table` may have changed (none removed). */
  | { readonly kind: 'table'; readonly table: string }
  /** Anything may have changed, rows removed included. */
  | { readonly kind: 'everything' }

export const EVERYTHING: Change = { kind: 'everything' }

/** Rows pinned by one UPDATE past which the change is told as the whole table's. */
const MAX_PINNED_ROWS = 100

/** Statements that change nothing, by their first word: reads and transaction steps run as raw SQL. */
const READ_ONLY_WORDS = new Set(['select', 'with', 'pragma', 'set', 'show', 'explain', 'savepoint', 'release', 'rollback', 'begin', 'commit'])

/** What running `node` changes; undefined for a read. */
export function changeOf(node: RootOperationNode, sql: string): Change | undefined {
  switch (node.kind) {
    case 'SelectQueryNode':
      return undefined
    case 'InsertQueryNode': {
      const table = tableName(node.into)
      if (table === undefined) return EVERYTHING
      const upsert = (node.onConflict !== undefined && node.onConflict.doNothing !== true) || node.onDuplicateKey !== undefined || node.replace === true
      return { kind: upsert ? 'table' : 'added', table }
    }
    case 'UpdateQueryNode': {
      const table = tableName(node.table)
      if (table === undefined) return EVERYTHING
      const ids = node.from === undefined && node.joins === undefined ? pinnedIds(node.where?.where) : undefined
      return ids === undefined || ids.length > MAX_PINNED_ROWS ? { kind: 'table', table } : { kind: 'rows', table, ids }
    }
    case 'RawNode':
      return READ_ONLY_WORDS.has(firstWord(sql)) ? undefined : EVERYTHING
    default:
      // DELETE (its foreign keys may cascade, or set columns elsewhere to null), MERGE, schema changes.
      return EVERYTHING
  }
}

const firstWord = (sql: string): string => /^\s*\(?\s*([a-z]+)/i.exec(sql)?.[1]?.toLowerCase() ?? ''

function tableName(node: OperationNode | undefined): string | undefined {
  if (node === undefined) return undefined
  if (node.kind === 'TableNode') return (node as OperationNode & { table: { identifier: { name: string } } }).table.identifier.name
  if (node.kind === 'AliasNode') return tableName((node as OperationNode & { node: OperationNode }).node)
  return undefined
}

/** The ids a WHERE pins the rows to (`id = v`, `id in (…)`, either under an AND), or undefined. */
function pinnedIds(node: OperationNode | undefined): number[] | undefined {
  if (node === undefined) return undefined
  if (node.kind === 'AndNode') {
    const { left, right } = node as OperationNode & { left: OperationNode; right: OperationNode }
    return pinnedIds(left) ?? pinnedIds(right)
  }
  if (node.kind === 'ParensNode') return pinnedIds((node as OperationNode & { node: OperationNode }).node)
  if (node.kind !== 'BinaryOperationNode') return undefined
  const { leftOperand, operator, rightOperand } = node as OperationNode & { leftOperand: OperationNode; operator: OperationNode; rightOperand: OperationNode }
  if (!isIdColumn(leftOperand) || operator.kind !== 'OperatorNode') return undefined
  const op = (operator as OperationNode & { operator: string }).operator
  if (op === '=' && rightOperand.kind === 'ValueNode') return idsOf([(rightOperand as OperationNode & { value: unknown }).value])
  if (op === 'in' && rightOperand.kind === 'PrimitiveValueListNode') return idsOf((rightOperand as OperationNode & { values: readonly unknown[] }).values)
  return undefined
}

function isIdColumn(node: OperationNode): boolean {
  const column = node.kind === 'ReferenceNode' ? (node as OperationNode & { column: OperationNode }).column : node
  return column.kind === 'ColumnNode' && (column as OperationNode & { column: { name: string } }).column.name === 'id'
}

function idsOf(values: readonly unknown[]): number[] | undefined {
  const ids: number[] = []
  for (const value of values) {
    const id = typeof value === 'number' ? value : typeof value === 'bigint' || typeof value === 'string' ? Number(value) : NaN
    if (!Number.isSafeInteger(id)) return undefined
    ids.push(id)
  }
  return ids
}

/** Changes as another instance receives them (a NOTIFY payload is at most 8000 bytes: past that, everything). */
export function encodeChanges(origin: string, changes: readonly Change[]): string {
  const text = `${origin} ${JSON.stringify(changes.map((c) => (c.kind === 'everything' ? ['*'] : c.kind === 'rows' ? [c.table, c.ids] : [c.table, c.kind])))}`
  return text.length <= 7900 ? text : `${origin} [["*"]]`
}

/** The origin and the changes of a payload made by encodeChanges; everything, for anything else. */
export function decodeChanges(payload: string): { origin: string; changes: Change[] } {
  const space = payload.indexOf(' ')
  const origin = space === -1 ? '' : payload.slice(0, space)
  try {
    const entries = JSON.parse(payload.slice(space + 1)) as unknown
    if (!Array.isArray(entries)) return { origin, changes: [EVERYTHING] }
    const changes = entries.map((entry: unknown): Change => {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string' || entry[0] === '*') return EVERYTHING
      const [table, what] = entry as [string, unknown]
      if (what === 'added' || what === 'table') return { kind: what, table }
      const ids = Array.isArray(what) ? idsOf(what) : undefined
      return ids === undefined ? EVERYTHING : { kind: 'rows', table, ids }
    })
    return { origin, changes }
  } catch {
    return { origin, changes: [EVERYTHING] }
  }
}

/** The changes of one transaction (or one statement outside any), merged by table. */
export class PendingChanges {
  private everything = false
  private readonly tables = new Map<string, { added: boolean; whole: boolean; ids: Set<number> }>()

  add(change: Change): void {
    if (this.everything) return
    if (change.kind === 'everything') {
      this.everything = true
      this.tables.clear()
      return
    }
    let table = this.tables.get(change.table)
    if (table === undefined) {
      table = { added: false, whole: false, ids: new Set() }
      this.tables.set(change.table, table)
    }
    if (change.kind === 'added') table.added = true
    else if (change.kind === 'table') table.whole = true
    else for (const id of change.ids) table.ids.add(id)
    if (table.ids.size > MAX_PINNED_ROWS) table.whole = true
  }

  get empty(): boolean {
    return !this.everything && this.tables.size === 0
  }

  /** The changes gathered, and a fresh start. */
  take(): Change[] {
    const changes: Change[] = []
    if (this.everything) changes.push(EVERYTHING)
    else {
      for (const [name, { added, whole, ids }] of this.tables) {
        if (whole) changes.push({ kind: 'table', table: name })
        else {
          if (ids.size > 0) changes.push({ kind: 'rows', table: name, ids: [...ids] })
          if (added) changes.push({ kind: 'added', table: name })
        }
      }
    }
    this.everything = false
    this.tables.clear()
    return changes
  }
}
