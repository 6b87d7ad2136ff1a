// A page of a collection: its rows as the store reads them (src/db/list-page.ts), and as services
// return it: the items, where they sit in the whole, and the cursors to the pages around them.
import type { CollectionQuery } from './collection-query.js'

/** A page of rows as the store reads them, before the service maps them to items. */
export interface RowPage<Row> {
  readonly rows: Row[]
  /** More rows follow this page in the query's order. */
  readonly hasMore: boolean
  /** Rows come before this page. */
  readonly hasPrevious: boolean
  /** Rows matching the query, when asked for; at most MAX_COUNTED_TOTAL (src/db/list-page.ts). */
  readonly total: number | undefined
  /** More than MAX_COUNTED_TOTAL rows match: `total` says MAX_COUNTED_TOTAL, and counting stopped there. */
  readonly totalCapped: boolean
  readonly nextCursor: string | null
  readonly prevCursor: string | null
}

export interface CollectionPage<T> {
  readonly items: T[]
  readonly query: CollectionQuery
  readonly hasMore: boolean
  readonly hasPrevious: boolean
  readonly total: number | undefined
  /** More rows match than `total` says (counting stopped at MAX_COUNTED_TOTAL). */
  readonly totalCapped: boolean
  readonly nextCursor: string | null
  readonly prevCursor: string | null
}

export function toCollectionPage<Row, T>(query: CollectionQuery, page: RowPage<Row>, toItem: (row: Row) => T): CollectionPage<T> {
  return {
    items: page.rows.map(toItem),
    query,
    hasMore: page.hasMore,
    hasPrevious: page.hasPrevious,
    total: page.total,
    totalCapped: page.totalCapped,
    nextCursor: page.nextCursor,
    prevCursor: page.prevCursor,
  }
}

/** Rows of many parents' lists, mapped and grouped by parent id (in the rows' order). */
export function groupByParent<Row, T>(rows: readonly Row[], parentOf: (row: Row) => number, toItem: (row: Row) => T): Map<number, T[]> {
  const groups = new Map<number, T[]>()
  for (const row of rows) {
    const parent = parentOf(row)
    const group = groups.get(parent)
    if (group === undefined) groups.set(parent, [toItem(row)])
    else group.push(toItem(row))
  }
  return groups
}
