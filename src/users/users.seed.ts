// The generated users: the demo's ten familiar names first, then made-up ones; the first user of a
// database without an admin is one.
import { DAY_MS, fakeEmail, fakeName, SEED_START } from '../fake-data.js'
import { highestId, idsAfter, type SeedSection } from '../seed-section.js'
import { countAdmins } from './users.repository.js'

export const usersSeed: SeedSection = {
  demo: 10,
  help: 'users to add',
  /** Returns the users what follows belongs to: the new ones, or every user when none is new. */
  async write(count, { db, random, inBatches }) {
    const before = await highestId(db, 'users')
    const needsAdmin = (await countAdmins(db)) === 0
    await inBatches(
      count,
      (i) => {
        const n = before + i + 1
        const name = fakeName(random, n)
        const at = new Date(SEED_START + random.int(0, 30) * DAY_MS).toISOString()
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
    )
    return idsAfter(db, 'users', count > 0 ? before : 0)
  },
}
