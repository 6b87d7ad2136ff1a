// The generated posts: spread over the users in blocks, nine in ten published.
import { AppError } from '../errors.js'
import { paragraph, SEED_ACTIVITY, SEED_EPOCH, words } from '../fake-data.js'
import { highestId, idsAfter, inBlocks, type SeedSection } from '../seed-section.js'

export const postsSeed: SeedSection = {
  demo: 100,
  help: 'posts to add, spread over the new users',
  async write(count, { db, random, inBatches, written }) {
    const owners = written('users')
    if (count > 0 && owners.length === 0) throw new AppError('BAD_REQUEST', 'There are no users to own the posts')
    const before = await highestId(db, 'posts')
    await inBatches(
      count,
      (i) => {
        const at = new Date(random.int(SEED_ACTIVITY, SEED_EPOCH)).toISOString()
        const published = random.next() < 0.9
        return {
          user_id: inBlocks(owners, i, count),
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
    )
    return idsAfter(db, 'posts', before)
  },
}
