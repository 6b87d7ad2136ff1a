import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { renderSeedFlags, SEED_FLAGS_PATH } from '../../scripts/seed-flags.js'
import { loadConfig } from '../../src/config.js'
import { type Database, openDatabase } from '../../src/db/create-database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { DEMO_COUNTS, type SeedCounts, seedDatabase } from '../../src/seed/seed-database.js'
import { freshDatabase, type TestDatabase } from '../helpers/test-store.js'

const opened: { database: Database; store: TestDatabase }[] = []
afterEach(async () => {
  for (const { database, store } of opened.splice(0)) {
    await database.close()
    await store.drop()
  }
})

async function emptyDatabase(): Promise<Database> {
  const store = await freshDatabase()
  const database = openDatabase(loadConfig({ DATABASE_URL: store.url }).database)
  opened.push({ database, store })
  await migrateToLatest(database)
  return database
}

/** The tables the seed writes: those DEMO_COUNTS names. */
const TABLES = Object.keys(DEMO_COUNTS) as (keyof SeedCounts)[]

/** A count for each table the seed writes. */
const eachTable = (count: (table: keyof SeedCounts, demo: number) => number): SeedCounts =>
  Object.fromEntries(TABLES.map((table) => [table, count(table, DEMO_COUNTS[table])])) as unknown as SeedCounts

/** No row of any table: what a test that seeds a few tables starts from. */
const NONE = eachTable(() => 0)

/** The rows of each table the seed writes (the tables DEMO_COUNTS names). */
async function countRows(database: Database): Promise<SeedCounts> {
  const counts: Record<string, number> = {}
  for (const table of TABLES) {
    const { n } = await database.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow()
    counts[table] = Number(n)
  }
  return counts as unknown as SeedCounts
}

describe('seedDatabase', () => {
  it('writes the demo (DEMO_COUNTS rows of each table), one admin', async () => {
    const database = await emptyDatabase()
    await seedDatabase(database.db, DEMO_COUNTS)
    expect(await countRows(database)).toEqual(DEMO_COUNTS)
    const admins = await database.db.selectFrom('users').select('id').where('role', '=', 'admin').execute()
    expect(admins).toEqual([{ id: 1 }])
    const first = await database.db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow()
    expect(first).toMatchObject({ name: 'Leanne Graham', email: 'leanne.graham@example.com', password_hash: null })
    // In blocks, like the fake APIs: user 1 owns posts 1 to 10.
    const posts = await database.db.selectFrom('posts').select('id').where('user_id', '=', 1).orderBy('id').execute()
    expect(posts.map((p) => p.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  })

  it('keeps the demo plausible: posts after their author joined, comments after their post, all before 2026', async () => {
    const database = await emptyDatabase()
    await seedDatabase(database.db, DEMO_COUNTS)
    const { db } = database
    const latePosts = await db
      .selectFrom('posts')
      .innerJoin('users', 'users.id', 'posts.user_id')
      .select('posts.id')
      .whereRef('posts.created_at', '<', 'users.created_at')
      .execute()
    expect(latePosts).toEqual([])
    const badComments = await db
      .selectFrom('comments')
      .innerJoin('posts', 'posts.id', 'comments.post_id')
      .select('comments.id')
      .where((eb) =>
        eb.or([
          eb('comments.created_at', '<', eb.ref('posts.created_at')),
          eb('comments.created_at', '>', '2026-01-01T00:00:00.000Z'),
          eb.and([eb('posts.status', '=', 'draft'), eb('comments.author_id', '!=', eb.ref('posts.user_id'))]),
        ]),
      )
      .execute()
    expect(badComments).toEqual([])
  })

  it('gives the same data for the same seed', async () => {
    const a = await emptyDatabase()
    const b = await emptyDatabase()
    await seedDatabase(a.db, DEMO_COUNTS)
    await seedDatabase(b.db, DEMO_COUNTS)
    for (const table of TABLES) {
      const rowsA = await a.db.selectFrom(table).selectAll().orderBy('id').execute()
      const rowsB = await b.db.selectFrom(table).selectAll().orderBy('id').execute()
      expect(rowsA).toEqual(rowsB)
    }
  })

  it('adds to a database that has data, with new unique e-mail addresses', async () => {
    const database = await emptyDatabase()
    await seedDatabase(database.db, DEMO_COUNTS)
    // A quarter of the demo again, in batches that do not divide it.
    const added = eachTable((_table, demo) => Math.ceil(demo / 4))
    await seedDatabase(database.db, added, { batchSize: 7 })
    expect(await countRows(database)).toEqual(eachTable((table, demo) => demo + added[table]))
    const admins = await database.db.selectFrom('users').select('id').where('role', '=', 'admin').execute()
    expect(admins).toHaveLength(1)
  })

  it('reports progress after every batch, ending at the total', async () => {
    const database = await emptyDatabase()
    const seen: [number, number][] = []
    await seedDatabase(database.db, { ...NONE, users: 5, posts: 10 }, { batchSize: 4, onProgress: (d, t) => seen.push([d, t]) })
    expect(seen).toEqual([
      [4, 15],
      [5, 15],
      [9, 15],
      [13, 15],
      [15, 15],
    ])
  })

  it('writes nothing when it fails half way', async () => {
    const database = await emptyDatabase()
    await expect(seedDatabase(database.db, { ...NONE, posts: 10 })).rejects.toThrow(/no users/)
    await seedDatabase(database.db, { ...NONE, users: 3 })
    await expect(seedDatabase(database.db, { ...NONE, users: 2, comments: 5 })).rejects.toThrow(/no new posts/)
    expect(await countRows(database)).toEqual({ ...NONE, users: 3 })
  })
})

describe('the seed command flags (src/seed/seed-flags.ts)', () => {
  it("are the features' seed sections, in their order (npm run generate writes them)", () => {
    expect(readFileSync(SEED_FLAGS_PATH, 'utf8')).toBe(renderSeedFlags())
  })
})
