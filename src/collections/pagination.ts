// Page sizes, for every collection and every mode.

export const DEFAULT_PAGE_LIMIT = 20
/** Larger limits are capped to this, not refused; meta.pagination.limit says the effective value. */
export const MAX_PAGE_LIMIT = 100
/**
 * Pages by offset reach this many items and no further (`page × limit` at most this): an OFFSET
 * reads and throws away every row before the page, so a deep page costs what the rows above it
 * cost (page 2,000 of 100 under an unindexed sort: about 1 s on 200,000 users). Keyset pages
 * (`cursor`) cost the same at any depth and have no such bound.
 */
export const MAX_OFFSET_ITEMS = 10_000

/** The refusal of a page past MAX_OFFSET_ITEMS, the same words on REST and GraphQL. */
export const pastOffsetWindow = (limit: number, further = 'page further with cursor (the nextCursor of a page), which has no such bound'): string =>
  `must keep page × limit at most ${MAX_OFFSET_ITEMS} (page ${Math.floor(MAX_OFFSET_ITEMS / limit)} at limit ${limit}); ${further}`

/**
 * A slice of a nested list (a user's posts inside a GraphQL answer, the comments a REST answer
 * embeds): the `page`-th run of `limit` items in id order, for many parents in one statement.
 */
export interface ListWindow {
  readonly limit: number
  /** Items to skip: offsetOf(page, limit). */
  readonly offset: number
  /** Id order: 'desc' for the newest first (REST's embedded lists). @default 'asc' */
  readonly order?: 'asc' | 'desc'
}

/** How many items come before the 1-based `page` of `limit` items. */
export const offsetOf = (page: number, limit: number): number => (page - 1) * limit
