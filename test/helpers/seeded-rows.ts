// Rows for the features a test made none of by hand, from their own seed sections
// (src/seed-section.ts), so that a test going over every route or collection needs no line for a new
// feature; and the ids a nested path names, read from those rows.
import { sql } from 'kysely'
import { DATA_SECTIONS } from '../../src/cli/data-sections.js'
import type { Db } from '../../src/db/create-database.js'
import { DEMO_COUNTS, seedDatabase } from '../../src/seed/seed-database.js'

/**
 * Seeds a tenth of the demo's rows (at most 50) of each feature whose table is empty, and of the
 * sections it references (src/data-section.ts), parents and theirs: a seed section puts its rows
 * under the rows the sections before it wrote in the same seed. The rows a test made by hand stay.
 */
export async function seedEmptyFeatures(db: Db): Promise<void> {
  const references = new Map(DATA_SECTIONS.map(({ name, references = [] }) => [name, references]))
  const wanted = new Set<string>()
  const want = (name: string) => {
    if (wanted.has(name) || !(name in DEMO_COUNTS)) return
    wanted.add(name)
    for (const parent of references.get(name) ?? []) want(parent)
  }
  for (const name of Object.keys(DEMO_COUNTS)) {
    // A data section's name is its table's; a seeded feature's is its section's.
    const { rows } = await sql<{ id: number }>`select id from ${sql.table(name)} limit 1`.execute(db)
    if (rows.length === 0) want(name)
  }
  await seedDatabase(
    db,
    Object.fromEntries(Object.entries(DEMO_COUNTS).map(([name, demo]) => [name, wanted.has(name) ? Math.min(50, Math.ceil(demo / 10)) : 0])),
  )
}

/**
 * The ids of a route's path parameters (`/users/:userId/albums/:albumId/photos`): the first row of
 * the last collection the path names, then up the path, each parent named by its child's column
 * (`:albumId` by a photo's `album_id`). A parameter names a row of the collection before it.
 */
export async function idsForPath(db: Db, path: string): Promise<Record<string, number>> {
  const segments = path.split('/').filter((segment) => segment !== '')
  const ids: Record<string, number> = {}
  let child: Record<string, unknown> | undefined
  for (let i = segments.length - 1; i >= 0; i--) {
    const segment = segments[i]!
    const parameter = segment.startsWith(':') ? segment.slice(1) : undefined
    const table = parameter === undefined ? segment : segments[--i]!
    const id = parameter === undefined || child === undefined ? undefined : child[parameter.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]
    const { rows } = await sql<
      Record<string, unknown>
    >`select * from ${sql.table(table)} ${id === undefined ? sql`` : sql`where id = ${id}`} order by id limit 1`.execute(db)
    child = rows[0]
    if (child === undefined) throw new Error(`no row of ${table} for ${path}`)
    if (parameter !== undefined) ids[parameter] = Number(child.id)
  }
  return ids
}
