// The generated todos: spread over the users in blocks, a little under half done.
import { AppError } from '../errors.js'
import { SEED_ACTIVITY, SEED_EPOCH, words } from '../fake-data.js'
import { inBlocks, type SeedSection } from '../seed-section.js'

export const todosSeed: SeedSection = {
  demo: 200,
  help: 'todos to add, spread over the new users',
  async write(count, { db, random, inBatches, written }) {
    const owners = written('users')
    if (count > 0 && owners.length === 0) throw new AppError('BAD_REQUEST', 'There are no users to own the todos')
    await inBatches(
      count,
      (i) => {
        const at = new Date(random.int(SEED_ACTIVITY, SEED_EPOCH)).toISOString()
        return {
          user_id: inBlocks(owners, i, count),
          text: words(random, 2, 7),
          completed: random.next() < 0.45 ? 1 : 0,
          created_at: at,
          updated_at: at,
        }
      },
      async (rows) => {
        await db.insertInto('todos').values(rows).execute()
      },
    )
    return []
  },
}
