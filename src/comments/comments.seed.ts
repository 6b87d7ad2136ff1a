// The generated comments: spread over the new posts in blocks, each a while after its post, by any
// of the new users; a draft's only by its owner, who alone sees it.
import { AppError } from '../errors.js'
import { SEED_EPOCH, sentence } from '../fake-data.js'
import { inBlocks, type SeedSection } from '../seed-section.js'

export const commentsSeed: SeedSection = {
  demo: 500,
  help: 'comments to add, spread over the new posts',
  async write(count, { db, random, inBatches, written }) {
    const postIds = written('posts')
    if (count > 0 && postIds.length === 0) throw new AppError('BAD_REQUEST', 'There are no new posts to comment on')
    const authors = written('users')
    const posts = new Map<number, { owner: number; createdAt: number; draft: boolean }>()
    if (count > 0) {
      const rows = await db
        .selectFrom('posts')
        .select(['id', 'user_id', 'created_at', 'status'])
        .where('id', '>=', postIds[0] as number)
        .where('id', '<=', postIds.at(-1) as number)
        .execute()
      for (const row of rows) posts.set(row.id, { owner: row.user_id, createdAt: new Date(row.created_at).getTime(), draft: row.status === 'draft' })
    }
    await inBatches(
      count,
      (i) => {
        const postId = inBlocks(postIds, i, count)
        const post = posts.get(postId) as { owner: number; createdAt: number; draft: boolean }
        const at = new Date(Math.min(SEED_EPOCH, post.createdAt + random.int(1, 30 * 24 * 60) * 60_000)).toISOString()
        return {
          post_id: postId,
          author_id: post.draft ? post.owner : random.pick(authors),
          content: sentence(random) + (random.next() < 0.5 ? ` ${sentence(random)}` : ''),
          created_at: at,
          updated_at: at,
        }
      },
      async (rows) => {
        await db.insertInto('comments').values(rows).execute()
      },
    )
    return []
  },
}
