// Fills the database with fake data in batched multi-row inserts, all in one transaction: a seed
// either lands whole or not at all. Used for the demo data on first start and by `threadline seed`.
import type { Db } from '../db/create-database.js'
import { dialectFactsOf } from '../db/dialect-facts.js'
import { AppError } from '../errors.js'
import { countAdmins } from '../users/users.repository.js'
import { createRandom, fakeEmail, fakeName, paragraph, type Random, sentence, words } from './fake-data.js'
import { MAX_BATCH_SIZE, type SeedCounts } from './seed-counts.js'

export { DEMO_COUNTS, MAX_BATCH_SIZE, type SeedCounts } from './seed-counts.js'

/** From this many rows, a seed's search indexing is done once at the end (dialect-facts bulkLoad). */
const BULK_LOAD_ROWS = 10_000

export interface SeedOptions extends SeedCounts {
  /** Rows per INSERT statement. @default 500 */
  batchSize?: number
  /** PRNG seed: the same seed on an empty database gives the same data. @default 1 */
  seed?: number
  /** Called after every batch with the rows written so far and the rows to write in all. */
  onProgress?: (done: number, total: number) => void
}

/**
 * Demo timestamps lie in the two years before this instant, so the data is the same every day:
 * users join in the first month, posts follow, comments follow their post.
 */
const EPOCH = Date.parse('2026-01-01T00:00:00.000Z')
const TWO_YEARS_MS = 2 * 365 * 86_400_000
const DAY_MS = 86_400_000
const FIRST_POST = EPOCH - TWO_YEARS_MS + 31 * DAY_MS

export async function seedDatabase(db: Db, options: SeedOptions): Promise<SeedCounts> {
  const { seed = 1, onProgress } = options
  const batchSize = Math.min(options.batchSize ?? 500, MAX_BATCH_SIZE)
  const random = createRandom(seed)
  const total = options.users + options.posts + options.comments + options.todos
  let done = 0
  const progress = (rows: number) => {
    done += rows
    onProgress?.(done, total)
  }

  await db.transaction().execute(async (trx) => {
    const fill = async () => {
      const userIds = await seedUsers(trx, options.users, random, batchSize, progress)
      if (userIds.length === 0 && total > 0) throw new AppError('BAD_REQUEST', 'There are no users to own the posts, comments or todos')
      const posts = await seedPosts(trx, options.posts, userIds, random, batchSize, progress)
      await seedComments(trx, options.comments, posts, userIds, random, batchSize, progress)
      await seedTodos(trx, options.todos, userIds, random, batchSize, progress)
    }
    // A large seed indexes its text for search once, at the end, rather than row by row.
    await (total >= BULK_LOAD_ROWS ? dialectFactsOf(trx).bulkLoad(trx, fill) : fill())
  })
  return { users: options.users, posts: options.posts, comments: options.comments, todos: options.todos }
}

type Progress = (rows: number) => void

async function inBatches<T>(count: number, batchSize: number, make: (i: number) => T, write: (rows: T[]) => Promise<void>, progress: Progress) {
  for (let start = 0; start < count; start += batchSize) {
    const rows: T[] = []
    for (let i = start; i < Math.min(start + batchSize, count); i++) rows.push(make(i))
    await write(rows)
    progress(rows.length)
  }
}

async function maxId(db: Db, table: 'users' | 'posts'): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.max<number | null>('id').as('max'))
    .executeTakeFirst()
  return Number(row?.max ?? 0)
}

async function idsAfter(db: Db, table: 'users' | 'posts', after: number): Promise<number[]> {
  const rows = await db.selectFrom(table).select('id').where('id', '>', after).orderBy('id').execute()
  return rows.map((row) => row.id)
}

