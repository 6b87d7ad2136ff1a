// Page sizes, for every collection and every mode.

export const DEFAULT_PAGE_LIMIT = 20
/** Larger limits are capped to this, not refused; meta.pagination.limit says the effective value. */
export const MAX_PAGE_LIMIT = 100
