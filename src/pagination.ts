// Page-based pagination as the services see it: which slice to read, and how many there are.

export const DEFAULT_PAGE_LIMIT = 20
export const MAX_PAGE_LIMIT = 100

export interface PageRequest {
  /** 1-based page number. */
  readonly page: number
  /** Items per page, already capped at MAX_PAGE_LIMIT. */
  readonly limit: number
}

export interface Page<T> {
  readonly items: T[]
  readonly total: number
  readonly page: number
  readonly limit: number
}

/** The page asked for; a limit above the maximum is capped rather than refused. */
export function toPageRequest(query: { page?: number | undefined; limit?: number | undefined }): PageRequest {
  return { page: query.page ?? 1, limit: Math.min(query.limit ?? DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT) }
}

export const offsetOf = (page: PageRequest): number => (page.page - 1) * page.limit
