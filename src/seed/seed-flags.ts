// Written by `npm run generate` from the features' seed sections (src/<feature>/<feature>.seed.ts),
// in the order they are seeded: the flags of `threadline seed`, known without loading the features.
// test/seed/seed-database.test.ts fails when this file and the sections differ.

/** Each feature that generates rows: its name (the flag `--<name> <n>`), its rows in the demo data, the flag in words. */
export const SEED_FLAGS = [
  { name: 'users', demo: 10, help: 'users to add' },
  { name: 'posts', demo: 100, help: 'posts to add, spread over the new users' },
  { name: 'comments', demo: 500, help: 'comments to add, spread over the new posts' },
  { name: 'todos', demo: 200, help: 'todos to add, spread over the new users' },
  { name: 'albums', demo: 100, help: 'albums to add, spread over the new users' },
  { name: 'photos', demo: 5000, help: 'photos to add, spread over the new albums' },
] as const

/** The features that generate rows. */
export type SeededFeature = (typeof SEED_FLAGS)[number]['name']
