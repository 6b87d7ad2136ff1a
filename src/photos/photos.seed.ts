// The generated photos: spread over the new albums in blocks (fifty to an album in the demo, as
// JSONPlaceholder has them), each a while after its album. Their images are Lorem Picsum's, by a
// seed word: the same number gives the same picture, at 600×600 and as a 150×150 thumbnail.
import { AppError } from '../errors.js'
import { SEED_EPOCH, words } from '../fake-data.js'
import { highestId, inBlocks, type SeedSection } from '../seed-section.js'

/** The image of the n-th generated photo, and its thumbnail: the same picture in two sizes. */
export const seededImage = (n: number) => ({
  url: `https://picsum.photos/seed/${n}/600/600`,
  thumbnail_url: `https://picsum.photos/seed/${n}/150/150`,
})

export const photosSeed: SeedSection = {
  demo: 5000,
  help: 'photos to add, spread over the new albums',
  async write(count, { db, random, inBatches, written }) {
    const albumIds = written('albums')
    if (count > 0 && albumIds.length === 0) throw new AppError('BAD_REQUEST', 'There are no new albums to put the photos in')
    const madeAt = new Map<number, number>()
    if (count > 0) {
      const rows = await db
        .selectFrom('albums')
        .select(['id', 'created_at'])
        .where('id', '>=', albumIds[0] as number)
        .where('id', '<=', albumIds.at(-1) as number)
        .execute()
      for (const row of rows) madeAt.set(row.id, new Date(row.created_at).getTime())
    }
    // Numbered after the photos already there: a second seed's pictures are new ones.
    const before = await highestId(db, 'photos')
    await inBatches(
      count,
      (i) => {
        const albumId = inBlocks(albumIds, i, count)
        const at = new Date(Math.min(SEED_EPOCH, (madeAt.get(albumId) as number) + random.int(1, 30 * 24 * 60) * 60_000)).toISOString()
        return { album_id: albumId, title: words(random, 2, 6), ...seededImage(before + i + 1), created_at: at, updated_at: at }
      },
      async (rows) => {
        await db.insertInto('photos').values(rows).execute()
      },
    )
    return []
  },
}
