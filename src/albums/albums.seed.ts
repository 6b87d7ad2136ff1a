// The generated albums: spread over the users in blocks, as JSONPlaceholder's ten to a user.
import { AppError } from '../errors.js'
import { SEED_ACTIVITY, SEED_EPOCH, words } from '../fake-data.js'
import { highestId, idsAfter, inBlocks, type SeedSection } from '../seed-section.js'

export const albumsSeed: SeedSection = {
  demo: 100,
  help: 'albums to add, spread over the new users',
  async write(count, { db, random, inBatches, written }) {
    const owners = written('users')
    if (count > 0 && owners.length === 0) throw new AppError('BAD_REQUEST', 'There are no users to own the albums')
    const before = await highestId(db, 'albums')
    await inBatches(
      count,
      (i) => {
        const at = new Date(random.int(SEED_ACTIVITY, SEED_EPOCH)).toISOString()
        return { user_id: inBlocks(owners, i, count), title: words(random, 2, 6), created_at: at, updated_at: at }
      },
      async (rows) => {
        await db.insertInto('albums').values(rows).execute()
      },
    )
    // The photos' seed puts its photos in these.
    return idsAfter(db, 'albums', before)
  },
}
