// Which posts a reader sees, as SQL: every published post, and the drafts of their own (or all, for
// an admin). Published (posts.public.ts) because the comments feature joins posts with the same
// rule (a comment on a draft is as hidden as the draft); it is the one piece of posts' SQL another
// feature uses, so it lives here rather than in the repository.
import { type Expression, type SqlBool, sql } from 'kysely'

/** Which drafts a reader sees besides every published post: all (an admin), their own, or none. */
export interface DraftVisibility {
  readonly allDrafts: boolean
  readonly ownerId: number | null
}

/** What a caller who is not signed in sees: published posts only (the landing page counts these). */
export const ANONYMOUS_VISIBILITY: DraftVisibility = { allDrafts: false, ownerId: null }

/**
 * Published posts, and the drafts this reader may see (`table` names the posts table or its alias).
 * Written as "not a draft" (a post is a draft or published: the table's check): no index serves
 * `<>`, so the planner reads a list in the order its sort's index gives and skips the drafts, where
 * `status = 'published'` would have SQLite seek posts_status_idx and sort every published post
 * (test/db/list-plans.test.ts). 'draft' is written into the SQL: a list whose statement holds
 * no value of its own is compiled once (listPage's `shape`).
 */
export function visible(table: string, visibility: DraftVisibility): Expression<SqlBool> {
  if (visibility.allDrafts) return sql<SqlBool>`1 = 1`
  const published = sql<SqlBool>`${sql.ref(`${table}.status`)} <> ${sql.lit('draft')}`
  if (visibility.ownerId === null) return published
  return sql<SqlBool>`(${published} or ${sql.ref(`${table}.user_id`)} = ${visibility.ownerId})`
}

/** The name of a visibility's rule as SQL: what a list's `shape` tells apart (a reader's own drafts name their owner as a value). */
export const visibilityShape = (visibility: DraftVisibility): string => (visibility.allDrafts ? 'all' : visibility.ownerId === null ? 'published' : 'own')
