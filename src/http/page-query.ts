// The query string of a collection GET: page and limit. Unknown parameters are refused (400).
import { Type } from 'typebox'
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../pagination.js'

export const PageQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000, description: 'Page number, from 1.' })),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: `Items per page (default ${DEFAULT_PAGE_LIMIT}); values above ${MAX_PAGE_LIMIT} are capped.`,
      }),
    ),
  },
  { additionalProperties: false },
)
