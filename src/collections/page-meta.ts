// Where a page sits in its collection, in figures both transports word from: REST's
// meta.pagination and GraphQL's pageInfo are this, each in its own vocabulary and per API version.
import type { CollectionPage } from './collection-page.js'

export interface PageMeta {
  /** In page mode only. */
  readonly page?: number
  readonly limit: number
  /** When counted (capped at MAX_COUNTED_TOTAL). */
  readonly total?: number
  /** When counted: more items match than total says. */
  readonly totalCapped?: boolean
  /** In page mode when counted: the last page, which a capped total keeps inside the offset window. */
  readonly pages?: number
  readonly nextCursor: string | null
  readonly hasMore: boolean
}

export function pageMetaOf(page: Omit<CollectionPage<unknown>, 'items'>): PageMeta {
  const { query, total } = page
  const inPages = query.mode === 'page'
  return {
    ...(inPages ? { page: query.page } : {}),
    limit: query.limit,
    ...(total === undefined ? {} : { total, totalCapped: page.totalCapped }),
    ...(inPages && total !== undefined ? { pages: Math.ceil(total / query.limit) } : {}),
    nextCursor: page.nextCursor,
    hasMore: page.hasMore,
  }
}
