// Page sizes, for every collection and every mode.

export const DEFAULT_PAGE_LIMIT = 20
/** Larger limits are capped to this, not refused; meta.pagination.limit says the effective value. */
export const MAX_PAGE_LIMIT = 100

/**
 * A slice of a nested list (a user's posts inside a GraphQL answer): the `page`-th run of `limit`
 * items in id order, for many parents in one statement.
 */
export interface ListWindow {
  readonly limit: number
  /** Items to skip: (page - 1) * limit. */
  readonly offset: number
}
