// The seed's numbers, apart from the seed itself: the command line shows them in --help without
// loading the database code (src/main.ts).

export interface SeedCounts {
  users: number
  posts: number
  comments: number
  todos: number
}

/**
 * The most rows one INSERT may carry: SQLite binds at most 32,766 parameters per statement, and
 * a user row has 8 columns.
 */
export const MAX_BATCH_SIZE = 4000

/** The demo: the fake APIs' classic 10 users, 100 posts, 500 comments and 200 todos. */
export const DEMO_COUNTS: SeedCounts = { users: 10, posts: 100, comments: 500, todos: 200 }