/** Seeds users and returns the ids that own what follows: the new users, or all users if none are new. */
async function seedUsers(db: Db, count: number, random: Random, batchSize: number, progress: Progress) {
  const before = await maxId(db, 'users')
  const needsAdmin = (await countAdmins(db)) === 0
  await inBatches(
    count,
    batchSize,
    (i) => {
      const n = before + i + 1
      const name = fakeName(random, n)
      const at = new Date(EPOCH - TWO_YEARS_MS + random.int(0, 30) * DAY_MS).toISOString()
      return {
        name,
        email: fakeEmail(name, n),
        age: random.int(18, 80),
        avatar: `https://api.dicebear.com/9.x/initials/svg?seed=${encodeURIComponent(name)}`,
        role: needsAdmin && i === 0 ? ('admin' as const) : ('user' as const),
        password_hash: null,
        created_at: at,
        updated_at: at,
      }
    },
    async (rows) => {
      await db.insertInto('users').values(rows).execute()
    },
    progress,
  )
  return idsAfter(db, 'users', count > 0 ? before : 0)
}

async function seedPosts(db: Db, count: number, userIds: number[], random: Random, batchSize: number, progress: Progress) {
  const before = await maxId(db, 'posts')
  const createdAt: number[] = []
  const ownerIds: number[] = []
  const drafts: boolean[] = []
  await inBatches(
    count,
    batchSize,
    (i) => {
      const created = random.int(FIRST_POST, EPOCH)
      // In blocks, as in the fake APIs: the first user's posts first.
      const owner = userIds[Math.floor((i * userIds.length) / count)] as number
      const published = random.next() < 0.9
      createdAt.push(created)
      ownerIds.push(owner)
      drafts.push(!published)
      const at = new Date(created).toISOString()
      return {
        user_id: owner,
        title: words(random, 3, 8),
        content: paragraph(random, random.int(2, 6)),
        status: published ? ('published' as const) : ('draft' as const),
        published_at: published ? at : null,
        created_at: at,
        updated_at: at,
      }
    },
    async (rows) => {
      await db.insertInto('posts').values(rows).execute()
    },
    progress,
  )
  const ids = await idsAfter(db, 'posts', before)
  return { ids, createdAt, ownerIds, drafts }
}

async function seedComments(
  db: Db,
  count: number,
  posts: { ids: number[]; createdAt: number[]; ownerIds: number[]; drafts: boolean[] },
  userIds: number[],
  random: Random,
  batchSize: number,
  progress: Progress,
) {
  if (count > 0 && posts.ids.length === 0) throw new AppError('BAD_REQUEST', 'There are no new posts to comment on')
  await inBatches(
    count,
    batchSize,
    (i) => {
      const p = Math.floor((i * posts.ids.length) / count)
      const at = new Date(Math.min(EPOCH, (posts.createdAt[p] as number) + random.int(1, 30 * 24 * 60) * 60_000)).toISOString()
      // Only the owner sees a draft, so only the owner comments on one.
      const author = posts.drafts[p] ? (posts.ownerIds[p] as number) : random.pick(userIds)
      return {
        post_id: posts.ids[p] as number,
        author_id: author,
        content: sentence(random) + (random.next() < 0.5 ? ` ${sentence(random)}` : ''),
        created_at: at,
        updated_at: at,
      }
    },
    async (rows) => {
      await db.insertInto('comments').values(rows).execute()
    },
    progress,
  )
}

async function seedTodos(db: Db, count: number, userIds: number[], random: Random, batchSize: number, progress: Progress) {
  await inBatches(
    count,
    batchSize,
    (i) => {
      const at = new Date(random.int(FIRST_POST, EPOCH)).toISOString()
      return {
        user_id: userIds[Math.floor((i * userIds.length) / count)] as number,
        text: words(random, 2, 7),
        completed: random.next() < 0.45 ? 1 : 0,
        created_at: at,
        updated_at: at,
      }
    },
    async (rows) => {
      await db.insertInto('todos').values(rows).execute()
    },
    progress,
  )
}
